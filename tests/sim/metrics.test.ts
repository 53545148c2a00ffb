import { describe, expect, it } from "vitest";
import type { ExplainEntry, Pruner } from "../../src/engine/api.js";
import {
  ANTHROPIC_CACHE,
  OPENAI_CACHE,
  UNEXPLAINED,
  cacheCost,
  measureSession,
  measureSessions,
  percentile,
  relativeTo,
  sessionsOverLimit,
  timingOf,
  totalOf,
} from "../../src/sim/metrics.js";
import { unitTokens } from "../../src/graph/prompt.js";
import { msg, reasoning, session, text, tool } from "./build.js";
import { OPENCODE } from "../../src/host/profile.js";

// Token sizes are chosen so every figure below can be checked by hand: "aaaa" = 1 token, etc.
const turns = session([
  msg("u1", "user", [text("p1", "aaaa")]), // 1 token
  msg("a1", "assistant", [reasoning("r1", "rrrrrrrr"), tool("tr1", "read", {}, "x".repeat(40))]), // 2; call "read{}" 2 + output 10
  msg("a2", "assistant", [text("x2", "done")]), // 1
  msg("u2", "user", [text("p2", "bbbb")]), // 1
  msg("a3", "assistant", [text("x3", "ok")]),
]);

describe("prefix, breaks and cache cost (no pruning)", () => {
  const figures = measureSession(turns, { host: OPENCODE });

  it("measures each call: tokens, reusable prefix, and whether the previous prompt is a prefix", () => {
    expect(figures.perCall.map(({ messageId, tokens, reusable, prefixBreak }) => ({ messageId, tokens, reusable, prefixBreak }))).toEqual([
      { messageId: "a1", tokens: 1, reusable: 0, prefixBreak: false }, // first call: nothing cached, not a break
      { messageId: "a2", tokens: 15, reusable: 1, prefixBreak: false }, // u1 + r1 + t1 call + t1 output
      // u2 arrives: the provider drops r1, so only p1 is still a common prefix.
      { messageId: "a3", tokens: 15, reusable: 1, prefixBreak: true },
    ]);
  });

  it("totals billed tokens, peak context, reusable tokens and breaks", () => {
    expect(figures).toMatchObject({ calls: 3, billedTokens: 31, peakContext: 15, reusableTokens: 2, prefixBreaks: 1 });
  });

  it("prices cache reads at 0.1 and the rest at 1.25 (Anthropic) or 1.0 (OpenAI)", () => {
    expect(cacheCost(100, 40, ANTHROPIC_CACHE)).toBeCloseTo(4 + 75);
    expect(cacheCost(100, 40, OPENAI_CACHE)).toBeCloseTo(4 + 60);
    expect(figures.anthropicCost).toBeCloseTo(1.25 * 1 + (0.1 * 1 + 1.25 * 14) * 2);
    expect(figures.openaiCost).toBeCloseTo(1 + (0.1 + 14) * 2);
  });

  it("matches a unit only when part id and text both match", () => {
    // Same texts, but the first part has a new id on the second call: nothing is reusable.
    const renamed = session([
      msg("u1", "user", [text("p1", "aaaa")]),
      msg("a1", "assistant", [text("x1", "bbbb")]),
      msg("a2", "assistant", [text("x2", "cccc")]),
    ]);
    const rename: Pruner = {
      transform(messages) {
        if (messages.length > 1) messages[0].parts[0].id = "p1-renamed";
      },
      systemPrompt: () => "",
      explain: () => [],
    };
    const f = measureSession(renamed, { host: OPENCODE, pruner: () => rename });
    expect(f.perCall.map((c) => [c.reusable, c.prefixBreak])).toEqual([
      [0, false],
      [0, true],
    ]);
  });

  it("reports figures relative to the no-pruning replay, in percent", () => {
    const base = { ...figures, billedTokens: 200, peakContext: 50, anthropicCost: 100, openaiCost: 80, anthropicCostWithRecovery: 100, openaiCostWithRecovery: 80 };
    const pruned = { ...figures, billedTokens: 150, peakContext: 50, anthropicCost: 130, openaiCost: 60, anthropicCostWithRecovery: 150, openaiCostWithRecovery: 64 };
    expect(relativeTo(pruned, base)).toEqual({
      billedTokensPct: -25,
      peakContextPct: 0,
      anthropicCostPct: 30,
      openaiCostPct: -25,
      anthropicCostWithRecoveryPct: 50,
      openaiCostWithRecoveryPct: -20,
    });
  });
});

