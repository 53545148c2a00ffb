// Parked wants (src/engine/parked.ts): a supersede want blocked by an older view that stays in full
// is carried to the next calls without being evaluated again. Parking is a shortcut only: every
// call must render and save exactly what it does with parking off (the plain evaluation of every
// want on every call), which is what each test here compares, call by call.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { parking } from "../../src/engine/parked.js";
import type { AcpPruner } from "../../src/engine/pruner.js";
import type { Message } from "../../src/graph/types.js";
import { createPruner } from "../../src/index.js";
import { assistant, bigText, SID, toolPart, user } from "../helpers/session.js";
import { flagsFromEnv, ruleFileText, ruleSetArb, scheduleArb, sessionSpecArb } from "../property/arbitraries.js";
import { fcParams } from "../property/invariants.js";
import { goldenSessions } from "../golden/replay.js";
import { callTime } from "../../src/sim/replay.js";
import { builtinParams, firstDifference, generatedSwitchRuns, switchRuns, SWITCH_RUNS, withSwitch } from "./switch-runs.js";

/** Runs `f` with parking on or off, and switches it back on. */
const withParking = (on: boolean, f: () => void) => withSwitch(parking, on, f);

const dir = mkdtempSync(join(tmpdir(), "acp-parked-"));
/** Every pending prune goes at once (minTokens 0), so a blocked want is blocked on every call. */
const CONFIG = { tool: false, idsFromTokens: 0, commit: { minTokens: 0, breakEven: 0, pressureTokens: 0 } };

function rulesFile(name: string, yaml: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, `rules:\n${yaml}`);
  return file;
}

/** A rule on the one `bash` output of `chars` characters, with conditions on its `ageCalls`. */
const bashRule = (id: string, phase: string, chars: number, ages: string[], action: string) => `  ${id}:
    phase: ${phase}
    description: test
    when:
      all:
        - { fact: tool, operator: equal, value: bash }
        - { fact: outputChars, operator: equal, value: ${chars} }
${ages.map((a) => `        - { fact: ageCalls, ${a} }`).join("\n")}
    then: { action: ${action} }
`;
/** A protect rule for the one `ls` output of `chars` characters, while `ageCalls` is in [from, to). */
const holdLs = (id: string, chars: number, from: number, to: number) =>
  bashRule(id, "protect", chars, [`operator: greaterThanInclusive, value: ${from}`, `operator: lessThan, value: ${to}`], "protect");

interface Step {
  parked: number;
  prompt: string;
  state: string;
}

/** Replays `h` call by call through `p` (parking on or off); per call what the provider got and the state. */
function replay(p: AcpPruner, h: Message[], on: boolean, between?: (k: number, p: AcpPruner) => void): Step[] {
  const out: Step[] = [];
  let k = 0;
  for (let i = 1; i <= h.length; i++) {
    if (i < h.length && h[i].info.role !== "assistant") continue;
    between?.(k++, p);
    const ctx = structuredClone(h.slice(0, i));
    withParking(on, () => p.transform(ctx, { now: NOW + k * 60_000 }));
    out.push({ parked: p.lastCall(SID)?.parked ?? 0, prompt: JSON.stringify(ctx), state: JSON.stringify(p.state(SID)) });
  }
  return out;
}

const NOW = Date.UTC(2026, 0, 1);
/** write-superseded counting edits' acknowledgements as views again: the chains that block and park wants. */
const ACKS_AS_VIEWS = { rules: { "write-superseded": { with: { views: true } } } };
/**
 * fc.sample seed and count of the fixed random-rule runs below: a sample that parks wants, with and
 * without CI=true (a new fact or param in the catalogue changes the draws, and an older view the host
 * compacted no longer blocks: 12 runs from seed 47 include one that parks; pick again if it fails).
 */
const PARKING_SEED = 47;
const PARKING_RUNS = 12;


/** Both ways: each call's prompt and state must be the same. Returns the parked run's steps. */
function same(make: () => AcpPruner, h: Message[], between?: (k: number, p: AcpPruner) => void): Step[] {
  const parked = replay(make(), h, true, between);
  const plain = replay(make(), h, false, between);
  expect(plain.every((s) => s.parked === 0)).toBe(true);
  expect(firstDifference(parked, plain)).toBe("");
  return parked;
}

