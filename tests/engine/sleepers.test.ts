// Waiting candidates (src/engine/wake.ts, sleepers.ts): an age or reduce candidate whose
// time-dependent condition is false leaves its rule's list until the session's clocks reach the
// bound derived from the condition, and one behind a parked want until it is unparked. This is a
// shortcut only: every call must render and save exactly what it does with the index off (every
// candidate evaluated on every call), which the replays here compare call by call.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { sleeping } from "../../src/engine/sleepers.js";
import { wakeOf, type Clocks } from "../../src/engine/wake.js";
import type { FactContext } from "../../src/engine/facts.js";
import { buildGraph, type PartNode } from "../../src/graph/graph.js";
import type { Message } from "../../src/graph/types.js";
import { OPENCODE } from "../../src/host/profile.js";
import { createPruner } from "../../src/index.js";
import { parseCondition } from "../../src/lang/condition.js";
import { assistant, bigText, SID, user } from "../helpers/session.js";
import type { AcpPruner } from "../../src/engine/pruner.js";
import { flagsFromEnv, ruleFileText, ruleSetArb, scheduleArb, sessionSpecArb } from "../property/arbitraries.js";
import { fcParams } from "../property/invariants.js";
import { builtinParams, firstDifference, generatedSwitchRuns, switchRuns, SWITCH_RUNS, withSwitch } from "./switch-runs.js";

const NOW = Date.UTC(2026, 0, 1);
const dir = mkdtempSync(join(tmpdir(), "acp-sleepers-"));

