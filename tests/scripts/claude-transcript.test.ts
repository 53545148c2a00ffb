// The held-out converter (scripts/claude-transcript.ts) on a small hand-written transcript: the main
// chain, one message per API response, results on their tool parts, compaction, harness text.
import { describe, expect, it } from "vitest";
import { convert, outName } from "../../scripts/claude-transcript.js";

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const user = (uuid: string, parent: string | null, content: unknown, s: number, extra = {}) => ({ type: "user", uuid, parentUuid: parent, sessionId: "S", timestamp: at(s), message: { role: "user", content }, ...extra });
const assistant = (uuid: string, parent: string, id: string, content: unknown[], s: number) => ({
  type: "assistant", uuid, parentUuid: parent, sessionId: "S", timestamp: at(s),
  message: { id, model: "claude-x", role: "assistant", content, usage: { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 } },
});
const lines = (...entries: object[]) => entries.map((e) => JSON.stringify(e)).join("\n") + "\n{broken";

describe("claude-transcript convert", () => {
  const session = convert(
    lines(
      user("u1", null, "read the file", 0),
      assistant("a1", "u1", "m1", [{ type: "thinking", thinking: "", signature: "sig" }], 1),
      assistant("a2", "a1", "m1", [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "/x.py" } }], 2),
      { type: "progress", uuid: "p1", parentUuid: "a2", data: {} },
      user("r1", "p1", [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "1→code" }] }, { type: "text", text: "Tool loaded." }], 3),
      // a branch the user abandoned: kept out
      user("b1", "r1", "abandoned prompt", 4),
      assistant("a3", "r1", "m2", [{ type: "tool_use", id: "t2", name: "Bash", input: { command: "ls" } }, { type: "tool_use", id: "t3", name: "Edit", input: { file_path: "/x.py", old_string: "a", new_string: "b" } }], 5),
      user("r2", "a3", [{ type: "tool_result", tool_use_id: "t2", content: "out", is_error: true }], 6),
      { type: "system", subtype: "compact_boundary", uuid: "c0", parentUuid: null, logicalParentUuid: "r2", compactMetadata: { trigger: "auto", preTokens: 9000 } },
      user("c1", "c0", "Summary of the earlier part", 7, { isCompactSummary: true }),
      // the result of t3 sits on a side branch: it still answers its call
      user("r3", "zz", [{ type: "tool_result", tool_use_id: "t3", content: "edited" }], 8),
      user("u2", "c1", "go on", 9),
    ),
  );
  const tools = session.messages.flatMap((m: any) => m.parts.filter((p: any) => p.type === "tool"));

  it("follows the main chain and groups one API response into one message", () => {
    expect(session.messages.map((m: any) => m.info.role)).toEqual(["user", "assistant", "assistant", "user", "assistant", "user"]);
    expect(session.messages[1].parts.map((p: any) => p.type)).toEqual(["step-start", "reasoning", "tool", "step-finish"]);
    expect(session.meta).toMatchObject({ droppedBranchEntries: 2, brokenLines: 1, compactions: 1, models: ["claude-x"] });
    expect(JSON.stringify(session)).not.toContain("abandoned prompt");
    expect(JSON.stringify(session)).not.toContain("Tool loaded.");
  });

  it("maps tools and inputs to OpenCode's names and attaches results", () => {
    expect(tools.map((p: any) => [p.tool, p.state.status])).toEqual([["read", "completed"], ["bash", "error"], ["edit", "completed"]]);
    expect(tools[0].state).toMatchObject({ input: { filePath: "/x.py" }, output: "1→code", title: "Read", metadata: { originalTool: "Read" } });
    expect(tools[1].state.error).toBe("out");
    expect(tools[2].state.input).toEqual({ filePath: "/x.py", oldString: "a", newString: "b" });
    expect(session.messages[2].info).toMatchObject({ finish: "tool-calls", parentID: "msg_000000", tokens: { input: 1, output: 2, cache: { read: 3, write: 4 } } });
  });

  it("turns a compaction into OpenCode's compaction message and summary", () => {
    const [c, summary] = session.messages.slice(3, 5);
    expect(c.parts[0]).toMatchObject({ type: "compaction", auto: true, preTokens: 9000 });
    expect(summary.info).toMatchObject({ role: "assistant", summary: true, mode: "compaction" });
    expect(summary.parts[0].text).toBe("Summary of the earlier part");
  });
});

describe("claude-transcript convert, a chain that loops", () => {
  it("ends the chain where it repeats instead of following it forever", () => {
    // u1's parent is the last entry: the walk back from u2 comes round to u2 again
    const session = convert(lines(user("u1", "u2", "first", 0), assistant("a1", "u1", "m1", [{ type: "text", text: "ok" }], 1), user("u2", "a1", "second", 2)));
    expect(session.messages.map((m: any) => m.info.role)).toEqual(["user", "assistant", "user"]);
  });
});

describe("claude-transcript outName", () => {
  it("keeps transcripts of the same name in two folders apart", () => {
    expect(outName("in", "in/a.jsonl")).toBe("a.json");
    expect(outName("in", "in/Archives/x.jsonl")).not.toBe(outName("in", "in/CHAT_LOGS/x.jsonl"));
    expect(outName("in/x.jsonl", "in/x.jsonl")).toBe("x.json");
  });
});
