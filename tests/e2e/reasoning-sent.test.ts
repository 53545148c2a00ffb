// A thinking model whose provider sends earlier turns' reasoning back and caches it with the rest
// (the OpenAI-compatible API's reasoning_content: DeepSeek, Kimi, GLM; the fake model speaks it),
// with the defaults a new user gets. A new user message is no free cache break there: a prune that
// waits for its batch must not go out with it. Before the fix the plugin took every user message
// after reasoning for the break Anthropic's thinking makes, and re-wrote the cached prefix there to
// save a few hundred tokens.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResult } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const lines = Array.from({ length: 60 }, (_, i) => `export const value${i} = ${i}; // a line long enough to count`).join("\n");
const think = (tag: string) => `${tag}: thinking about the next step. `.repeat(4).trim();

describe("opencode-acp in the real host: reasoning the provider caches (default config, OpenAI-compatible thinking model)", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace({ files: { "src/a.ts": `${lines}\n` }, plugins: [ACP_PLUGIN] });
  });
  afterAll(async () => ws?.dispose());

  it("at the next user message the sent prefix, earlier reasoning included, goes out unchanged", async () => {
    const file = path.join(ws.projectDir, "src", "a.ts");
    ws.model.enqueue(
      { reasoning: think("R1"), toolCalls: [call("call_read_1", "read", { filePath: file })] },
      { reasoning: think("R2"), toolCalls: [call("call_read_2", "read", { filePath: file })] },
      { reasoning: think("R3"), text: "Read it twice." },
    );
    const first = await ws.run("Read src/a.ts", { timeoutMs: 120_000 });
    expectCleanRun(ws, first);
    const last = first.requests.at(-1)!;
    // the first read is a stale view once the second is in, but it is already sent: its supersede waits
    expect(toolResult(last, "call_read_1")).toContain("value59");
    expect(JSON.stringify(last.body.messages)).toContain(think("R1"));

    ws.model.enqueue({ reasoning: think("R4"), text: "Nothing else." });
    const second = await ws.run("Thanks", { session: first.sessionID, timeoutMs: 120_000 });
    expectCleanRun(ws, second);
    const next = second.requests[0].body.messages;
    const prev = last.body.messages;
    expect(JSON.stringify(next.slice(0, prev.length))).toBe(JSON.stringify(prev));
    expect(toolResult(second.requests[0], "call_read_1")).toContain("value59");
  }, 300_000);
});
