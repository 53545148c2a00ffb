// Rendering during the graph walk (src/engine/render.ts carriedRenderer): a carried-over node whose
// plan is made and unchanged is written while the walk holds its part, and the render pass skips it.
// A shortcut only: every call must render and save what it does with it off (the pass renders every
// node), including calls whose pass turns out to be a full one after the walk, and a call that
// fails after the walk must hand the copy back as it came.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { walkRendering } from "../../src/engine/render.js";
import { newState, type SessionState } from "../../src/engine/state.js";
import type { SessionStore } from "../../src/engine/storage.js";
import type { Message } from "../../src/graph/types.js";
import { createPruner } from "../../src/index.js";
import { flagsFromEnv, ruleSetArb, ruleFileText, scheduleArb, sessionSpecArb } from "../property/arbitraries.js";
import { fcParams } from "../property/invariants.js";
import { appendStep, generateSession } from "./session-gen.js";
import { builtinParams, firstDifference, generatedSwitchRuns, switchRuns, SWITCH_RUNS, withSwitch } from "./switch-runs.js";

/** Runs `f` with the walk's rendering on or off, and switches it back on. */
const withWalkRendering = (on: boolean, f: () => void) => withSwitch(walkRendering, on, f);

const NOW = Date.UTC(2026, 0, 1);
const walkedOn = (p: ReturnType<typeof createPruner>, sid: string) => p.lastCall(sid)?.walked ?? 0;

/** The generated session (seed 5) and `appends` more calls of 5 tools, every third a new turn. */
function histories(appends: number): Message[][] {
  let h = generateSession({ seed: 5, turns: 30, stepsPerTurn: 1, toolsPerStep: 10 });
  const out = [h];
  for (let k = 0; k < appends; k++) out.push((h = appendStep(h, 2000 + k, 5, k % 3 === 2)));
  return out;
}

/**
 * A state store in memory. On the save `foreignAt` names, another process's writes are merged: it
 * restored the output of the first part with an output decision (`restored` gets its id), and save
 * says so (true). The save `failAt` names throws.
 */
function store(foreignAt: number, failAt = -1, restored: string[] = []): SessionStore {
  const states = new Map<string, SessionState>();
  let saves = 0;
  return {
    load: (sid) => {
      const state = states.get(sid);
      return state ? { state, fresh: false } : { state: newState(sid), fresh: true };
    },
    save: (state) => {
      const k = saves++;
      if (k === failAt) throw new Error("disk full");
      states.set(state.sessionID, state);
      if (k !== foreignAt) return false;
      const id = Object.keys(state.decisions).find((id) => state.decisions[id].output !== undefined)!;
      restored.push(id);
      delete state.decisions[id];
      return true;
    },
  };
}

