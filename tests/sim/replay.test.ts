import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Pruner } from "../../src/engine/api.js";
import type { Message } from "../../src/graph/types.js";
import { comparePrompts, deepCopy, replaySession } from "../../src/sim/replay.js";
import { msg, numberedLines, session, text, tool } from "./build.js";
import { mask, native } from "./reference-baselines.js";
import { OPENCODE } from "../../src/host/profile.js";

const recorded = session([
  msg("u1", "user", [text("p1", "start")]),
  msg("a1", "assistant", [tool("t1", "read", { filePath: "/a" }, "A")]),
  msg("a2", "assistant", [tool("t2", "read", { filePath: "/b" }, "B")]),
  msg("u2", "user", [text("p2", "more")]),
  msg("a3", "assistant", [text("x3", "done")]),
]);

const dir = mkdtempSync(join(tmpdir(), "acp-sim-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("replaySession", () => {
  it("makes one call per assistant message, its context being the messages before it", () => {
    const calls = [...replaySession(recorded, { host: OPENCODE })];
    expect(calls.map((c) => c.index)).toEqual([1, 2, 4]);
    expect(calls.map((c) => c.context.map((m) => m.info.id))).toEqual([["u1"], ["u1", "a1"], ["u1", "a1", "a2", "u2"]]);
    expect(calls.every((c) => c.transformMs === 0 && c.explain.length === 0)).toBe(true);
  });

  it("hands the pruner a fresh deep copy per call and never changes the recording", () => {
    const seen: Message[][] = [];
    const clearEverything: Pruner = {
      transform(messages) {
        seen.push(messages);
        for (const m of messages) for (const p of m.parts) if (p.state) p.state.output = "gone";
      },
      systemPrompt: () => "",
      explain: () => [],
    };
    const calls = [...replaySession(recorded, { host: OPENCODE, pruner: () => clearEverything })];
    expect(calls[1].units.map((u) => u.text)).toContain("gone");
    expect(recorded.messages[1].parts[0].state?.output).toBe("A");
    expect(seen[1][1]).not.toBe(recorded.messages[1]);
    expect(seen[2][1]).not.toBe(seen[1][1]); // no copy is reused between calls
  });

  it("creates the pruner once per session, or before every call in restart mode, and times each transform", () => {
    let created = 0;
    const factory = () => (created++, mask(10));
    const once = [...replaySession(recorded, { host: OPENCODE, pruner: factory })];
    expect(created).toBe(1);
    [...replaySession(recorded, { host: OPENCODE, pruner: factory, restart: true })];
    expect(created).toBe(1 + 3);
    expect(once.every((c) => c.transformMs >= 0 && Number.isFinite(c.transformMs))).toBe(true);
  });

  it("renders the pruner's system text and reports its explain() after each call", () => {
    const noting: Pruner = {
      transform() {},
      systemPrompt: (sid) => `notes for ${sid}`,
      explain: () => [{ partId: "t1", messageId: "a1", rule: "r", action: "clear", tokensSaved: 1, slot: "output" }],
    };
    const [first] = replaySession(recorded, { host: OPENCODE, pruner: () => noting });
    expect(first.units[0]).toEqual({ partId: "(system)", text: "notes for ses_sim" });
    expect(first.explain).toHaveLength(1);
  });
});

describe("comparePrompts (restart mode must give the same prompts)", () => {
  // Native prune acts only on big sessions: 4 turns of ~29K-token outputs.
  const big = session(
    [1, 2, 3, 4].flatMap((turn) => [
      msg(`u${turn}`, "user", [text(`p${turn}`, `turn ${turn}`)]),
      msg(`a${turn}`, "assistant", [tool(`t${turn}`, "read", { filePath: `/f${turn}` }, numberedLines(`f${turn}`, 2500))]),
    ]),
  );

  it("finds no difference for a pruner that restores its state from disk", () => {
    const stateFile = join(dir, "native.json");
    const restarted = comparePrompts(big, { host: OPENCODE, pruner: () => native() }, { host: OPENCODE, pruner: () => native(stateFile), restart: true });
    expect(restarted).toBeNull();
    // And the pruner did act, so the comparison was not trivially equal.
    const units = [...replaySession(big, { host: OPENCODE, pruner: () => native() })].at(-1)!.units;
    expect(units.some((u) => u.text === "[Old tool result content cleared]")).toBe(true);
  });

  it("reports the first differing call when a pruner keeps state in memory only", () => {
    // Clears every output from its second call on: a new instance per call never gets there.
    const forgetful = (): Pruner => {
      let calls = 0;
      return {
        transform(messages) {
          if (++calls < 2) return;
          for (const m of messages) for (const p of m.parts) if (p.state) p.state.output = "cleared";
        },
        systemPrompt: () => "",
        explain: () => [],
      };
    };
    expect(comparePrompts(recorded, { host: OPENCODE, pruner: forgetful }, { host: OPENCODE, pruner: forgetful, restart: true })).toEqual({ index: 2, messageId: "a2", unit: 2 });
  });
});

describe("deepCopy", () => {
  it("copies every object and array of JSON data, equal in value", () => {
    const original = recorded.messages;
    const copy = deepCopy(original);
    expect(copy).toEqual(original);
    expect(copy[1]).not.toBe(original[1]);
    expect(copy[1].parts).not.toBe(original[1].parts);
    expect(copy[1].parts[0].state).not.toBe(original[1].parts[0].state);
    expect(copy[1].parts[0].state?.time).not.toBe(original[1].parts[0].state?.time);
    expect(copy[1].parts[0].state?.input).not.toBe(original[1].parts[0].state?.input);
  });
});
