// The defaults (balanced) with an OpenAI-compatible thinking model over four user turns, in the real
// host (from a live audit, session 21). Turn 1 reads five ~45 KB modules, one step each, each step
// with reasoning; turn 2 reads them again, and the supersedes wait for their 50K batch. When it
// commits, turn 1's reasoning goes with it as a one-line placeholder: every earlier tool-call message
// keeps a reasoning_content field (Kimi rejects one without it). Turn 3: the agent discards a turn-2
// reasoning id while old-reasoning's prune of it waits; it applies on the next request. Then
// /acp stats, explain and restore on a turn-1 reasoning id, and turn 4 sends the restored reasoning.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assistantMessages, contentText, pairingProblems, reasoningContents, toolResult, type ChatMessage, type RecordedRequest } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, type RunResult, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 180_000;
const PLACEHOLDER = "[reasoning of an earlier turn pruned]";

const module = (n: number) =>
  Array.from({ length: 520 }, (_, i) => `export const m${n}_value${i} = ${i}; // module ${n}, a line long enough to count for size ${"x".repeat(20)}`).join("\n") + "\n";
/** ~800 chars of reasoning with a unique marker. */
const think = (tag: string) => `${tag}-MARK: thinking carefully about the next step of this task, weighing options. `.repeat(10).trim();
const summary = (tag: string) => `${tag}-TEXT: here is the summary of what I found. `.repeat(12).trim();

/** The assistant message that made tool call `callID`. */
const stepOf = (req: RecordedRequest, callID: string): ChatMessage | undefined => assistantMessages(req).find((m) => (m.tool_calls ?? []).some((c) => c.id === callID));
/** The reasoning id of the step that made `callID`: its tag rides on the call's result or the step's text. */
function reasoningId(req: RecordedRequest, callID: string): string | undefined {
  return /\[acp:(r[0-9a-z]+)\]/.exec(toolResult(req, callID) ?? "")?.[1] ?? /\[acp:(r[0-9a-z]+)\]/.exec(contentText(stepOf(req, callID)?.content))?.[1];
}
/** Tool calls paired with results, no assistant message left empty. */
function expectWellFormed(req: RecordedRequest) {
  expect(pairingProblems(req), `request ${req.seq}`).toEqual([]);
  for (const m of assistantMessages(req)) expect(Boolean(contentText(m.content).trim() || m.tool_calls?.length || (m.reasoning_content ?? "").trim()), `request ${req.seq}: ${JSON.stringify(m)}`).toBe(true);
}
/** The current turn's reasoning, on request k of a turn: what was streamed, byte for byte. */
function expectCurrentReasoning(run: RunResult, turn: string) {
  run.requests.forEach((r, k) => expect(reasoningContents(r).filter((x) => (x ?? "").includes(`${turn}S`))).toEqual(Array.from({ length: k }, (_, i) => think(`${turn}S${i + 1}`))));
}