const superseded = (h: Message[], id: string) => String(toolPart(h, id)?.state?.output).includes("superseded");
/** An age rule that clears the one `bash` output of `chars` characters once it is `calls` calls old. */
const clearAt = (chars: number, calls: number) => bashRule("clear-early", "age", chars, [`operator: greaterThanInclusive, value: ${calls}`], "clear");
const run = (out: string, id: string) => assistant([{ tool: "bash", input: { command: "ls" }, output: out, id }]);
const work = (k: number) => assistant([{ tool: "bash", input: { command: `echo ${k}` }, output: bigText(`w${k}`, 20) }]);
const filler = (k: number) => assistant([{ tool: "bash", input: { command: `echo ${k}` }, output: `done ${k}` }]);
const ls = (id: string, lines: number) => assistant([{ tool: "bash", input: { command: "ls" }, output: bigText(id, lines), id }]);

/** Three identical `ls` calls: the second is superseded by the third, the first (held by a rule) by the second. */
function chain(fillers: number): Message[] {
  return [user("go"), ls("prt_ls1", 40), ls("prt_ls2", 41), ls("prt_ls3", 42), ...Array.from({ length: fillers }, (_, k) => filler(k)), assistant([], "done")];
}
const LS1 = bigText("prt_ls1", 40).length;
const LS2 = bigText("prt_ls2", 41).length;

