// commit: decisions on parts the provider has not seen yet apply at once; decisions that would
// change the already-sent (cached) prefix wait until the cache breaks anyway (the provider drops
// earlier reasoning, or the cache expired) or together they repay the re-cache. Where the prefix
// changes, everything pending behind that point goes in the same call (it costs no more), and an
// older view of a thing is never left in full while a newer view of it is pruned (settle.ts).
import { tokensOf } from "../graph/graph.js";
import { MANUAL, unsettled, type CallResult, type PhaseCall } from "./call.js";
import { holdersOf } from "./holders.js";
import type { ParkedSummary, RepayBound, Wanted } from "./parked.js";
import { slotChars } from "./render.js";
import { cacheExpired, callsSinceCached, paysOff, reasoningBreak } from "./sent-prefix.js";
import { settle, type Settled } from "./settle.js";
import { noteDecision, type Decision } from "./state.js";
import { waiting } from "./walk-rules.js";

/** Commits the call's wants (PhaseCall.wanted) that are due, parks the blocked ones, and counts what waits. */
export function commit(call: PhaseCall): Omit<CallResult, "rebuilt" | "walked"> {
  const { rt, state, policy, parked, plain, sentIdx, slotsOf } = call;
  const active = call.wanted;
  const expired = !plain && cacheExpired(state, policy, call.now, sentIdx);
  if (expired) state.cachedSince = state.calls;
  // where the prompt changes anyway: the cache expired, the provider drops earlier reasoning, or a
  // lifted decision shows a part in full again
  const freeFrom = plain ? Infinity : expired ? 0 : Math.min(reasoningBreak(rt, sentIdx, call.providerLastUser), rt.changedFrom);
  const pressure = policy.pressureTokens > 0 && call.promptTokens >= policy.pressureTokens;
  // The wants parked for want of a break-even stay out of settle only while their bound holds
  // (parked.ts RepayBound); otherwise they are woken and decided in their place, as evaluated.
  const bound = parked.repayBound;
  if (bound !== undefined && !(Math.max(1, callsSinceCached(state)) < bound.wakeAt && sentIdx >= bound.sentIdx && policy.breakEven === bound.breakEven)) wakeRepaying(call);
  let b = batch(call, active, freeFrom, pressure);
  // (their first change is known only once settled: where it moved, settle again with them in;
  // also where they were taken in with all parked wants, so that none goes through while parked)
  if (parked.repayCount > 0 && !(b.settled.once && b.settled.from === parked.repayBound!.from)) {
    for (const w of active) unsettled(w);
    wakeRepaying(call);
    b = batch(call, active, freeFrom, pressure);
  }
  const { due, settled } = b;
  const later = settled.later;
  const decisions = state.decisions;
  rt.committedNow = [];
  for (const w of due) {
    if (w.blocked) continue;
    const d: Decision = { rule: w.rule.id, action: w.rule.action.name, patch: w.patch, tokens: w.tokens, call: state.calls, partType: w.node.part.type };
    if (w.by) d.by = w.by;
    if (typeof w.node.part.callID === "string") d.callID = w.node.part.callID;
    const id = w.node.part.id;
    let slots = slotsOf[w.node.index];
    if (!slots) {
      slots = slotsOf[w.node.index] = decisions[id] ??= {};
      rt.decided.push(w.node.index);
    }
    rt.committedNow.push(w.node.index);
    slots[w.slot] = d;
    noteDecision(state, id);
    if (w.slot === "output") rt.pendingMarks.delete(id);
  }
  if (call.parks) park(call, due, settled);
  const pendingParts = later.map((w) => ({ partId: w.node.part.id, slot: w.slot }));
  const waits = waitingWants(call, later);
  return { committed: rt.committedNow.length, pending: waits.length, pendingParts, pendingTokens: waits.reduce((s, w) => s + w.tokens, 0), parked: parked.size, waiting: waiting(rt) };
}

/**
 * The pending wants that wait for the commit policy, as /acp stats, /acp budget and the
 * notification count them: not those an older view in full holds back (restored, protected, its
 * rule backed off, no note short enough; holders.ts, settle's own test). They never go while
 * that view stays in full, whatever the cache does (live audit 25: a restored read made every
 * newer read of the file "wait" for a break that then left them in full).
 */
function waitingWants(call: PhaseCall, later: Wanted[]): Wanted[] {
  if (later.length === 0) return later;
  const { rt, backedOff } = call;
  const pendingIds = new Set(later.map((w) => w.node.part.id));
  const q = { hiding: (id: string) => pendingIds.has(id), backedOff };
  return later.filter((w) => w.slot !== "output" || !rt.olderViews.get(w.node.index)?.length || holdersOf(rt, w.node, q).length === 0);
}

/** The wants parked for want of a break-even (and what leans on them) are taken into commit again, in their place. */
function wakeRepaying(call: PhaseCall): void {
  for (const w of call.parked.unparkRepaying()) call.woken.set(w.node.index, w);
}

