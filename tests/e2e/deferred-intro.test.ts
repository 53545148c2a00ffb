// Deferred ids in the real host: while the prompt is small the plugin adds nothing (no system
// text, no id tags). On the first request whose prompt reaches `idsFromTokens`, the context_prune
// instructions appear once, as a user message after the newest message (unsent until then; never
// inside the model's own assistant message), and the outputs from there on carry ids. Every later
// request shows the instructions at the same place with the same bytes, so the cached prefix never
// changes; the model can use the ids. The tool's description is the same in every request.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentText, pairingProblems, systemText, toolResult, type RecordedRequest } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const NOTE = "[Note from the opencode-acp plugin, not from the user]";
const SYSTEM_MARK = "Context pruning (opencode-acp)";
const lines = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag} line ${i + 1}: content the model read once and no longer needs`).join("\n");

/** Index of the chat message holding the instructions, its role, and its JSON. */
function introAt(req: RecordedRequest): { index: number; role: string; json: string } | undefined {
  const at = req.body.messages.flatMap((m, i) => (contentText(m.content).includes(NOTE) ? [i] : []));
  expect(at.length, `request ${req.seq}: messages with the note`).toBeLessThanOrEqual(1);
  const index = at[0] ?? -1;
  return index < 0 ? undefined : { index, role: req.body.messages[index].role, json: JSON.stringify(req.body.messages[index]) };
}

const pruneToolOf = (req: RecordedRequest) => JSON.stringify((req.body.tools ?? []).find((t) => t.function.name === "context_prune"));

describe("deferred ids and instructions in the real host", () => {
  let ws: Workspace;
  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "small.txt": "a short file\n", "big.txt": `${lines("BIG", 120)}\n`, "more.txt": `${lines("MORE", 20)}\n` },
      plugins: [ACP_PLUGIN],
      // big.txt alone (~8K chars, ~2K tokens) takes the prompt past 1500 tokens
      globalFiles: { "acp.jsonc": JSON.stringify({ idsFromTokens: 1500 }) },
    });
  });
  afterAll(async () => ws?.dispose());

  it("nothing is added below the threshold; from it on, one note at a fixed place and usable ids", async () => {
    const file = (f: string) => path.join(ws.projectDir, f);
    let bigId = "";
    ws.model.enqueue(
      { toolCalls: [call("call_small", "read", { filePath: file("small.txt") })] },
      { toolCalls: [call("call_big", "read", { filePath: file("big.txt") })] },
      { toolCalls: [call("call_more", "read", { filePath: file("more.txt") })] },
      (req) => {
        bigId = /\[acp:(t[0-9a-z]+)\]\s*$/.exec(toolResult(req, "call_big") ?? "")?.[1] ?? "";
        return { toolCalls: [call("call_prune", "context_prune", { action: "discard", targets: [bigId] })] };
      },
      { text: "Done." },
    );
    const run = await ws.run("Read the files", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    const r = run.requests;
    expect(r).toHaveLength(5);

    for (const req of r) expect(systemText(req), `request ${req.seq}`).not.toContain(SYSTEM_MARK);
    // requests 0-1: the prompt is small; nothing added, small.txt has no id
    expect(introAt(r[0])).toBeUndefined();
    expect(introAt(r[1])).toBeUndefined();
    expect(toolResult(r[1], "call_small")).not.toContain("[acp:");
    // request 2: big.txt's result crosses the threshold; the note follows it as a user message
    // (the model reads it as coming from outside, not as its own words), and the result has an id
    const first = introAt(r[2]);
    expect(first, "the note in request 2").toBeDefined();
    expect(first!.role).toBe("user");
    for (const req of r) for (const m of req.body.messages) if (m.role !== "user") expect(contentText(m.content), `request ${req.seq} ${m.role}`).not.toContain(NOTE);
    const before = r[2].body.messages[first!.index - 1];
    expect(before.role === "tool" && before.tool_call_id === "call_big", "the note right after the read's result").toBe(true);
    expect(first!.index).toBe(r[2].body.messages.length - 1); // the end of the prompt: nothing cached changes
    expect(toolResult(r[2], "call_big")).toMatch(/\[acp:t[0-9a-z]+\]\s*$/);
    expect(toolResult(r[2], "call_small")).not.toContain("[acp:"); // sent untagged before, stays so
    // later requests: the same message at the same index, byte for byte; the next request keeps
    // the whole prefix through it (request 4 differs only by the model's own discard of big.txt)
    for (const req of r.slice(3)) expect(introAt(req), `request ${req.seq}`).toEqual(first);
    expect(JSON.stringify(r[3].body.messages.slice(0, first!.index + 1))).toBe(JSON.stringify(r[2].body.messages.slice(0, first!.index + 1)));
    for (const req of r) expect(pairingProblems(req), `request ${req.seq}`).toEqual([]);
    // the tool's description (cached with the tools list) never changes, and says ids come later
    for (const req of r) expect(pruneToolOf(req)).toBe(pruneToolOf(r[0]));
    expect(pruneToolOf(r[0])).toContain("until you see such tags there is nothing to prune");
    // the model used the id: big.txt's content is gone from the next request
    expect(bigId).not.toBe("");
    expect(toolResult(r[4], "call_big")).not.toContain("BIG line 7");
    expect(toolResult(r[4], "call_prune")).toContain(bigId);
  }, RUN_TIMEOUT);

  // A thinking model: a user message in the middle of a turn with reasoning would make providers
  // that keep only the current turn's reasoning drop it (a cache break), so the note and the ids
  // wait for the user's next message. The fake model's OpenAI-compatible reasoning is not dropped,
  // so acp.jsonc says what Anthropic's provider does (`earlierReasoning: dropped`).
  it("with reasoning in the turn, the note and the ids wait for the next user message", async () => {
    const tws = await createWorkspace({
      files: { "big.txt": `${lines("BIG", 120)}\n`, "more.txt": `${lines("MORE", 20)}\n` },
      plugins: [ACP_PLUGIN],
      globalFiles: { "acp.jsonc": JSON.stringify({ idsFromTokens: 1500, earlierReasoning: "dropped" }) },
    });
    try {
      const file = (f: string) => path.join(tws.projectDir, f);
      const think = (tag: string) => `${tag}: thinking about the next step. `.repeat(4).trim();
      tws.model.enqueue(
        { reasoning: think("R1"), toolCalls: [call("call_big", "read", { filePath: file("big.txt") })] },
        { reasoning: think("R2"), text: "Read it." },
        { reasoning: think("R3"), toolCalls: [call("call_more", "read", { filePath: file("more.txt") })] },
        { reasoning: think("R4"), text: "Done." },
      );
      const first = await tws.run("Read big.txt", { timeoutMs: RUN_TIMEOUT });
      expectCleanRun(tws, first);
      expect(first.requests).toHaveLength(2);
      // past the threshold in request 1, but its turn has reasoning: nothing added, one user message
      for (const req of first.requests) {
        expect(introAt(req), `request ${req.seq}`).toBeUndefined();
        expect(JSON.stringify(req.body.messages)).not.toContain("[acp:");
        expect(req.body.messages.filter((m) => m.role === "user")).toHaveLength(1);
      }
      const second = await tws.run("Now read more.txt", { session: first.sessionID, timeoutMs: RUN_TIMEOUT });
      expectCleanRun(tws, second);
      const [r0, r1] = second.requests;
      // the first request of the new turn: the note follows the user's message, at the end
      const at = introAt(r0);
      expect(at?.role).toBe("user");
      expect(at!.index).toBe(r0.body.messages.length - 1);
      expect(contentText(r0.body.messages[at!.index - 1].content)).toContain("Now read more.txt");
      // the previous turn's request goes out unchanged before it, and the new output has an id
      const prev = first.requests[1].body.messages;
      expect(JSON.stringify(r0.body.messages.slice(0, prev.length).map((m) => ({ ...m, reasoning_content: undefined })))).toBe(JSON.stringify(prev.map((m) => ({ ...m, reasoning_content: undefined }))));
      expect(introAt(r1)).toEqual(at);
      expect(toolResult(r1, "call_more")).toMatch(/\[acp:t[0-9a-z]+\]\s*$/);
    } finally {
      await tws.dispose();
    }
  }, 2 * RUN_TIMEOUT);

  // verbose promises never to cost more than no pruning: unless acp.jsonc sets `tool`, the model
  // is offered no context_prune, and no output gets an id, however large the prompt grows
  it("under the verbose preset, no context_prune tool, no note and no ids unless acp.jsonc sets tool", async () => {
    for (const [config, offered] of [[{ preset: "verbose", idsFromTokens: 1500 }, false], [{ preset: "verbose", tool: true, idsFromTokens: 1500 }, true]] as const) {
      const tws = await createWorkspace({ files: { "big.txt": `${lines("BIG", 120)}\n` }, plugins: [ACP_PLUGIN], globalFiles: { "acp.jsonc": JSON.stringify(config) } });
      try {
        tws.model.enqueue({ toolCalls: [call("call_big", "read", { filePath: path.join(tws.projectDir, "big.txt") })] }, { text: "Read it." });
        const run = await tws.run("Read big.txt", { timeoutMs: RUN_TIMEOUT });
        expectCleanRun(tws, run);
        expect(run.requests).toHaveLength(2);
        const last = run.requests[1];
        expect(pruneToolOf(last) !== undefined, JSON.stringify(config)).toBe(offered);
        expect(introAt(last) !== undefined).toBe(offered);
        expect(/\[acp:t[0-9a-z]+\]\s*$/.test(toolResult(last, "call_big") ?? "")).toBe(offered);
      } finally {
        await tws.dispose();
      }
    }
  }, 2 * RUN_TIMEOUT);
});