describe("quote-loss and the per-rule breakdown", () => {
  const LINE = "const answer = computeTheAnswer(universe, everything);";
  const OTHER = "export function everythingElse(that: matters): void {}";
  const output = `1: ${LINE}\n2: some other content that nobody quotes later on`;
  const recorded = session([
    msg("u1", "user", [text("p1", "go")]),
    msg("a1", "assistant", [tool("t1", "read", { filePath: "/a" }, output), tool("t2", "read", { filePath: "/b" }, OTHER)]),
    msg("a2", "assistant", [text("x2", `${LINE}\n${OTHER}`)]),
    msg("a3", "assistant", [text("x3", "finished")]),
  ]);

  // Clears t1 and says so; empties t2 without an explain() entry.
  const pruner = (): Pruner => {
    let explained: ExplainEntry[] = [];
    return {
      transform(messages) {
        explained = [];
        for (const part of messages.flatMap((m) => m.parts)) {
          if (part.id === "t1") {
            part.state!.time = { ...part.state!.time, compacted: 1 };
            explained.push({ partId: "t1", messageId: "a1", rule: "clear-old", action: "clear", tokensSaved: 99, slot: "output" });
          }
          if (part.id === "t2") part.state!.output = "";
        }
      },
      systemPrompt: () => "",
      explain: () => explained,
    };
  };

  it("counts quote events per call and loses those whose line the prompt no longer shows", () => {
    const none = measureSession(recorded, { host: OPENCODE });
    expect(none.perCall.map((c) => [c.quoteEvents, c.quoteLost])).toEqual([[0, 0], [2, 0], [0, 0]]);
    const pruned = measureSession(recorded, { host: OPENCODE, pruner });
    expect(pruned.perCall.map((c) => [c.quoteEvents, c.quoteLost])).toEqual([[0, 0], [2, 2], [0, 0]]);
    expect(pruned).toMatchObject({ quoteEvents: 2, quoteLost: 2, quoteLoss: 1 });
  });

  it("attributes each lost line to the rule that pruned the part holding it", () => {
    const { quoteLosses } = measureSession(recorded, { host: OPENCODE, pruner });
    expect(quoteLosses).toEqual([
      { sessionId: "ses_sim", messageId: "a2", line: LINE, partId: "t1", rule: "clear-old", reReadTokens: unitTokens(output) },
      { sessionId: "ses_sim", messageId: "a2", line: OTHER, partId: "t2", rule: UNEXPLAINED, reReadTokens: unitTokens(OTHER) },
    ]);
  });

  it("blames the newest hidden part a rule claims when several parts held the line", () => {
    const twice = session([
      msg("u1", "user", [text("p1", "go")]),
      msg("a1", "assistant", [tool("old", "read", {}, LINE)]),
      msg("a2", "assistant", [tool("new", "grep", {}, `7: ${LINE}`)]),
      msg("a3", "assistant", [text("x3", LINE)]),
    ]);
    const hideBoth = (): Pruner => ({
      transform(messages) {
        for (const part of messages.flatMap((m) => m.parts)) if (part.state) part.state.output = "";
      },
      systemPrompt: () => "",
      explain: () => [{ partId: "old", messageId: "a1", rule: "drop-old", action: "clear", tokensSaved: 1, slot: "output" }],
    });
    expect(measureSession(twice, { host: OPENCODE, pruner: hideBoth }).quoteLosses).toMatchObject([{ partId: "old", rule: "drop-old" }]);
  });

  it("a part whose output and input two rules pruned: a lost line is blamed on the output's rule, the saving shared", () => {
    const COMMAND = "python3 scripts/compute_the_answer.py --universe everything";
    const both = session([
      msg("u1", "user", [text("p1", "go")]),
      msg("a1", "assistant", [tool("t1", "bash", { command: COMMAND }, output)]),
      msg("a2", "assistant", [text("x2", `${LINE}\n${COMMAND}`)]),
    ]);
    const twoRules = (): Pruner => ({
      transform(messages) {
        for (const part of messages.flatMap((m) => m.parts))
          if (part.id === "t1") {
            part.state!.output = "";
            part.state!.input = {};
          }
      },
      systemPrompt: () => "",
      explain: () => [
        { partId: "t1", messageId: "a1", rule: "clear-output", action: "clear", tokensSaved: 30, slot: "output" },
        { partId: "t1", messageId: "a1", rule: "strip-input", action: "strip-input", tokensSaved: 10, slot: "input" },
      ],
    });
    const f = measureSession(both, { host: OPENCODE, pruner: twoRules });
    // quote sources are output lines (the command was the agent's own writing)
    expect(f.quoteLosses.map((q) => [q.line, q.rule])).toEqual([[LINE, "clear-output"]]);
    const saved = Object.fromEntries(f.rules.map((r) => [r.rule, r.tokensSaved]));
    expect(saved["clear-output"]).toBeGreaterThan(0);
    expect(saved["clear-output"]).toBeCloseTo(3 * saved["strip-input"], -1);
  });

  it("measures each rule's billed-token savings from the prompts, not from the rule's own claim", () => {
    const { rules } = measureSession(recorded, { host: OPENCODE, pruner });
    // t1 is in the context of calls a2 and a3; its call unit is unchanged, its output becomes the placeholder.
    const savedPerCall = unitTokens(output) - unitTokens(OPENCODE.clearedOutput);
    expect(rules).toEqual([
      { rule: UNEXPLAINED, partsHit: 0, tokensSaved: 0, quoteLosses: 1, reReads: 1, recoveryTokens: unitTokens(OTHER) },
      { rule: "clear-old", partsHit: 1, tokensSaved: 2 * savedPerCall, quoteLosses: 1, reReads: 1, recoveryTokens: unitTokens(output) },
    ]);
  });

  it("adds sessions up in the total", () => {
    const { sessions, total } = measureSessions([recorded, turns], { host: OPENCODE, pruner });
    expect(total.calls).toBe(6);
    expect(total.billedTokens).toBe(sessions[0].billedTokens + sessions[1].billedTokens);
    expect(total.peakContext).toBe(Math.max(sessions[0].peakContext, sessions[1].peakContext));
    expect(total.rules.find((r) => r.rule === "clear-old")?.partsHit).toBe(1);
    expect(total.quoteLosses).toHaveLength(2);
    expect(totalOf(sessions)).toEqual(total);
  });
});