describe("parked wants", () => {
  it("a want blocked by an older view held in full is parked, and goes through with it once that view is wanted", () => {
    // ls1 is protected until 8 calls old: ls2's supersede is blocked by it (never stale over fresh)
    const file = rulesFile("hold-first", holdLs("hold-first", LS1, 0, 8));
    const h = chain(10);
    const steps = same(() => createPruner({ preset: "balanced", rules: [file], config: CONFIG }), h);
    // parked from the call after ls3 until ls1's protection ends, then both decided together
    expect(steps.map((s) => s.parked)).toContain(1);
    expect(steps[steps.length - 1].parked).toBe(0);
    const last = JSON.parse(steps[steps.length - 1].prompt) as Message[];
    expect(superseded(last, "prt_ls1") && superseded(last, "prt_ls2")).toBe(true);
    const firstParked = steps.findIndex((s) => s.parked === 1);
    const atPark = JSON.parse(steps[firstParked].prompt) as Message[];
    expect(superseded(atPark, "prt_ls2")).toBe(false);
  });

  it("a want blocked only because forcing its older view aside does not repay yet is parked until the calls reach its break-even: it goes on that call, as evaluated", () => {
    // random-rules.test.ts, seed -355104030: a2's supersede needs a1 (whose own note is no smaller
    // than its output) replaced beside it, and that re-cache repays only once the calls since the
    // cache was written have grown (forcedRepays). Parked without a wake bound, a2 waited for a
    // change that never came; parked under one (RepayBound.wakeAt), it is woken on the call it repays.
    const h = [user("go"), run("ok", "prt_a1"), run(bigText("a2", 40), "prt_a2"), run(bigText("a3", 41), "prt_a3"), ...Array.from({ length: 14 }, (_, k) => work(k)), assistant([], "done")];
    const config = { ...CONFIG, commit: { ...CONFIG.commit, breakEven: 500 } };
    const steps = same(() => createPruner({ preset: "balanced", config }), h);
    const at = steps.findIndex((s) => superseded(JSON.parse(s.prompt) as Message[], "prt_a2"));
    expect(at).toBeGreaterThan(3); // not at once: a3 came at call 3 and forcing a1 did not repay yet
    expect(steps.slice(3, at).some((s) => s.parked > 0)).toBe(true); // parked while it waited
    expect(superseded(JSON.parse(steps[at].prompt) as Message[], "prt_a1")).toBe(true); // beside it, never stale over fresh
  });

  it("a chain of views parked for want of a break-even is woken when the first change to the sent prefix moves below it", () => {
    // a1 (too small for its note) ← a2 ← a3 ← a4: a2's and a3's supersedes need a1 forced aside,
    // which never repays at this break-even; the chain parks whole. At 9 calls old, an output sent
    // before a1 is cleared: the first change to the sent prefix is then before a1, which goes free,
    // and the chain with it (settle runs at another first change than the chain was parked at).
    const early = bigText("early", 30);
    const file = rulesFile("clear-early", clearAt(early.length, 9));
    const h = [user("go"), assistant([{ tool: "bash", input: { command: "cat log" }, output: early, id: "prt_early" }]), run("ok", "prt_a1"), run(bigText("a2", 40), "prt_a2"), run(bigText("a3", 41), "prt_a3"), run(bigText("a4", 42), "prt_a4"), ...Array.from({ length: 10 }, (_, k) => work(k)), assistant([], "done")];
    const config = { ...CONFIG, commit: { ...CONFIG.commit, breakEven: 1e6 } };
    const steps = same(() => createPruner({ preset: "balanced", rules: [file], config }), h);
    const prompts = steps.map((s) => JSON.parse(s.prompt) as Message[]);
    const at = prompts.findIndex((m) => superseded(m, "prt_a2"));
    expect(at).toBeGreaterThan(5);
    expect(steps[at - 1].parked).toBe(2); // a2 and a3, up to the call before
    expect(toolPart(prompts[at], "prt_early")?.state?.output).not.toBe(early); // cleared on that call
    expect(toolPart(prompts[at - 1], "prt_early")?.state?.output).toBe(early);
    expect(["prt_a1", "prt_a3"].every((id) => superseded(prompts[at], id))).toBe(true);
  });

  it("a parked want whose own part becomes protected is unparked, and parked again after", () => {
    // ls1 held for good (until 1000 calls old); ls2 protected while 3 to 6 calls old
    const file = rulesFile("hold-both", holdLs("hold-first", LS1, 0, 1000) + holdLs("hold-second", LS2, 3, 6));
    const steps = same(() => createPruner({ preset: "balanced", rules: [file], config: CONFIG }), chain(10));
    const parked = steps.map((s) => s.parked);
    // ls2 is 1 call old when ls3 supersedes it: parked at 1–2 calls old, not while protected (3–5), again from 6
    expect(parked.slice(3, 5)).toEqual([1, 1]);
    expect(parked.slice(5, 8)).toEqual([0, 0, 0]);
    expect(parked.slice(8)).toEqual(parked.slice(8).map(() => 1));
  });

  it("a want parked behind an older view that was protected only for a while goes when the protection ends, as evaluated", () => {
    // a1 ("ok", too short for its own supersede note) is protected while under 8 calls old; a2's
    // supersede is blocked by it and parked. When the protection ends, a1 can be forced aside: both go.
    const file = rulesFile("hold-short", holdLs("hold-first", 2, 0, 8));
    const h = [user("go"), run("ok", "prt_a1"), run(bigText("a2", 40), "prt_a2"), run(bigText("a3", 41), "prt_a3"), ...Array.from({ length: 12 }, (_, k) => filler(k)), assistant([], "done")];
    const steps = same(() => createPruner({ preset: "balanced", rules: [file], config: CONFIG }), h);
    expect(steps.some((s) => s.parked > 0)).toBe(true);
    const last = JSON.parse(steps[steps.length - 1].prompt) as Message[];
    expect(superseded(last, "prt_a2")).toBe(true);
  });

  it("a restore between calls unparks: the restored part is pinned, so its want is gone", () => {
    // long commands: stale-long-command strips ls2's input once a turn is over, so ls2 has a decision to restore
    const cmd = `ls ${"-l ".repeat(250)}`;
    const lsLong = (id: string, lines: number) => assistant([{ tool: "bash", input: { command: cmd }, output: bigText(id, lines), id }]);
    const h = [user("go"), lsLong("prt_ls1", 40), lsLong("prt_ls2", 41), lsLong("prt_ls3", 42), filler(0), user("next"), ...Array.from({ length: 6 }, (_, k) => filler(k + 1)), assistant([], "done")];
    const file = rulesFile("hold-first-long", holdLs("hold-first", LS1, 0, 1000));
    let restored: boolean | undefined;
    const between = (k: number, p: AcpPruner) => {
      if (k === 8) restored = p.restore(SID, "prt_ls2");
    };
    const steps = same(() => createPruner({ preset: "balanced", rules: [file], config: CONFIG }), h, between);
    expect(restored).toBe(true);
    expect(steps.slice(3, 8).map((s) => s.parked)).toEqual([1, 1, 1, 1, 1]);
    expect(steps.slice(8).map((s) => s.parked)).toEqual(steps.slice(8).map(() => 0));
  });

  it("on the generated session most blocked wants are parked, and every call agrees with parking off", () => {
    // edits' acknowledgements counted as views (as before write-superseded's `views: false`) make
    // the chains of older views that block most wants on this session
    const { on: parked, off: plain } = generatedSwitchRuns(12, { now: NOW, withSwitch: withParking, count: (p, sid) => p.lastCall(sid)?.parked ?? 0 }, ACKS_AS_VIEWS);
    expect(firstDifference(parked, plain)).toBe("");
    expect(Math.min(...parked.slice(1).map((s) => s.count))).toBeGreaterThan(0);
  });
});