describe("opencode-acp in the real host: four turns with an OpenAI-compatible thinking model (defaults)", () => {
  let ws: Workspace;
  let sessionID: string;
  const runs: Record<string, RunResult> = {};
  const files = [1, 2, 3, 4, 5].map((n) => `src/m${n}.ts`);
  const ids: Record<string, string | undefined> = {};
  const abs = (f: string) => path.join(ws.projectDir, f);
  const readSteps = (turn: string) => files.map((f, i) => ({ reasoning: think(`${turn}S${i + 1}`), toolCalls: [call(`call_${turn}_${i + 1}`, "read", { filePath: abs(f) })] }));

  beforeAll(async () => {
    // a 400K window: turn 2 (~110K tokens) stays far from where pending prunes go before the host
    // would compact (pressure.test.ts), so the 50K batch is what commits them here
    ws = await createWorkspace({ files: Object.fromEntries(files.map((f, i) => [f, module(i + 1)])), plugins: [ACP_PLUGIN], contextLimit: 400_000 });
  });
  afterAll(async () => ws?.dispose());

  /** `/acp <args>` as `opencode run --command acp` runs it: no model request; the reply it printed. */
  async function acp(args: string): Promise<string> {
    const before = ws.model.requests.length;
    const run = await ws.run(args, { session: sessionID, command: "acp", timeoutMs: RUN_TIMEOUT });
    expect(run.timedOut).toBe(false);
    expect(ws.model.requests.length - before, `model requests during /acp ${args}`).toBe(0);
    return run.events.filter((e) => e.type === "text" && e.part?.ignored === true).map((e) => String(e.part.text)).at(-1) ?? "";
  }

  it("turn 1: five large reads; the turn's reasoning goes back as streamed", async () => {
    ws.model.enqueue(...readSteps("T1"), { reasoning: think("T1S6"), text: summary("T1") });
    const run = (runs.T1 = await ws.run("Read the five modules in src and summarise them", { timeoutMs: RUN_TIMEOUT }));
    expectCleanRun(ws, run);
    sessionID = run.sessionID!;
    expect(run.requests).toHaveLength(6);
    run.requests.forEach(expectWellFormed);
    expectCurrentReasoning(run, "T1");
    for (let i = 1; i <= 5; i++) ids[`T1S${i}`] = reasoningId(run.requests.at(-1)!, `call_T1_${i}`);
    expect(ids.T1S2).toMatch(/^r[0-9a-z]+$/);
  }, RUN_TIMEOUT);

  it("turn 2: once the supersede batch commits, turn 1's reasoning goes with it as a placeholder, the field kept", async () => {
    ws.model.enqueue(...readSteps("T2"), { reasoning: think("T2S6"), text: summary("T2") });
    const run = (runs.T2 = await ws.run("Read them all again please, I changed something", { session: sessionID, timeoutMs: RUN_TIMEOUT }));
    expectCleanRun(ws, run);
    expect(run.requests).toHaveLength(6);
    run.requests.forEach(expectWellFormed);
    expectCurrentReasoning(run, "T2");
    const superseded = (r: RecordedRequest) => [1, 2, 3, 4, 5].filter((i) => (toolResult(r, `call_T1_${i}`) ?? "").includes("superseded by a later read")).length;
    // before the batch: turn 1 goes out as it was sent (the cached prefix is kept)
    expect(reasoningContents(run.requests[0]).filter((x) => (x ?? "").includes("T1S"))).toHaveLength(5);
    expect(superseded(run.requests[0])).toBe(0);
    // the batch: four turn-1 reads superseded (m5's supersede came after it), and turn 1's reasoning cut
    const last = run.requests.at(-1)!;
    expect(superseded(last)).toBe(4);
    expect(JSON.stringify(last.body.messages)).not.toContain("T1S1-MARK");
    for (let i = 1; i <= 5; i++) expect(stepOf(last, `call_T1_${i}`)?.reasoning_content).toBe(PLACEHOLDER);
    for (let i = 1; i <= 5; i++) ids[`T2S${i}`] = reasoningId(last, `call_T2_${i}`);
    expect(ids.T2S1).toMatch(/^r[0-9a-z]+$/);
  }, RUN_TIMEOUT);

  it("turn 3: the agent's discard of a turn-2 reasoning id whose prune waits applies on the next request", async () => {
    ws.model.enqueue(
      { reasoning: think("T3S1"), toolCalls: [call("call_T3_prune", "context_prune", { action: "discard", targets: [ids.T2S1] })] },
      { reasoning: think("T3S2"), text: "Pruned." },
    );
    const run = await ws.run("Drop your old thoughts about m1 please", { session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    expect(run.requests).toHaveLength(2);
    run.requests.forEach(expectWellFormed);
    const [first, second] = run.requests;
    expect(stepOf(first, "call_T2_1")?.reasoning_content).toBe(think("T2S1")); // waits for its batch
    expect(toolResult(second, "call_T3_prune")).toContain(`${ids.T2S1}: discarded`);
    expect(stepOf(second, "call_T2_1")?.reasoning_content).toBe("[reasoning pruned by the agent]");
    // the turn-2 reasoning pending behind it went in the same request, each with its field
    for (let i = 2; i <= 5; i++) expect(stepOf(second, `call_T2_${i}`)?.reasoning_content).toBe(PLACEHOLDER);
    expectCurrentReasoning(run, "T3");
  }, RUN_TIMEOUT);

  it("/acp stats counts old-reasoning; explain and restore take a reasoning id", async () => {
    expect(await acp("stats")).toMatch(/old-reasoning\s+\d+ parts\s+\S+ tokens/);
    expect(await acp(`explain ${ids.T1S2}`)).toMatch(new RegExp(`^acp explain ${ids.T1S2} \\(prt_\\w+, reasoning[^)]*\\): .*old-reasoning`));
    expect(await acp(`restore ${ids.T1S2}`)).toMatch(new RegExp(`${ids.T1S2} .*restored`));
  }, RUN_TIMEOUT * 2);

  it("turn 4: the restored reasoning goes back exactly, on every request", async () => {
    ws.model.enqueue(
      { reasoning: think("T4S1"), toolCalls: [call("call_T4_echo", "bash", { command: "echo ok", description: "Echo" })] },
      { reasoning: think("T4S2"), text: "Done." },
    );
    const run = await ws.run("Now echo ok", { session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    run.requests.forEach(expectWellFormed);
    for (const r of run.requests) expect(stepOf(r, "call_T1_2")?.reasoning_content).toBe(think("T1S2"));
    expectCurrentReasoning(run, "T4");
  }, RUN_TIMEOUT);
});
