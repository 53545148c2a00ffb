import { describe, expect, it } from "vitest";
import { PromptText, QuoteTracker, indexedLine, writtenLines } from "../../src/sim/quotes.js";
import { erroredTool, msg, text, tool } from "./build.js";

const LINE = "const answer = computeTheAnswer(universe, everything);"; // 54 chars
const SHORT = "x = 1; // far too short to be a quote"; // 37 chars

function eventsOf(messages: ReturnType<typeof msg>[]) {
  const tracker = new QuoteTracker();
  return messages.map((m) => tracker.step(m).map((e) => e.line));
}

describe("indexedLine", () => {
  it("strips leading line-number prefixes (12: , 12:, 12→, 12\\t, padded) and trims", () => {
    expect(indexedLine(`12: ${LINE}`)).toBe(LINE);
    expect(indexedLine(`12:${LINE}`)).toBe(LINE);
    expect(indexedLine(`     12→${LINE}`)).toBe(LINE);
    expect(indexedLine(`12\t${LINE}`)).toBe(LINE);
    expect(indexedLine(`  ${LINE}  `)).toBe(LINE);
  });

  it("skips the prefix pattern only where it cannot match: every first character gives what the pattern gives", () => {
    // the pattern of src/graph/quote-lines.ts, as the reference the shortcut must equal
    const reference = (raw: string) => raw.replace(/^\s*\d+[:→\t]\s?/, "").trim();
    const firsts = [...Array(256).keys()].map((c) => String.fromCharCode(c)).concat(["\u00a0", "\u2003", "\u3000", "\ufeff", "→", "é"]);
    for (const first of firsts)
      for (const rest of [`12: ${LINE}`, `${LINE}  `, ` 7→${LINE}`, ""]) expect(indexedLine(first + rest), JSON.stringify(first + rest)).toBe(reference(first + rest));
  });
});

describe("writtenLines", () => {
  it("takes trimmed lines of at least 40 chars from text and from every string argument, nested too", () => {
    const exactly40 = "a".repeat(40);
    const m = msg("a1", "assistant", [
      text("x1", `intro\n   ${LINE}   \n${SHORT}`),
      tool("t1", "edit", { filePath: "/a", edits: [{ oldString: `${exactly40}\nshort` }], count: 3 }, "ok"),
    ]);
    expect(writtenLines(m)).toEqual([LINE, exactly40]);
  });
});

describe("QuoteTracker", () => {
  it("makes an event when an assistant writes a line first seen in an earlier completed tool output", () => {
    const events = eventsOf([
      msg("u1", "user", [text("p1", "look")]),
      msg("a1", "assistant", [tool("t1", "read", { filePath: "/a" }, `1: ${LINE}\n2: ${SHORT}`)]),
      msg("a2", "assistant", [text("x2", `I found:\n${LINE}\n${SHORT}`)]),
    ]);
    expect(events).toEqual([[], [], [LINE]]);
  });

  it("counts a line once: a line any assistant already wrote is no new event", () => {
    const events = eventsOf([
      msg("a1", "assistant", [tool("t1", "read", {}, LINE)]),
      msg("a2", "assistant", [text("x2", LINE), tool("t2", "edit", { oldString: LINE }, "ok")]),
      msg("a3", "assistant", [text("x3", LINE)]),
    ]);
    expect(events).toEqual([[], [LINE], []]);
  });

  it("needs the output to come first: a line written before it appears in an output is never an event", () => {
    const events = eventsOf([
      msg("a1", "assistant", [tool("t1", "write", { content: LINE }, "written")]),
      msg("a2", "assistant", [tool("t2", "read", {}, `1: ${LINE}`)]),
      msg("a3", "assistant", [text("x3", LINE)]),
    ]);
    expect(events).toEqual([[], [], []]);
  });

  it("ignores a message's own tool outputs and errored outputs", () => {
    const events = eventsOf([
      msg("a1", "assistant", [erroredTool("t1", "bash", {}, LINE)]),
      msg("a2", "assistant", [text("x2", LINE), tool("t2", "read", {}, LINE)]),
    ]);
    expect(events).toEqual([[], []]);
  });

  it("makes no event for a compaction summary, but what it writes counts as written", () => {
    const events = eventsOf([
      msg("a1", "assistant", [tool("t1", "read", {}, LINE)]),
      msg("u1", "user", [{ id: "c1", type: "compaction", auto: true }]),
      msg("s1", "assistant", [text("x1", LINE)], { summary: true }),
      msg("a2", "assistant", [text("x2", LINE)]),
    ]);
    expect(events).toEqual([[], [], [], []]);
  });

  it("lists every part whose output held the line, oldest first", () => {
    const tracker = new QuoteTracker();
    tracker.step(msg("a1", "assistant", [tool("t1", "read", {}, LINE), tool("t2", "grep", {}, `9: ${LINE}`)]));
    expect(tracker.step(msg("a2", "assistant", [text("x", LINE)]))[0].sourcePartIds).toEqual(["t1", "t2"]);
  });
});

describe("PromptText.contains", () => {
  it("is substring containment in any unit, never across units", () => {
    const prompt = new PromptText([
      { partId: "a", text: `12: ${LINE} // trailing` },
      { partId: "b", text: "tail of one" },
      { partId: "c", text: "head of two" },
    ]);
    expect(prompt.contains(LINE)).toBe(true);
    expect(prompt.contains("tail of onehead of two")).toBe(false);
    expect(prompt.contains("not there at all")).toBe(false);
  });
});
