// OpenCode's own prune (config `compaction.prune: true`) with the plugin loaded. After a turn ends,
// the host sets `state.time.compacted` on completed tool outputs older than the last two user turns,
// beyond the newest 40K tokens of them, and stores that: the next request sends its placeholder
// "[Old tool result content cleared]" instead of those outputs. Here turn 1 reads seven ~11K-token
// files; in turn 2 the model discards the first by its id; after turn 3 the host marks the oldest
// reads compacted. In turn 4:
//   - the output the model had discarded keeps the plugin's breadcrumb, byte for byte as before
//     (a decision is sticky; the host's mark does not change what was already sent);
//   - the other marked outputs go out as the host's placeholder (the compacted-parts protect rule
//     leaves them alone), without the id tag they had;
//   - the newest reads are in full with their tags;
//   - the model citing a marked output's id gets the protected refusal naming compacted-parts.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pairingProblems, toolResult, type RecordedRequest } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, type ServeHandle, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const FILES = 7;
/** ~40 KB each: 800 lines of 50 characters, under the read tool's 50 KB and 2000-line limits. */
const file = (n: number) => Array.from({ length: 800 }, (_, i) => `file${n} line ${String(i + 1).padStart(4, "0")}: ${"x".repeat(26)}`).join("\n") + "\n";
const PLACEHOLDER = "[Old tool result content cleared]";
const idOf = (req: RecordedRequest, callID: string) => {
  const m = /\[acp:(t[0-9a-z]+)\]$/.exec(toolResult(req, callID) ?? "");
  if (!m) throw new Error(`request ${req.seq}: no id at the end of ${callID}`);
  return m[1];
};

/** Call ids of the session's tool parts the host marked compacted (`opencode db`; export output of this size can come back cut short). */
async function compactedCalls(ws: Workspace, sessionID: string): Promise<string[]> {
  const sql = `SELECT json_extract(data, '$.callID') AS call FROM part WHERE session_id = '${sessionID}' AND json_extract(data, '$.state.time.compacted') IS NOT NULL`;
  const proc = await ws.exec(["db", sql, "--format", "json"]);
  if (proc.exitCode !== 0) throw new Error(`opencode db failed (${proc.exitCode}): ${proc.stderr.slice(-2000)}`);
  return (JSON.parse(proc.stdout || "[]") as { call: string }[]).map((r) => r.call);
}

describe("OpenCode's native prune (time.compacted) with the plugin", () => {
  let ws: Workspace;
  let server: ServeHandle;
  let sessionID: string;
  const ids: string[] = [];
  let before: RecordedRequest;

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`f${i + 1}.txt`, file(i + 1)])),
      plugins: [ACP_PLUGIN],
      config: { compaction: { prune: true, auto: false } },
      contextLimit: 400_000,
      // verbose: no rule of ours clears these reads, so the host's mark is what shows
      globalFiles: { "acp.jsonc": JSON.stringify({ preset: "verbose", tool: true }) },
    });
    server = await ws.serve(); // one host process: the prune it forks after a turn completes
  }, RUN_TIMEOUT);
  afterAll(async () => {
    await server?.stop();
    await ws?.dispose();
  });

  it("turns 1-3: seven reads, the model discards the first, the host marks the oldest outputs compacted", async () => {
    const reads = Array.from({ length: FILES }, (_, i) => call(`call_f${i + 1}`, "read", { filePath: path.join(ws.projectDir, `f${i + 1}.txt`) }));
    ws.model.enqueue({ toolCalls: reads }, (req) => {
      for (let i = 1; i <= FILES; i++) ids.push(idOf(req, `call_f${i}`));
      return { text: "Read them all." };
    });
    const first = await ws.run("Read the seven files", { attach: server.url, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, first);
    sessionID = first.sessionID!;
    expect(ids).toHaveLength(FILES);

    ws.model.enqueue(() => ({ toolCalls: [call("call_p1", "context_prune", { action: "discard", targets: [ids[0]] })] }), { text: "Dropped the first." });
    expectCleanRun(ws, await ws.run("Drop the first file", { attach: server.url, session: sessionID, timeoutMs: RUN_TIMEOUT }));

    ws.model.enqueue({ text: "Nothing to do." });
    const third = await ws.run("Third turn", { attach: server.url, session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, third);
    before = third.requests[0];
    expect(toolResult(before, "call_f1")).toMatch(new RegExp(`→ discarded by the agent\\n\\[acp:${ids[0]}\\]$`));

    // the host's prune runs in the background after the turn: wait until it stored its marks
    let marked: string[] = [];
    for (let i = 0; i < 30 && marked.length === 0; i++) {
      marked = await compactedCalls(ws, sessionID);
      if (marked.length === 0) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(marked, "the host marked outputs compacted").toContain("call_f1");
    expect(marked).toContain("call_f2");
    expect(marked).not.toContain(`call_f${FILES}`); // the newest 40K tokens stay
  }, RUN_TIMEOUT * 2);

  it("turn 4: our breadcrumb stays byte-identical, the host's placeholder shows elsewhere, and the id of a marked output is refused", async () => {
    expect(sessionID).toBeDefined();
    let seen: RecordedRequest | undefined;
    ws.model.enqueue(
      (req) => {
        seen = req;
        return { toolCalls: [call("call_p2", "context_prune", { action: "discard", targets: [ids[1]] })] };
      },
      { text: "Done." },
    );
    const run = await ws.run("Fourth turn", { attach: server.url, session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    expect(run.requests).toHaveLength(2);
    const req = seen!;
    expect(pairingProblems(req)).toEqual([]);
    expect(toolResult(req, "call_f1")).toBe(toolResult(before, "call_f1")); // sticky across the host's mark
    expect(toolResult(req, "call_f2")).toBe(PLACEHOLDER);
    expect(toolResult(req, `call_f${FILES}`)).toBe(toolResult(before, `call_f${FILES}`));
    expect(toolResult(req, `call_f${FILES}`)).toContain(`file${FILES} line 0800`);
    expect(toolResult(req, `call_f${FILES}`)).toMatch(new RegExp(`\\[acp:${ids[FILES - 1]}\\]$`));
    const refusal = toolResult(run.requests[1], "call_p2")!;
    expect(refusal).toContain(`${ids[1]}: protected (read) by rule "compacted-parts"`);
    expect(toolResult(run.requests[1], "call_f2")).toBe(PLACEHOLDER);
  }, RUN_TIMEOUT);
});