describe("rendering carried-over nodes in the walk", () => {
  it("on the generated session most rendered nodes are written by the walk, and every call agrees with the pass alone", () => {
    const { on, off } = generatedSwitchRuns(12, { now: NOW, withSwitch: withWalkRendering, count: walkedOn });
    expect(firstDifference(on, off)).toBe("");
    // the first call builds every node; each later one carries hundreds over with their plans
    expect(on[0].count).toBe(0);
    expect(Math.min(...on.slice(1).map((s) => s.count))).toBeGreaterThan(300);
    expect(off.every((s) => s.count === 0)).toBe(true);
  });

  it("a pass that turns out full after the walk (another process restored a part) renders the copy as it came, as with the walk's rendering off", () => {
    const hs = histories(6);
    const sid = hs[0][0].info.sessionID;
    const restored: string[] = [];
    const run = (on: boolean) => {
      const p = createPruner({ preset: "balanced", store: store(3, -1, restored) });
      return hs.map((h, k) => {
        const ctx = structuredClone(h);
        withWalkRendering(on, () => p.transform(ctx, { now: NOW + k * 60_000 }));
        return { count: walkedOn(p, sid), prompt: JSON.stringify(ctx), state: JSON.stringify(p.state(sid)) };
      });
    };
    const on = run(true);
    expect(firstDifference(on, run(false))).toBe("");
    // the part the walk wrote pruned goes out in full on that call
    const part = (JSON.parse(on[3].prompt) as Message[]).flatMap((m) => m.parts).find((p) => p.id === restored[0]);
    const original = hs[3].flatMap((m) => m.parts).find((p) => p.id === restored[0]);
    expect(restored.length).toBe(2);
    expect(part?.state?.output).toBe(original?.state?.output);
    // the call whose save merged foreign writes renders in full (its walk's writes undone), and so
    // does the next (its caches are rebuilt): nothing is left to the walk there
    expect(on.map((s) => s.count > 0)).toEqual([false, true, true, false, false, true, true]);
  });

  it("a part restored between calls goes out in full: the call after a restore rebuilds the caches and renders in full", () => {
    const hs = histories(3);
    const sid = hs[0][0].info.sessionID;
    let restored = "";
    const run = (on: boolean) => {
      const p = createPruner({ preset: "balanced" });
      return hs.map((h, k) => {
        if (k === 2) {
          restored = Object.keys(p.state(sid).decisions).find((id) => p.state(sid).decisions[id].output !== undefined)!;
          expect(p.restore(sid, restored)).toBe(true);
        }
        const ctx = structuredClone(h);
        withWalkRendering(on, () => p.transform(ctx, { now: NOW + k * 60_000 }));
        return { count: walkedOn(p, sid), prompt: JSON.stringify(ctx), state: JSON.stringify(p.state(sid)) };
      });
    };
    const on = run(true);
    expect(firstDifference(on, run(false))).toBe("");
    // (a restore rebuilds the caches, as a process started from the state file builds them:
    // pruner.ts restoreReport), and the walk carries nodes over again on the call after
    expect(on.map((s) => s.count > 0)).toEqual([false, true, false, true]);
    const part = (JSON.parse(on[2].prompt) as Message[]).flatMap((m) => m.parts).find((p) => p.id === restored);
    const original = hs[2].flatMap((m) => m.parts).find((p) => p.id === restored);
    expect(part?.state?.output).toBe(original?.state?.output);
  });

  it("a call that fails after the walk rendered (the state cannot be saved) hands the copy back as it came", () => {
    const hs = histories(3);
    const sid = hs[0][0].info.sessionID;
    const errors: unknown[] = [];
    const p = createPruner({ preset: "balanced", store: store(-1, 2), onError: (e) => errors.push(e) });
    for (const [k, h] of hs.entries()) {
      const ctx = structuredClone(h);
      p.transform(ctx, { now: NOW + k * 60_000 });
      if (k === 1) expect(walkedOn(p, sid)).toBeGreaterThan(100); // the failing call's walk renders as this one's did
      if (k === 2) expect(JSON.stringify(ctx)).toBe(JSON.stringify(h));
      if (k !== 2) expect(JSON.stringify(ctx)).not.toBe(JSON.stringify(h));
    }
    expect(errors.map((e) => String(e))).toEqual(["Error: disk full"]);
  });
});

describe("rendering in the walk on random rule sets and sessions", () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-walk-render-"));
  const seen = { walked: 0 };
  test.prop([ruleSetArb(builtinParams()), sessionSpecArb(flagsFromEnv()), scheduleArb], fcParams(SWITCH_RUNS))(
    "every call (with compaction, reverts, restores and prune requests between calls) renders and saves what it does with the pass alone",
    (rs, spec, schedule) => {
      const { on, off } = switchRuns(rs, spec, schedule, { dir, now: NOW, withSwitch: withWalkRendering, count: walkedOn });
      seen.walked += on.filter((s) => s.count > 0).length;
      expect(firstDifference(on, off), ruleFileText(rs.rules)).toBe("");
    },
    120_000,
  );

  it("the random runs rendered nodes in the walk (the comparison is not vacuous)", () => {
    expect(seen.walked).toBeGreaterThan(0);
  });
});
