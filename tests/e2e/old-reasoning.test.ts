// Reasoning of earlier turns that the provider gets back (the OpenAI-compatible API's
// reasoning_content: DeepSeek, Kimi, GLM; the fake model speaks it) is the largest thing such a
// session pays for, and the default preset's old-reasoning rule cuts it to a one-line placeholder
// (not nothing: Kimi rejects an assistant tool-call message without reasoning_content when thinking
// is on). Like any change to the sent prefix it waits for a free break: here the cache has expired
// (a 6 ms cache lifetime), so the first request of the next turn goes with the placeholder, while
// that turn's own reasoning is intact.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assistantMessages, reasoningContents } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const think = (tag: string) => `${tag}: thinking about the next step. `.repeat(4).trim();

describe("opencode-acp in the real host: earlier reasoning the provider gets back (balanced, OpenAI-compatible thinking model)", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace({
      files: { "src/a.ts": "export const a = 1;\n" },
      plugins: [ACP_PLUGIN],
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { cacheTtlMinutes: 0.0001 } }) },
    });
  });
  afterAll(async () => ws?.dispose());

  it("cuts the earlier turn's reasoning to a placeholder once the cache has expired, and keeps the current turn's", async () => {
    const file = path.join(ws.projectDir, "src", "a.ts");
    ws.model.enqueue({ reasoning: think("R1"), toolCalls: [call("call_read", "read", { filePath: file })] }, { reasoning: think("R2"), text: "It exports a." });
    const first = await ws.run("What does src/a.ts export?", { timeoutMs: 120_000 });
    expectCleanRun(ws, first);
    // within the turn the reasoning goes back as streamed (providers check it)
    expect(reasoningContents(first.requests.at(-1)!)).toEqual([think("R1")]);

    ws.model.enqueue({ reasoning: think("R3"), toolCalls: [call("call_echo", "bash", { command: "echo ok", description: "Echo" })] }, { reasoning: think("R4"), text: "Done." });
    const second = await ws.run("Now echo ok", { session: first.sessionID, timeoutMs: 120_000 });
    expectCleanRun(ws, second);
    const [start, next] = second.requests;
    const all = JSON.stringify(second.requests.map((r) => r.body.messages));
    expect(all).not.toContain("R1: thinking");
    expect(all).not.toContain("R2: thinking");
    // the earlier turn's messages are all still there, each with the placeholder for its reasoning
    expect(assistantMessages(start)).toHaveLength(2);
    expect(reasoningContents(start)).toEqual(["[reasoning of an earlier turn pruned]", "[reasoning of an earlier turn pruned]"]);
    expect(reasoningContents(next).at(-1)).toBe(think("R3"));
    expect(JSON.stringify(start.body.messages)).toContain("export const a = 1;");
  }, 300_000);
});
