// Ids on the model's own text and reasoning in the real host. The scripted thinking model writes a
// long answer (with reasoning) next to a tool call; the plugin appends "[acp:r…] [acp:m…]" to that
// text (the reasoning's id rides on the step's text: reasoning itself is never changed). The model
// takes the m id from the request it received and discards its own message with context_prune: the
// next request shows the breadcrumb, the tags stay. Reasoning of the current turn is refused; in the
// next turn (a new opencode process) the same reasoning id is accepted and the reasoning goes out
// as a minimal text (the openai-compatible provider's `reasoning_content` stays present).
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentText, toolResult, type ChatMessage, type RecordedRequest } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, type RunResult, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const ANSWER = Array.from({ length: 8 }, (_, i) => `PLAN-MARKER step ${i + 1}: look at the tokenizer, then the parser, then write the tests.`).join("\n");
/** What the discarded answer becomes: its first line, cut at 60 characters. */
const BREADCRUMB = `[message discarded by the agent: "${ANSWER.split("\n")[0].slice(0, 60)}…"]`;
const REASONING = "THINK-MARKER: the user wants a plan; I will write it and check the tree. ".repeat(8).trim();

/** The assistant message whose text contains `marker`. */
function assistantWith(req: RecordedRequest, marker: string): ChatMessage {
  const m = req.body.messages.find((x) => x.role === "assistant" && contentText(x.content).includes(marker));
  if (!m) throw new Error(`request ${req.seq}: no assistant message containing ${marker}`);
  return m;
}

/** The tags at the end of a text: "[acp:r…] [acp:m…]" → { r, m }. */
function tagsAtEnd(text: string): Record<string, string> {
  const suffix = /\n((?:\[acp:[tmr][0-9a-z]+\] ?)+)$/.exec(text)?.[1];
  if (!suffix) throw new Error(`no [acp:…] tags at the end of ${JSON.stringify(text.slice(-200))}`);
  return Object.fromEntries([...suffix.matchAll(/\[acp:(([tmr])[0-9a-z]+)\]/g)].map((m) => [m[2], m[1]]));
}

describe("ids on the model's text and reasoning in the real host", () => {
  let ws: Workspace;
  let first: RunResult;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    // ids from the first call (the default waits for a 20K-token prompt)
    ws = await createWorkspace({ plugins: [ACP_PLUGIN], globalFiles: { "acp.jsonc": JSON.stringify({ idsFromTokens: 0 }) } });
  });
  afterAll(async () => ws?.dispose());

  it("turn 1: the model discards its own earlier message by its m id; its current-turn reasoning is refused", async () => {
    ws.model.enqueue(
      // 0: a long answer with reasoning, and a tool call so the turn goes on
      { reasoning: REASONING, text: ANSWER, toolCalls: [call("call_ls", "bash", { command: "echo tree", description: "List" })] },
      // 1: the ids come from the request the model got
      (req) => {
        Object.assign(ids, tagsAtEnd(contentText(assistantWith(req, "PLAN-MARKER").content)));
        return { toolCalls: [call("call_p1", "context_prune", { action: "discard", targets: [ids.m, ids.r] })] };
      },
      // 2
      { text: "Pruned my plan." },
    );
    first = await ws.run("Make a plan", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, first);
    const r = first.requests;
    expect(r).toHaveLength(3);
    expect(ids.m, JSON.stringify(ids)).toMatch(/^m[0-9a-z]+$/);
    expect(ids.r, JSON.stringify(ids)).toMatch(/^r[0-9a-z]+$/);

    // Request 1: the answer in full, the reasoning's id then the text's own at its end; the reasoning untouched.
    const shown = assistantWith(r[1], "PLAN-MARKER");
    expect(contentText(shown.content)).toBe(`${ANSWER}\n[acp:${ids.r}] [acp:${ids.m}]`);
    expect(shown.reasoning_content).toBe(REASONING);

    // Request 2: the message is a breadcrumb with the same tags; the reasoning was refused and is intact.
    const pruned = r[2].body.messages.find((x) => x.role === "assistant" && x.tool_calls?.some((c) => c.id === "call_ls"))!;
    expect(contentText(pruned.content)).toBe(`${BREADCRUMB}\n[acp:${ids.r}] [acp:${ids.m}]`);
    expect(pruned.reasoning_content).toBe(REASONING);
    const answer = toolResult(r[2], "call_p1")!;
    expect(answer).toContain(`${ids.m}: discarded`);
    expect(answer).toContain(`${ids.r}: reasoning of the current turn cannot be pruned`);
  }, RUN_TIMEOUT);

  it("turn 2 (new process): the earlier turn's reasoning is discarded to a minimal text; the message stays pruned", async () => {
    expect(first?.sessionID).toBeDefined();
    ws.model.enqueue(
      { toolCalls: [call("call_p2", "context_prune", { action: "discard", targets: [ids.r] })] },
      { text: "Done." },
    );
    const run = await ws.run("Now drop your old reasoning", { session: first.sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    expect(run.requests).toHaveLength(2);
    const step = (req: RecordedRequest) => req.body.messages.find((x) => x.role === "assistant" && x.tool_calls?.some((c) => c.id === "call_ls"))!;
    const breadcrumb = `${BREADCRUMB}\n[acp:${ids.r}] [acp:${ids.m}]`;
    // before: the reasoning as it was (the refused request left nothing behind)
    expect(step(run.requests[0]).reasoning_content).toBe(REASONING);
    expect(contentText(step(run.requests[0]).content)).toBe(breadcrumb);
    // after: the minimal text in its place, the rest unchanged
    expect(toolResult(run.requests[1], "call_p2")).toContain(`${ids.r}: discarded`);
    expect(step(run.requests[1]).reasoning_content).toBe("[reasoning pruned by the agent]");
    expect(contentText(step(run.requests[1]).content)).toBe(breadcrumb);
    expect(JSON.stringify(run.requests[1].body.messages)).not.toContain("THINK-MARKER");
  }, RUN_TIMEOUT);
});
