// The real opencode-acp plugin (dist/host/plugin.js, built by `npm run build`) in the real host:
// a second read of the same file turns the first read's result into a breadcrumb in every later
// request, while the second read stays intact.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResult, type ScriptedToolCall } from "./fake-model.js";
import { createWorkspace, pluginLoadErrors, REPO_ROOT, type Workspace } from "./harness.js";

const PLUGIN = path.join(REPO_ROOT, "dist", "host", "plugin.js");
const SECRET = "secret token: 42";

describe("opencode-acp in the real host: read supersedes read", () => {
  let ws: Workspace;
  beforeAll(async () => {
    if (!fs.existsSync(PLUGIN)) throw new Error(`${PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "notes.txt": `line one of notes\n${SECRET}\nline three\n`, "other.txt": "another file\n" },
      plugins: [PLUGIN],
      // The balanced preset batches edits of the already-sent prefix until they free 20K tokens
      // (prompt-cache economics); a few-line file never gets there. Commit every prune at once.
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 0 } }) },
    });
  });
  afterAll(async () => ws?.dispose());

  it("the first read becomes a breadcrumb in every request after the second read", async () => {
    const call = (id: string, name: string, args: Record<string, unknown>): ScriptedToolCall => ({ id, name, arguments: args });
    const notes = path.join(ws.projectDir, "notes.txt");
    ws.model.enqueue(
      { toolCalls: [call("call_read_1", "read", { filePath: notes })] },
      { toolCalls: [call("call_read_2", "read", { filePath: notes })] },
      { toolCalls: [call("call_bash_3", "bash", { command: "echo third", description: "Print third" })] },
      { toolCalls: [call("call_read_4", "read", { filePath: path.join(ws.projectDir, "other.txt") })] },
      { toolCalls: [call("call_bash_5", "bash", { command: "echo fifth", description: "Print fifth" })] },
      { text: "All done." },
    );
    const run = await ws.run("Please read notes.txt twice and look around", { timeoutMs: 120_000 });
    expect(run.timedOut, run.stderr.slice(-2000)).toBe(false);
    expect(run.exitCode, run.stderr.slice(-2000)).toBe(0);
    expect(pluginLoadErrors(run.stderr)).toEqual([]);
    expect(ws.model.exhaustedCount).toBe(0);
    expect(run.requests).toHaveLength(6);

    // Request 1 answers the first read: nothing supersedes it yet.
    const original = toolResult(run.requests[1], "call_read_1");
    expect(original).toContain(SECRET);

    // Requests 2..5 come after the second read.
    for (const [i, req] of run.requests.entries()) {
      if (i < 2) continue;
      const first = toolResult(req, "call_read_1");
      expect(first, `request ${i}: first read`).toContain("superseded");
      expect(first, `request ${i}: first read`).not.toContain(SECRET);
      expect(toolResult(req, "call_read_2"), `request ${i}: second read`).toBe(original);
    }
  }, 150_000);
});
