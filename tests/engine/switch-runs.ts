// Random rule sets and sessions replayed twice, with an engine shortcut (parking, the sleeping index)
// on and off: both runs must render and save the same. Shared by parked.test.ts and sleepers.test.ts.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPruner } from "../../src/index.js";
import type { AcpPruner } from "../../src/engine/pruner.js";
import type { AcpConfig } from "../../src/rules/types.js";
import { buildCalls, buildSession, callMessages, ruleFileText, type RuleSetSpec, type ScheduleSpec, type SessionSpec } from "../property/arbitraries.js";
import { appendStep, generateSession } from "./session-gen.js";

/** One call: how often the shortcut was used, what the provider got, and the saved state. */
export interface SwitchStep {
  count: number;
  prompt: string;
  state: string;
}

/** The first call whose prompt or state differ ("" when none do). */
/** Runs `f` with an engine switch (`parking`, `sleeping`, `walkRendering`: on only in tests' off runs) set to `on`, and switches it back on. */
export function withSwitch<T>(flag: { on: boolean }, on: boolean, f: () => T): T {
  flag.on = on;
  try {
    return f();
  } finally {
    flag.on = true;
  }
}

export function firstDifference(a: { prompt: string; state: string }[], b: { prompt: string; state: string }[]): string {
  if (a.length !== b.length) return `${a.length} calls against ${b.length}`;
  const k = a.findIndex((s, i) => s.prompt !== b[i].prompt || s.state !== b[i].state);
  return k < 0 ? "" : `call ${k}: ${a[k].prompt !== b[k].prompt ? "prompt" : "state"} differs`;
}

/** The acp.jsonc a generated rule set stands for. */
export function configOf(rs: RuleSetSpec): Partial<AcpConfig> {
  const c: Partial<AcpConfig> = { tool: rs.config.tool, commit: rs.config.commit, rules: Object.fromEntries(rs.toggles.map((t) => [t.id, t.setting])) };
  if (rs.config.protectedTools) c.protectedTools = rs.config.protectedTools;
  if (rs.config.protectedFiles) c.protectedFiles = rs.config.protectedFiles;
  return c;
}

export interface SwitchRuns {
  /** Folder for the rule files. */
  dir: string;
  /** Runs `f` with the shortcut on or off, and switches it back on. */
  withSwitch: (on: boolean, f: () => void) => void;
  /** How often the shortcut was used on the last call. */
  count: (p: AcpPruner, sid: string) => number;
  now: number;
}

let fileCount = 0;

/**
 * Replays one generated session through a new pruner per run, with the schedule's compaction,
 * reverts, restores and prune requests between calls: the shortcut on, then off.
 */
export function switchRuns(rs: RuleSetSpec, spec: SessionSpec, schedule: ScheduleSpec, o: SwitchRuns): { on: SwitchStep[]; off: SwitchStep[] } {
  const file = join(o.dir, `random-${++fileCount}.yaml`);
  writeFileSync(file, ruleFileText(rs.rules));
  const config = { ...configOf(rs), idsFromTokens: 0 };
  const raw = buildSession(spec);
  const calls = buildCalls(raw, schedule);
  const run = (on: boolean): SwitchStep[] => {
    const p = createPruner({ preset: rs.base, config, rules: [file], onError: () => {} });
    return calls.map((call, k) => {
      const slice = callMessages(raw, call);
      const sid = slice.find((m) => m?.info?.sessionID)?.info.sessionID;
      if (sid && k > 0) {
        const st = p.state(sid);
        for (const r of schedule.restores.filter((r) => r.at % calls.length === k)) {
          const decided = Object.keys(st.decisions).sort();
          if (decided.length) p.restore(sid, decided[r.pick % decided.length]);
          const ids = Object.keys(st.ids ?? {}).sort();
          if (ids.length) p.manual(sid, { action: "discard", targets: [ids[r.pick % ids.length]] }, slice);
        }
      }
      const ctx = structuredClone(slice);
      o.withSwitch(on, () => p.transform(ctx, { now: o.now + k * 60_000 }));
      return { count: (sid && o.count(p, sid)) || 0, prompt: JSON.stringify(ctx), state: sid ? JSON.stringify(p.state(sid)) : "" };
    });
  };
  return { on: run(true), off: run(false) };
}

/** The built-in rules with their params, for ruleSetArb; and how many random runs a comparison makes. */
export const builtinParams = () => createPruner({ preset: "verbose" }).resolved.all.map((e) => ({ id: e.spec.id, params: e.spec.params ?? {} }));
export const SWITCH_RUNS = Math.max(20, Math.round(Number(process.env.ACP_FUZZ_RUNS ?? 150) / 5));

/**
 * The generated long session (seed 5, 60 turns of 10 tools) and `appends` more calls of 5 tools
 * (every third a new turn), replayed under balanced (with `config`, e.g. rule overrides) with the
 * shortcut on, then off.
 */
export function generatedSwitchRuns(appends: number, o: Omit<SwitchRuns, "dir">, config?: Partial<AcpConfig>): { on: SwitchStep[]; off: SwitchStep[] } {
  let h = generateSession({ seed: 5, turns: 60, stepsPerTurn: 1, toolsPerStep: 10 });
  const histories = [h];
  for (let k = 0; k < appends; k++) histories.push((h = appendStep(h, 2000 + k, 5, k % 3 === 2)));
  const sid = h[0].info.sessionID;
  const run = (on: boolean): SwitchStep[] => {
    const p = createPruner({ preset: "balanced", config });
    return histories.map((m, k) => {
      const ctx = structuredClone(m);
      o.withSwitch(on, () => p.transform(ctx, { now: o.now + k * 60_000 }));
      return { count: o.count(p, sid), prompt: JSON.stringify(ctx), state: JSON.stringify(p.state(sid)) };
    });
  };
  return { on: run(true), off: run(false) };
}
