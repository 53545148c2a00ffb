// The manual phase: the model's own prune requests (manual.ts), wanted like a rule's changes
// (phases.ts).
import type { PartNode } from "../graph/graph.js";
import { MANUAL, type PhaseCall } from "./call.js";
import { evaluatePatch } from "./candidate.js";
import { manualPatch } from "./manual-patch.js";

/** manual: the model's own requests, committed like rule decisions but never deferred */
export function walkManual(call: PhaseCall): void {
  const { rt, graph, slotsOf } = call;
  for (const [partId, entry] of Object.entries(call.state.manual ?? {})) {
    const n = graph.byId.get(partId);
    if (!n) continue;
    const current = slotsOf[n.index]?.output;
    // a rule's decision stands; the model's own earlier one gives way to a newer, different request
    if (current && current.rule !== MANUAL.id) continue;
    const patch = manualPatch(n, entry);
    if (current && patch && JSON.stringify(patch) === JSON.stringify(current.patch)) continue;
    const c = patch && evaluatePatch(n, patch);
    if (c && (!rt.decidedNow.has(n.index) || giveWay(call, n))) call.want(n, MANUAL, c);
  }
}

/**
 * A rule's want on this call for `n`'s output gives way to a prune request for it: the rule's
 * prune may wait for its batch, the request never does. False when the want stands parked
 * (blocked by an older view in full, it changes nothing) or `n` has no want of its own.
 */
function giveWay(call: PhaseCall, n: PartNode): boolean {
  const wanted = call.wanted;
  const k = wanted.findIndex((w) => w.node === n && w.slot === "output");
  if (k < 0) return false;
  wanted.splice(k, 1);
  return true;
}