describe("parked wants on random rule sets and sessions", () => {
  const seen = { parked: 0, calls: 0 };

  // Parking is rare on random runs since an older view too small for its note is replaced beside
  // the newer one (commit, forcedView): these fixed samples always include runs that park.
  const arbs = [ruleSetArb(builtinParams()), sessionSpecArb(flagsFromEnv()), scheduleArb] as const;
  const examples = fc.sample(fc.tuple(...arbs), { seed: PARKING_SEED, numRuns: PARKING_RUNS });
  test.prop([...arbs], { ...fcParams(SWITCH_RUNS), examples })(
    "every call (with compaction, reverts, restores and prune requests between calls) renders and saves what it does with parking off",
    (rs, spec, schedule) => {
      const { on: parked, off: plain } = switchRuns(rs, spec, schedule, {
        dir,
        now: NOW,
        withSwitch: withParking,
        count: (p, sid) => p.lastCall(sid)?.parked ?? 0,
      });
      seen.calls += parked.length;
      seen.parked += parked.filter((s) => s.count > 0).length;
      expect(firstDifference(parked, plain), ruleFileText(rs.rules)).toBe("");
    },
    120_000,
  );

  it("the random runs parked wants on some calls (the comparison is not vacuous)", () => {
    expect(seen.parked).toBeGreaterThan(0);
  });
});


describe("parked wants when the batch goes (golden gen/mix2 under compact)", () => {
  // The parked run differed from the plain one from call 38 on, for two reasons: evaluated, a parked
  // want went into settle with the batch and lowered its first change to the sent prefix (`from`)
  // before it was blocked again (now only what goes through places it, evaluated or parked); and a
  // want blocked by a forced older view that waited for its break-even further down the chain was
  // parked as if blocked for good (now it is marked mayRepay like the link that waits, and re-evaluated).
  const mix2 = () => goldenSessions().find((s) => s.name === "gen/mix2")!.messages();
  const run = (on: boolean): Step[] => {
    const h = mix2();
    const p = createPruner({ preset: "compact", config: ACKS_AS_VIEWS });
    const sid = h[0].info.sessionID;
    const out: Step[] = [];
    for (let i = 1; i < h.length; i++) {
      if (h[i].info.role !== "assistant") continue;
      const ctx = structuredClone(h.slice(0, i));
      const now = callTime(h[i]);
      withParking(on, () => p.transform(ctx, now !== undefined ? { now } : {}));
      out.push({ parked: p.lastCall(sid)?.parked ?? 0, prompt: JSON.stringify(ctx), state: JSON.stringify(p.state(sid)) });
    }
    return out;
  };
  const parked = run(true);
  const plain = run(false);

  it("the parked run equals the plain one up to call 57, with wants parked on the way", () => {
    expect(firstDifference(parked.slice(0, 57), plain.slice(0, 57))).toBe("");
    expect(parked.slice(0, 57).some((s) => s.parked > 0)).toBe(true);
  });

  it("the parked run equals the plain one on every call", () => {
    expect(firstDifference(parked, plain)).toBe("");
  });
});
