// The age and reduce phases: each rule's candidates, as its static conditions admitted them, that
// its time-dependent conditions hold for now (phases.ts).
import type { PhaseCall } from "./call.js";
import type { SessionRuntime } from "./session.js";
import { mergeSorted, sleeping } from "./sleepers.js";
import { candidateFor } from "./verdicts.js";

// age, reduce: each rule walks the parts its static conditions admitted. A part leaves the list
// for good once it can never change again: its slot decided (decisions are sticky; a restore
// rebuilds the lists, pruner.ts restoreReport), its patch not worth it (the verdict is cached),
// or protected for good. What stays is what waits for time (age) or for its batch to commit, so
// a call costs little more than the parts that are new.
// A candidate whose time-dependent condition is false sleeps until the clocks reach what it
// waits for (wake.ts, sleepers.ts), and comes back into the list in node order: the wants, and
// so the decisions, are the same as when every candidate is evaluated on every call.
// A candidate whose output a parked want stands for (decidedNow) leaves the list the same way
// until that want is unparked.
export function walkRules(call: PhaseCall): void {
  const { rt, nodes, parked, backedOff } = call;
  const clock = call.graph.clock;
  const clocks = clock ? { turns: clock.turns, calls: clock.calls, tokens: clock.tokens } : undefined;
  takeBackUnparked(call);
  for (const phase of ["age", "reduce"] as const)
    for (const r of rt.rules.byPhase[phase]) {
      if (backedOff.has(r.id)) continue;
      const slot = r.action.slot === "input" ? "input" : "output";
      const sleepers = clocks && rt.sleepers[r.index];
      if (sleepers && sleepers.size > 0) rt.candidates[r.index] = mergeSorted(rt.candidates[r.index], sleepers.woken(clocks!, !sleeping.on));
      const sleeps = sleeping.on && sleepers ? sleepers : undefined;
      const parksOut = sleeping.on && slot === "output" && parked.size > 0;
      const list = rt.candidates[r.index];
      const override = r.options.overrideProtection === true;
      const ctx = rt.ctxs[r.index];
      let kept = 0;
      for (let k = 0; k < list.length; k++) {
        const i = list[k];
        const n = nodes[i];
        if (call.taken(n, slot) || (!override && rt.protectedBy.permanent.has(i))) continue;
        list[kept++] = i;
        if (!override && rt.protectedBy.has(i)) continue;
        if (slot === "output" && rt.decidedNow.has(i)) {
          if (parksOut && parked.has(i)) {
            kept--;
            const out = rt.parkedOut.get(i);
            if (out) out.push(r.index);
            else rt.parkedOut.set(i, [r.index]);
          }
          continue;
        }
        if (r.dynamicWhen && !r.dynamicWhen(n, ctx)) {
          if (sleeps) {
            const wake = r.wake!(n, ctx, clocks!);
            if (sleeps.sleep(i, wake, clocks!, wake.mark === true ? n.part.id : undefined)) kept--;
          }
          continue;
        }
        const c = candidateFor(rt, r, n);
        if (c) call.want(n, r, c, r.followsSupersede ? rt.marks.get(n.part.id)?.by : undefined);
        else kept--;
      }
      list.length = kept;
    }
}

/** What the age and reduce rules leave out of their walks after this call (CallResult.waiting). */
export function waiting(rt: SessionRuntime): number {
  let n = 0;
  for (const s of rt.sleepers) n += s?.size ?? 0;
  return n + rt.parkedOut.size;
}

/** The candidates whose parked want was unparked since the last call go back into their rules' lists, in node order. */
function takeBackUnparked(call: PhaseCall): void {
  const { rt, parked } = call;
  const freed = parked.freed;
  if (freed.length === 0 && (sleeping.on || rt.parkedOut.size === 0)) return;
  const back = new Map<number, number[]>();
  const put = (i: number, ris: number[]) => {
    for (const ri of ris) {
      const list = back.get(ri);
      if (list) list.push(i);
      else back.set(ri, [i]);
    }
  };
  for (const i of freed) {
    const ris = rt.parkedOut.get(i);
    if (ris === undefined) continue;
    rt.parkedOut.delete(i);
    put(i, ris);
  }
  freed.length = 0;
  if (!sleeping.on) {
    for (const [i, ris] of rt.parkedOut) put(i, ris);
    rt.parkedOut.clear();
  }
  for (const [ri, list] of back) rt.candidates[ri] = mergeSorted(rt.candidates[ri], list.sort((a, b) => a - b));
}
