import { describe, expect, it } from "vitest";
import { SYSTEM_UNIT_ID, promptTokens, renderPrompt as renderFor, unitTokens } from "../../src/graph/prompt.js";
import type { Message } from "../../src/graph/types.js";
import { OPENCODE } from "../../src/host/profile.js";
import { erroredTool, msg, reasoning, text, tool } from "../sim/build.js";

const { clearedOutput: CLEARED_TEXT, interruptedOutput: INTERRUPTED_TEXT, compactionPrompt: COMPACTION_TEXT, subtaskPrompt: SUBTASK_TEXT } = OPENCODE;
const renderPrompt = (context: Message[], systemText?: string) => renderFor(context, OPENCODE, systemText);
const ids = (units: { partId: string }[]) => units.map((u) => u.partId);

describe("renderPrompt: user parts", () => {
  it("sends text (synthetic included) but not ignored or empty text", () => {
    const units = renderPrompt([
      msg("m1", "user", [
        text("p1", "hello"),
        text("p2", "expanded file", { synthetic: true }),
        text("p3", "hidden", { ignored: true }),
        text("p4", ""),
      ]),
    ]);
    expect(units).toEqual([
      { partId: "p1", text: "hello" },
      { partId: "p2", text: "expanded file" },
    ]);
  });

  it("renders a file as [Attached <mime>: <filename>], compaction and subtask as fixed texts, skips agent parts", () => {
    const units = renderPrompt([
      msg("m1", "user", [
        { id: "f1", type: "file", mime: "text/plain", filename: "src/a.ts", url: "file:///x/src/a.ts" },
        { id: "c1", type: "compaction", auto: true },
        { id: "a1", type: "agent", name: "gitter" },
        { id: "s1", type: "subtask", prompt: "p", description: "d", agent: "general" },
      ]),
    ]);
    expect(units).toEqual([
      { partId: "f1", text: "[Attached text/plain: src/a.ts]" },
      { partId: "c1", text: COMPACTION_TEXT },
      { partId: "s1", text: SUBTASK_TEXT },
    ]);
    expect(COMPACTION_TEXT).toBe("What did we do so far?");
  });
});

describe("renderPrompt: assistant parts", () => {
  it("renders a tool part as two units: name + input JSON, then the output", () => {
    const units = renderPrompt([msg("a1", "assistant", [{ id: "s", type: "step-start" }, tool("t1", "read", { filePath: "/a" }, "body"), { id: "f", type: "step-finish" }])]);
    expect(units).toEqual([
      { partId: "t1", text: 'read{"filePath":"/a"}' },
      { partId: "t1", text: "body" },
    ]);
  });

  it("renders each tool state as toModelMessages sends it", () => {
    const pending = { id: "t4", type: "tool", tool: "bash", state: { status: "pending", input: {} } };
    const running = { id: "t5", type: "tool", tool: "bash", state: { status: "running", input: {}, time: { start: 1 } } };
    const units = renderPrompt([
      msg("a1", "assistant", [
        tool("t1", "bash", { command: "ls" }, "out"),
        tool("t2", "bash", { command: "ls" }, "out", { compacted: 123 }),
        erroredTool("t3", "bash", { command: "x" }, "Exit code 1"),
        pending,
        running,
      ]),
    ]);
    expect(units.filter((_, i) => i % 2 === 1).map((u) => u.text)).toEqual(["out", CLEARED_TEXT, "Exit code 1", INTERRUPTED_TEXT, INTERRUPTED_TEXT]);
    expect(CLEARED_TEXT).toBe("[Old tool result content cleared]");
    expect(INTERRUPTED_TEXT).toBe("[Tool execution was interrupted]");
  });

  it("keeps reasoning only after the last user message, and never empty reasoning or text", () => {
    const context = [
      msg("u1", "user", [text("p1", "first")]),
      msg("a1", "assistant", [reasoning("r1", "old thought"), text("x1", "answer"), text("x0", "")]),
      msg("u2", "user", [text("p2", "second")]),
      msg("a2", "assistant", [reasoning("r2", "current thought"), reasoning("r0", ""), tool("t1", "bash", {}, "o")]),
    ];
    expect(ids(renderPrompt(context))).toEqual(["p1", "x1", "p2", "r2", "t1", "t1"]);
    // Before u2 arrives, r1 belongs to the current turn and is sent.
    expect(ids(renderPrompt(context.slice(0, 2)))).toEqual(["p1", "r1", "x1"]);
  });

  it("reasoning without a signature (OpenAI-compatible reasoning_content) is sent in every turn", () => {
    const unsigned = (id: string, value: string) => ({ ...reasoning(id, value), metadata: undefined });
    const context = [
      msg("u1", "user", [text("p1", "first")]),
      msg("a1", "assistant", [unsigned("r1", "old thought"), reasoning("s1", "signed old thought"), text("x1", "answer")]),
      msg("u2", "user", [text("p2", "second")]),
      msg("a2", "assistant", [unsigned("r2", "current thought"), tool("t1", "bash", {}, "o")]),
    ];
    expect(ids(renderPrompt(context))).toEqual(["p1", "r1", "x1", "p2", "r2", "t1", "t1"]);
  });

  it("a user message with nothing to send (a notice of ignored parts) is dropped, so the reasoning before it stays", () => {
    const context = [
      msg("u1", "user", [text("p1", "first")]),
      msg("a1", "assistant", [reasoning("r1", "thought"), text("x1", "answer")]),
      msg("n1", "user", [text("p2", "acp: pruned 2 outputs", { ignored: true })]),
      msg("a2", "assistant", [text("x2", "more")]),
    ];
    expect(ids(renderPrompt(context))).toEqual(["p1", "r1", "x1", "x2"]);
  });

  it("skips assistant messages with an error, except an abort", () => {
    const context = [
      msg("u1", "user", [text("p1", "go")]),
      msg("a1", "assistant", [text("x1", "API Error: 500")], { error: { name: "APIError" } }),
      msg("a2", "assistant", [text("x2", "partial")], { error: { name: "MessageAbortedError" } }),
    ];
    expect(ids(renderPrompt(context))).toEqual(["p1", "x2"]);
  });
});

describe("renderPrompt: system text and tokens", () => {
  it("puts the pruner's system text first, once, and leaves it out when empty", () => {
    const context = [msg("u1", "user", [text("p1", "go")])];
    expect(renderPrompt(context, "prune notes")).toEqual([
      { partId: SYSTEM_UNIT_ID, text: "prune notes" },
      { partId: "p1", text: "go" },
    ]);
    expect(ids(renderPrompt(context, ""))).toEqual(["p1"]);
  });

  it("counts ceil(chars / 4) per unit", () => {
    expect([0, 1, 4, 5, 8].map((n) => unitTokens("x".repeat(n)))).toEqual([0, 1, 1, 2, 2]);
    // Per unit, not over the joined prompt: 1 + 1 chars are 2 tokens, not 1.
    expect(promptTokens([{ partId: "a", text: "x" }, { partId: "b", text: "y" }])).toBe(2);
  });
});