describe("recovery: each lost quote's part is re-read", () => {
  const A1 = "const first = parseTheFirstLineOfTheFile(input, options);";
  const A2 = "const second = parseTheSecondLineOfTheFile(input, options);";
  const A3 = "const third = parseTheThirdLineOfTheFile(input, options);";
  const B1 = "export function helperThatLivesInAnotherFile(): number {";
  const outA = `1: ${A1}\n2: ${A2}\n3: ${A3}`;
  const recorded = session([
    msg("u1", "user", [text("p1", "go")]),
    msg("a1", "assistant", [tool("ta", "read", { filePath: "/a" }, outA), tool("tb", "read", { filePath: "/b" }, B1)]),
    // call a2 quotes two lines of ta and one of tb; a3 quotes nothing; a4 quotes ta's third line
    msg("a2", "assistant", [text("x2", `${A1}\n${A2}`), tool("e1", "edit", { filePath: "/b", oldString: B1 }, "ok")]),
    msg("a3", "assistant", [text("x3", "checking")]),
    msg("a4", "assistant", [text("x4", A3)]),
  ]);
  const hide = (ids: string[], rule = "hide"): (() => Pruner) => () => ({
    transform(messages) {
      for (const part of messages.flatMap((m) => m.parts)) if (ids.includes(part.id)) part.state!.time = { ...part.state!.time, compacted: 1 };
    },
    systemPrompt: () => "",
    explain: () => ids.map((partId) => ({ partId, messageId: "a1", rule, action: "clear", tokensSaved: 0, slot: "output" as const })),
  });

  it("charges each hidden part's full output once per call, however many of its lines were lost there", () => {
    const f = measureSession(recorded, { host: OPENCODE, pruner: hide(["ta", "tb"]) });
    expect(f.perCall.map((c) => [c.quoteLost, c.reReads, c.recoveryTokens])).toEqual([
      [0, 0, 0],
      [3, 2, unitTokens(outA) + unitTokens(B1)], // a2: ta (two lines) and tb, one re-read each
      [0, 0, 0],
      [1, 1, unitTokens(outA)], // a4: ta again, re-read again on this call
    ]);
    expect(f).toMatchObject({ reReads: 3, recoveryTokens: 2 * unitTokens(outA) + unitTokens(B1) });
    expect(f.rules).toEqual([{ rule: "hide", partsHit: 2, tokensSaved: expect.any(Number), quoteLosses: 4, reReads: 3, recoveryTokens: 2 * unitTokens(outA) + unitTokens(B1) }]);
  });

  it("adds the re-read tokens to the costs as new, uncached input", () => {
    const f = measureSession(recorded, { host: OPENCODE, pruner: hide(["ta"]) });
    expect(f.recoveryTokens).toBe(2 * unitTokens(outA));
    expect(f.anthropicCostWithRecovery).toBeCloseTo(f.anthropicCost + 1.25 * f.recoveryTokens);
    expect(f.openaiCostWithRecovery).toBeCloseTo(f.openaiCost + 1.0 * f.recoveryTokens);
    const none = measureSession(recorded, { host: OPENCODE });
    expect(none).toMatchObject({ reReads: 0, recoveryTokens: 0, anthropicCostWithRecovery: none.anthropicCost, openaiCostWithRecovery: none.openaiCost });
  });

  it("counts the sessions whose cost with recovery is more than 2% above no pruning", () => {
    const none = measureSessions([recorded, recorded], { host: OPENCODE }).sessions;
    // the first replay hides nothing (0%); the second hides ta, whose re-reads cost more than it saves
    const pruned = [measureSession(recorded, { host: OPENCODE }), measureSession(recorded, { host: OPENCODE, pruner: hide(["ta"]) })];
    expect(relativeTo(pruned[1], none[1]).anthropicCostWithRecoveryPct).toBeGreaterThan(2);
    expect(sessionsOverLimit(pruned, none)).toEqual({ limitPct: 2, sessions: ["ses_sim"], anthropic: 1, openai: 1 });
    expect(sessionsOverLimit(pruned, none, 1000)).toMatchObject({ sessions: [], anthropic: 0, openai: 0 });
  });
});

describe("transform time", () => {
  it("reports the first call apart, then median and p95 of the rest", () => {
    expect(timingOf([50, 3, 1, 2])).toEqual({ firstMs: 50, medianMs: 2, p95Ms: 3, calls: 4 });
    expect(timingOf([])).toEqual({ firstMs: 0, medianMs: 0, p95Ms: 0, calls: 0 });
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95)).toBe(10);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.5)).toBe(5);
  });

  it("times every call of a pruned replay and none without a pruner", () => {
    expect(measureSession(turns, { host: OPENCODE }).transform.calls).toBe(0);
    expect(measureSession(turns, { host: OPENCODE, pruner: () => ({ transform() {}, systemPrompt: () => "", explain: () => [] }) }).transform.calls).toBe(3);
  });
});
