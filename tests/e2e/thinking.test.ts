// A thinking model in the real host. The fake model streams `reasoning_content` deltas (the
// DeepSeek/Kimi shape); OpenCode's openai-compatible provider stores them as reasoning parts and
// sends them back as `reasoning_content` on the assistant messages. Providers of such models reject
// a current-turn tool-call message whose reasoning is missing or altered, so the plugin must
// never touch the reasoning after the last user message, even with a user rule that drops every
// reasoning part. Older turns' reasoning may go (the balanced preset's old-reasoning, which drops
// it too, is switched off here, so only the user rule drops it: that proves the rule was active).
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assistantMessages, toolResult, type ChatMessage, type RecordedRequest, type ScriptedToolCall } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, pluginLoadErrors, type RunResult, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const A = Array.from({ length: 20 }, (_, i) => `a line ${i + 1}: content of a file the model reads twice`).join("\n");
const think = (tag: string) => `${tag}: let me think step by step about what to do next. `.repeat(8).trim();

// A user rule that would drop every reasoning part; the engine must still keep the current turn's.
const DROP_ALL_REASONING = `rules:
  drop-all-reasoning:
    phase: reduce
    description: Drops every reasoning part (the engine must keep the current turn's anyway)
    when:
      all:
        - { fact: partType, operator: equal, value: reasoning }
    then: { action: drop }
`;

const reasoningOf = (m: ChatMessage): string | undefined => m.reasoning_content;
/** Index of the last user message: everything after it is the current turn. */
const lastUser = (req: RecordedRequest) => req.body.messages.map((m) => m.role).lastIndexOf("user");


/** Every request of a run: the current turn's assistant messages carry exactly the streamed reasoning, in order. */
function expectCurrentTurnReasoningIntact(run: RunResult, streamed: string[]): void {
  for (const [i, req] of run.requests.entries()) {
    const turn = req.body.messages.slice(lastUser(req) + 1).filter((m) => m.role === "assistant");
    expect(turn.length, `request ${i}: assistant messages of the current turn`).toBe(i); // one per earlier step, none made up
    expect(turn.map(reasoningOf), `request ${i}: current-turn reasoning`).toEqual(streamed.slice(0, i));
  }
}

describe("thinking model: the current turn's reasoning is never touched", () => {
  let ws: Workspace;
  let sessionID: string;
  const turn1 = [think("R1-read"), think("R1-reread"), think("R1-answer")];
  const turn2 = [think("R2-echo"), think("R2-answer")];

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "a.txt": `${A}\n`, ".opencode/acp/rules/drop-reasoning.yaml": DROP_ALL_REASONING },
      plugins: [ACP_PLUGIN],
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 0 }, rules: { "old-reasoning": "off" } }) },
    });
  });
  afterAll(async () => ws?.dispose());

  it("turn 1: every request carries the turn's reasoning as streamed, while outputs are pruned", async () => {
    const a = path.join(ws.projectDir, "a.txt");
    ws.model.enqueue(
      { reasoning: turn1[0], text: "Reading a.txt.", toolCalls: [call("call_read_1", "read", { filePath: a })] },
      { reasoning: turn1[1], toolCalls: [call("call_read_2", "read", { filePath: a })] },
      { reasoning: turn1[2], text: "Read it twice." },
    );
    const run = await ws.run("Read a.txt twice", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    expect(run.requests).toHaveLength(3);
    sessionID = run.sessionID!;
    expectCurrentTurnReasoningIntact(run, turn1);
    // the plugin is active: the first read is superseded in the last request
    expect(toolResult(run.requests[2], "call_read_1")).toContain("superseded");
    expect(toolResult(run.requests[2], "call_read_2")).toContain("a line 20");
  }, RUN_TIMEOUT);

  it("turn 2 (new process): the new turn's reasoning is intact; the old turn's may be dropped", async () => {
    expect(sessionID).toBeDefined();
    ws.model.enqueue(
      { reasoning: turn2[0], toolCalls: [call("call_echo", "bash", { command: "echo second turn", description: "Echo" })] },
      { reasoning: turn2[1], text: "Echoed." },
    );
    const run = await ws.run("Now echo something", { session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    expect(run.requests).toHaveLength(2);
    expectCurrentTurnReasoningIntact(run, turn2);

    for (const req of run.requests) {
      // no assistant message was removed or made up: 3 of turn 1, then this turn's steps so far
      expect(assistantMessages(req)).toHaveLength(3 + run.requests.indexOf(req));
      // turn 1's tool calls are all still there
      expect(toolResult(req, "call_read_2")).toContain("a line 20");
    }
    // Turn 1 is now an older turn: the drop-all-reasoning rule may drop its reasoning; that it
    // does proves the rule was active while turn 2's reasoning stayed.
    const old = JSON.stringify(run.requests[1].body.messages);
    expect(old).not.toContain("R1-read");
    expect(old).toContain("R2-echo");
  }, RUN_TIMEOUT);
});
