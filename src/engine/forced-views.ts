// Older views forced aside beside the newer view that goes (settle.ts), and whether doing so
// repays the re-cache it costs on this call.
import type { PartNode } from "../graph/graph.js";
import { MANUAL, unsettled, type PhaseCall } from "./call.js";
import type { Candidate } from "./candidate.js";
import { inFullBeside } from "./in-full.js";
import type { SupersedeMark, Wanted } from "./parked.js";
import { callsSinceCached, recacheTokens } from "./sent-prefix.js";

/**
 * An older view whose supersede was not worth a change on its own (its output is no larger than
 * the note that replaces it, a "FAIL" line say): replaced anyway when a newer view of the same
 * thing goes, so that the stale view is not the one left in full (where it repays: forcedRepays).
 */
export function forcedView(call: PhaseCall, o: PartNode, mark: SupersedeMark): Wanted | undefined {
  const c = forcedCandidate(call, o, mark);
  if (c === undefined) return undefined;
  // no mark: a forced want is never parked, it goes only beside the newer view. Its object is kept
  // on the mark and used again on later calls (a call's wants are dropped when it ends).
  let f = mark.forcedWant;
  if (f === undefined) f = mark.forcedWant = { node: o, slot: "output", rule: mark.rule, patch: c.patch, tokens: c.tokens, by: mark.by, moved: true };
  else {
    unsettled(f);
    f.moved = true;
  }
  return f;
}

/** The patch of `o` as a forced older view on this call, if it can be one (forcedView without the want). */
export function forcedCandidate(call: PhaseCall, o: PartNode, mark: SupersedeMark): Candidate | undefined {
  // (o is mark.node.) A patch known not to fit settles it (inFullBeside says no-note) before the
  // look-ups, which are cache misses on a long session.
  if (mark.forced === null || inFullBeside(call.rt, mark, call.backedOff) !== undefined) return undefined;
  return mark.forced ?? undefined;
}

/** A prune request, or an older view taken in beside one: it goes whatever the break-even (Wanted.insist). */
export function insists(w: Wanted): boolean {
  return w.rule === MANUAL || w.insist === true;
}

/**
 * May an older view `o` go beside its newer view `w` (forced, or its own prune pending with
 * `ownTokens`)? Free behind the first change to the sent prefix (`from`) or where the provider has
 * not seen it; before it, only if what the two free repays re-caching from `o` up to that change,
 * by the same break-even as a batch. Beside a prune request, always: the model or the user asked
 * for the change, and it is never deferred.
 */
export function forcedRepays(call: PhaseCall, o: PartNode, w: Wanted, from: number, ownTokens = 0): boolean {
  const policy = call.policy;
  if (o.index >= from || call.unseen(o) || !(policy.breakEven > 0) || insists(w)) return true;
  const cached = callsSinceCached(call.state);
  return (w.tokens + ownTokens) * Math.max(1, cached) >= policy.breakEven * recacheTokens(call.rt, o, from);
}

/**
 * For a link that did not repay (forcedRepays false): below how many calls since the cache was
 * written it still does not at this `from` (a later call's span from `o` is no shorter). The floor
 * of the ratio: a call early, never late (x·tokens < breakEven·span for every x < it).
 */
export function repaysAt(call: PhaseCall, o: PartNode, w: Wanted, from: number, ownTokens = 0): number {
  return Math.floor((call.policy.breakEven * recacheTokens(call.rt, o, from)) / (w.tokens + ownTokens));
}