describe("wake bounds", () => {
  // turn 1: a read; turn 2: three more calls; the read is 1 turn and 3 calls old
  const h: Message[] = [user("go"), assistant([{ tool: "read", input: { filePath: "a.ts" }, output: bigText("a", 20) }]), user("next"), assistant([1, 2, 3].map((k) => ({ tool: "bash", input: { command: `echo ${k}` } })))];
  const g = buildGraph(h, undefined, { host: OPENCODE });
  const read = g.nodes.find((n) => n.part.tool === "read")!;
  const ctx = { config: { protectedTools: [], protectedFiles: [] }, params: { turns: 4 }, idleTurns: (n: PartNode) => n.ageTurns, idleCalls: (n: PartNode) => n.ageCalls } as unknown as FactContext;
  const now: Clocks = { turns: g.turns, calls: g.calls, tokens: g.clock!.tokens };
  const wake = (when: unknown) => wakeOf(parseCondition(when))?.(read, ctx, now);

  it("a growing fact compared with >= or > waits for its clock to grow by the difference", () => {
    expect(read.ageTurns).toBe(1);
    expect(read.ageCalls).toBe(3);
    expect(wake({ fact: "ageTurns", operator: "greaterThanInclusive", value: 3 })).toMatchObject({ turns: now.turns + 2, calls: -Infinity });
    expect(wake({ fact: "ageTurns", operator: "greaterThan", value: 3 })).toMatchObject({ turns: now.turns + 3 });
    expect(wake({ fact: "idleCalls", operator: "not:lessThan", value: 10 })).toMatchObject({ calls: now.calls + 7, turns: -Infinity });
    expect(wake({ fact: "ageTurns", operator: "greaterThanInclusive", value: { fact: "params", path: "$.turns" } })).toMatchObject({ turns: now.turns + 3 });
    // every child of all: the latest per clock; any: the earliest
    const two = [{ fact: "ageTurns", operator: "greaterThanInclusive", value: 3 }, { fact: "ageCalls", operator: "greaterThanInclusive", value: 5 }];
    expect(wake({ all: two })).toEqual({ turns: now.turns + 2, calls: now.calls + 2, tokens: -Infinity });
    expect(wake({ any: [two[0], { fact: "ageTurns", operator: "greaterThanInclusive", value: 5 }] })).toEqual({ turns: now.turns + 2, calls: -Infinity, tokens: -Infinity });
    // (either clock may come first: an any over two clocks bounds neither)
    expect(wake({ any: two })).toEqual({ turns: -Infinity, calls: -Infinity, tokens: -Infinity });
  });

  it("a true leaf, a comparison that can turn true any time, or a not bounds nothing; a false static leaf never holds", () => {
    const none = { turns: -Infinity, calls: -Infinity, tokens: -Infinity };
    expect(wake({ fact: "ageTurns", operator: "greaterThanInclusive", value: 1 })).toEqual(none);
    expect(wake({ fact: "idleTurns", operator: "lessThan", value: 1 })).toEqual(none); // a later use lowers idleTurns
    expect(wake({ not: { fact: "ageTurns", operator: "lessThan", value: 3 } })).toEqual(none);
    expect(wake({ all: [{ fact: "ageTurns", operator: "greaterThanInclusive", value: 3 }, { fact: "promptTokens", operator: "greaterThan", value: 10 }] })).toMatchObject({ turns: now.turns + 2 });
    expect(wake({ any: [{ fact: "ageTurns", operator: "greaterThanInclusive", value: 3 }, { fact: "promptTokens", operator: "greaterThan", value: 10 }] })).toEqual(none);
    expect(wake({ all: [{ fact: "ageTurns", operator: "greaterThanInclusive", value: 3 }, { fact: "tool", operator: "equal", value: "bash" }] })).toEqual({ turns: Infinity, calls: Infinity, tokens: Infinity });
    expect(wakeOf(parseCondition({ fact: "promptTokens", operator: "greaterThan", value: 10 }))).toBeUndefined();
  });

  it("superseded equal true, false now, waits for a supersede mark on the part (beside its clocks in an all; not in an any)", () => {
    const none = { turns: -Infinity, calls: -Infinity, tokens: -Infinity };
    const marked = (yes: boolean) => ({ ...ctx, supersededRule: () => (yes ? "r" : undefined) }) as FactContext;
    const at = (when: unknown, yes: boolean) => wakeOf(parseCondition(when))?.(read, marked(yes), now);
    const sup = { fact: "superseded", operator: "equal", value: true };
    expect(at(sup, false)).toEqual({ ...none, mark: true });
    expect(at(sup, true)).toEqual(none);
    expect(at({ all: [sup, { fact: "ageTurns", operator: "greaterThanInclusive", value: 3 }] }, false)).toEqual({ ...none, turns: now.turns + 2, mark: true });
    expect(at({ any: [sup, { fact: "ageTurns", operator: "greaterThanInclusive", value: 3 }] }, false)).toEqual(none); // the mark may come first
    expect(at({ any: [sup, sup] }, false)).toEqual({ ...none, mark: true });
    // other forms wait for nothing (not:, false, a reference): evaluated on every call as before
    expect(wakeOf(parseCondition({ fact: "superseded", operator: "not:equal", value: false }))).toBeUndefined();
    expect(wakeOf(parseCondition({ fact: "superseded", operator: "equal", value: false }))).toBeUndefined();
  });
});

interface Step {
  waiting: number;
  prompt: string;
  state: string;
}


const withSleeping = <T>(on: boolean, f: () => T): T => withSwitch(sleeping, on, f);

/** Replays `h` call by call (the index on or off); per call what the provider got and the state. */
function replay(make: () => AcpPruner, h: Message[], on: boolean, between?: (k: number, p: AcpPruner) => void): Step[] {
  const p = make();
  const out: Step[] = [];
  let k = 0;
  for (let i = 1; i <= h.length; i++) {
    if (i < h.length && h[i].info.role !== "assistant") continue;
    between?.(k, p);
    const ctx = structuredClone(h.slice(0, i));
    withSleeping(on, () => p.transform(ctx, { now: NOW + k++ * 60_000 }));
    out.push({ waiting: p.lastCall(SID)?.waiting ?? 0, prompt: JSON.stringify(ctx), state: JSON.stringify(p.state(SID)) });
  }
  return out;
}