/**
 * The due and pending wants, settled. Parked wants are pending wants on sent parts that settle
 * would block: counted here, left out of the lists. Where one is on a part not sent yet, or the
 * batch stays pending (settle may then move them), they are all taken in, in their place, and
 * decided as any other.
 */
function batch(call: PhaseCall, active: Wanted[], freeFrom: number, pressure: boolean): { due: Wanted[]; settled: Settled } {
  const { parked, plain, policy } = call;
  const summary = parked.size > 0 ? parked.summary() : undefined;
  const withAll = summary !== undefined && summary.lastMsg > call.sentIdx;
  const outside = summary !== undefined && !withAll ? summary : undefined;
  let [due, later] = split(call, withAll || call.woken.size > 0 ? withParked(call, active, withAll) : active);
  // a plain batch counts the outputs it prunes, as the pruners it reproduces do
  const pendingTokens = later.reduce((s, w) => s + (plain ? tokensOf(slotChars(w.node, w.patch)) : w.tokens), 0) + (outside?.tokens ?? 0);
  const pendingCount = later.length + (outside?.count ?? 0);
  // settle starts from the first due want on the sent prefix, as if every due want went through;
  // the parked wants go with the batch too, blocked again, and count there as they would evaluated
  let start = Infinity;
  if (pendingCount > 0 && (pendingTokens >= policy.minTokens || pressure || (!plain && paysOff(call.rt, policy, firstOf(call, later, outside), pendingTokens, freeFrom)))) {
    due.push(...later);
    later = [];
    if (outside) start = outside.first;
  } else if (outside) [due, later] = split(call, withParked(call, active, true));
  return { due, settled: settle(call, due, later, freeFrom, start) };
}

/**
 * The wanted list as the marks loop would have made it with the woken wants (and all parked ones
 * when `all`) evaluated in their place, pendingMarks order: their wants are the ones kept when parked.
 * The marks loop's wants come first in that order (by mark.seq, the order of pendingMarks), so the
 * taken-in wants are merged into them by seq rather than by a walk of every pending mark.
 */
function withParked(call: PhaseCall, list: Wanted[], all: boolean): Wanted[] {
  const { rt, woken } = call;
  const extra: Wanted[] = [];
  const add = (p: Wanted) => {
    const mark = p.mark!;
    if (rt.pendingMarks.get(mark.node.part.id) !== mark || mark.node.index !== p.node.index) return; // not pending: the walk would not meet it
    unsettled(p);
    extra.push(p);
  };
  for (const p of woken.values()) add(p);
  if (all) for (const p of call.parked.wants()) if (!woken.has(p.node.index)) add(p);
  extra.sort((a, b) => a.mark!.seq - b.mark!.seq);
  const out: Wanted[] = [];
  let j = 0;
  for (const p of extra) {
    while (j < list.length && list[j].mark !== undefined && list[j].mark!.seq < p.mark!.seq) out.push(list[j++]);
    out.push(p);
  }
  for (; j < list.length; j++) out.push(list[j]);
  return out;
}

/** Decisions due now (manual ones, and those on parts not sent yet) and those that may wait. */
function split(call: PhaseCall, list: Wanted[]): [Wanted[], Wanted[]] {
  const plain = call.plain;
  const due: Wanted[] = [];
  const later: Wanted[] = [];
  for (const w of list) (w.rule === MANUAL || (!plain && call.unseen(w.node)) ? due : later).push(w);
  return [due, later];
}

/** The first node index among pending wants and the parked ones counted beside them. */
function firstOf(call: PhaseCall, later: Wanted[], outside?: ParkedSummary): number {
  let first = Math.min(call.nodes.length, outside?.first ?? Infinity);
  for (const w of later) if (w.node.index < first) first = w.node.index;
  return first;
}

/**
 * Parks the blocked supersede wants whose blocker is parked or wanted by nothing on this call (and
 * undecided): the next calls skip them until that changes (parked.ts). Oldest first, so that a
 * chain of views parks whole. One blocked for want of a break-even is parked under a wake bound,
 * only when settle ran once (its block was not asked whether it may repay: parked.ts RepayBound).
 */
function park(call: PhaseCall, due: Wanted[], settled: Settled): void {
  const { rt, parked, slotsOf } = call;
  const blocked = due.filter((w) => w.blocked && (!w.mayRepay || settled.once) && w.mark !== undefined && !parked.has(w.node.index));
  blocked.sort((a, b) => a.node.index - b.node.index);
  const bound: RepayBound = { from: settled.from, wakeAt: settled.wakeAt, sentIdx: call.sentIdx, breakEven: call.policy.breakEven };
  for (const w of blocked) {
    const b = w.blocker!;
    if (!(parked.has(b) || (!rt.decidedNow.has(b) && slotsOf[b]?.output === undefined))) continue;
    if (w.mayRepay) parked.parkRepaying(w, b, bound);
    else parked.park(w, b);
  }
}