describe("waiting candidates", () => {
  it("a part behind a parked want goes back to the age rules once the want is unparked (here: its rule backed off)", () => {
    // ls2 is superseded by ls3 while ls1 (older) is held in full: ls2's want is parked, and an age
    // rule for ls1 and ls2 skips ls2 (its output is wanted). A restore of a part the supersede rule
    // decided is a regret event: with regretLimit 1 the rule backs off and ls2's want is gone, so
    // once ls1's hold ends the age rule decides both.
    const ls = (id: string, lines: number) => assistant([{ tool: "bash", input: { command: "ls" }, output: bigText(id, lines), id }]);
    const cat = (id: string) => assistant([{ tool: "bash", input: { command: "cat notes.txt" }, output: bigText("notes", 30), id }]);
    const filler = (k: number) => assistant([{ tool: "bash", input: { command: `echo ${k}` }, output: `done ${k}` }]);
    const h = [user("go"), ls("prt_ls1", 40), ls("prt_ls2", 41), ls("prt_ls3", 42), cat("prt_cat1"), cat("prt_cat2"), ...Array.from({ length: 16 }, (_, k) => filler(k)), assistant([], "done")];
    const ls1 = bigText("prt_ls1", 40).length;
    const ls2 = bigText("prt_ls2", 41).length;
    const file = join(dir, "backed-off.yaml");
    writeFileSync(
      file,
      `rules:
  hold-first:
    phase: protect
    description: test
    when:
      all:
        - { fact: tool, operator: equal, value: bash }
        - { fact: outputChars, operator: equal, value: ${ls1} }
        - { fact: ageCalls, operator: lessThan, value: 12 }
    then: { action: protect }
  clear-both:
    phase: age
    description: test
    when:
      all:
        - { fact: tool, operator: equal, value: bash }
        - { fact: outputChars, operator: in, value: [${ls1}, ${ls2}] }
        - { fact: ageCalls, operator: greaterThanInclusive, value: 3 }
    then: { action: clear }
`,
    );
    const config = { tool: false, idsFromTokens: 0, commit: { minTokens: 0, breakEven: 0, pressureTokens: 0, regretLimit: 1 } };
    const make = () => createPruner({ preset: "balanced", rules: [file], config });
    let restored: boolean | undefined;
    const between = (k: number, p: AcpPruner) => {
      if (k === 7) restored = p.restore(SID, "prt_cat1");
    };
    const waiting = replay(make, h, true, between);
    const plain = replay(make, h, false, between);
    expect(restored).toBe(true);
    expect(firstDifference(waiting, plain)).toBe("");
    const rule = (step: Step, part: string) => (JSON.parse(step.state) as { decisions: Record<string, { output?: { rule: string } }> }).decisions[part]?.output?.rule;
    expect(waiting[6].waiting).toBeGreaterThan(0);
    expect(rule(waiting[6], "prt_ls2")).toBeUndefined();
    const last = waiting[waiting.length - 1];
    expect([rule(last, "prt_ls1"), rule(last, "prt_ls2")]).toEqual(["clear-both", "clear-both"]);
  });

  it("on the generated session most candidates wait, and every call agrees with the index off", () => {
    const { on: waiting, off: plain } = generatedSwitchRuns(16, { now: NOW, withSwitch: withSleeping, count: (p, sid) => p.lastCall(sid)?.waiting ?? 0 });
    expect(plain.every((s) => s.count === 0)).toBe(true);
    expect(firstDifference(waiting, plain)).toBe("");
    expect(Math.min(...waiting.map((s) => s.count))).toBeGreaterThan(50);
  });
});

describe("waiting candidates on random rule sets and sessions", () => {
  const seen = { waiting: 0 };

  test.prop([ruleSetArb(builtinParams()), sessionSpecArb(flagsFromEnv()), scheduleArb], fcParams(SWITCH_RUNS))(
    "every call (with compaction, reverts, restores and prune requests between calls) renders and saves what it does with the index off",
    (rs, spec, schedule) => {
      const { on: waiting, off: plain } = switchRuns(rs, spec, schedule, { dir, now: NOW, withSwitch: withSleeping, count: (p, sid) => p.lastCall(sid)?.waiting ?? 0 });
      seen.waiting += waiting.filter((s) => s.count > 0).length;
      expect(firstDifference(waiting, plain), ruleFileText(rs.rules)).toBe("");
    },
    120_000,
  );

  it("the random runs left candidates waiting on some calls (the comparison is not vacuous)", () => {
    expect(seen.waiting).toBeGreaterThan(0);
  });
});

