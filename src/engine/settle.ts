// settle: which of the due and pending wants go through on this call, so that an older view of a
// thing is never left in full while a newer view of it is pruned ("never stale over fresh"), and
// where the first change to the sent prefix falls (commit.ts).
import type { PartNode } from "../graph/graph.js";
import { unsettled, type PhaseCall } from "./call.js";
import { forcedCandidate, forcedRepays, forcedView, insists, repaysAt } from "./forced-views.js";
import type { Wanted } from "./parked.js";

/** What settle decided, besides what stays pending: how it got there, which the parked mayRepay wants lean on (parked.ts RepayBound). */
export interface Settled {
  later: Wanted[];
  /** The first change to the sent prefix of the last run. */
  from: number;
  /** It settled in one run, and what went through starts at or after `from` (the runs never asked whether a blocked want may repay). */
  once: boolean;
  /** RepayBound.wakeAt of the last run's links that did not repay (Infinity: none). */
  wakeAt: number;
}

/**
 * Moves pending decisions into `due` until nothing more must go: those behind the first change
 * to the sent prefix (or behind a free break), and older views of a thing whose newer view is
 * pruned now. A due output whose older view cannot be pruned is blocked instead. Returns what
 * stays pending.
 *
 * The first change counts only what goes through on its own account (due, or an older view
 * beside a newer one that goes), not what goes only because it is behind the change: a want
 * blocked in the end changes nothing in the prompt, and an older view taken in beside a newer
 * view that is blocked stays as it was. Each run settles at a fixed first change `from`,
 * starting where the due wants are (as if they all went through); when what went through starts
 * elsewhere, the next run settles there, until they agree. An earlier `from` lets more go and a
 * later one less, so the runs move one way.
 */
export function settle(call: PhaseCall, due: Wanted[], later: Wanted[], freeFrom: number, start: number): Settled {
  const dueCount = due.length;
  let from = Math.min(freeFrom, start);
  for (const w of due) if (!call.unseen(w.node) && w.node.index < from) from = w.node.index;
  // wants blocked at an earlier first change with no break-even waiting on the way: a later one
  // lets less go, so they stay blocked whatever the calls since the cache was written
  let firm: Set<Wanted> | undefined;
  let once = false;
  let wakeAt = Infinity;
  for (let run = 1; ; run++) {
    const ran = settleAt(call, due, later, from);
    if (firm !== undefined) for (const w of due) if (w.mayRepay && firm.has(w)) w.mayRepay = undefined;
    const first = Math.min(ran.first, freeFrom);
    once = run === 1 && first >= from;
    wakeAt = ran.wakeAt;
    if (first === from) break;
    // an earlier `from` changes nothing when no forced view waited for its break-even and nothing
    // pending is behind the first change already
    if (first < from && !ran.mayRepay && !later.some((w) => !w.moved && w.node.index >= first)) break;
    // A later one lets nothing more go and nothing that went fail (what went leans on nothing
    // before `first`, or `first` would be earlier); what it changes is which pending wants are
    // taken behind the change. So it runs only when one taken before `first` went.
    if (first > from && ran.behindGoing >= first) break;
    // (a later one only moves pending wants back, never lets more go: after a few runs only earlier)
    if (first > from && run > 4) break;
    if (first > from) {
      firm ??= new Set();
      for (const w of due) if (w.blocked && !w.mayRepay) firm.add(w);
    }
    from = first;
    due.length = dueCount;
    for (const w of due) unsettled(w);
    for (const w of later) unsettled(w);
  }
  return { later: later.filter((w) => !w.moved), from, once, wakeAt };
}

/** One settle run with the first change to the sent prefix at `from`: what goes is what `due` holds unblocked. */
function settleAt(call: PhaseCall, due: Wanted[], later: Wanted[], from: number): { first: number; mayRepay: boolean; behindGoing: number; wakeAt: number } {
  const { rt, slotsOf } = call;
  const dueOut = new Map<number, Wanted>();
  const laterOut = new Map<number, Wanted>();
  const forced = new Map<number, Wanted | undefined>(); // at most one forced want per older view
  // older views (pending ones taken in, forced ones) due only beside the newer views that met them
  const beside = new Map<Wanted, Wanted[]>();
  const besides = (o: Wanted, w: Wanted) => {
    const list = beside.get(o);
    if (list) list.push(w);
    else beside.set(o, [w]);
  };
  let mayRepay = false;
  let wakeAt = Infinity; // RepayBound.wakeAt of the links that did not repay
  const blockedAt = new Map<number, Wanted>(); // the blocked want of each node (its own or forced)
  for (const w of due) if (w.slot === "output") dueOut.set(w.node.index, w);
  for (const w of later) if (w.slot === "output") laterOut.set(w.node.index, w);
  const move = (w: Wanted) => {
    w.moved = true;
    due.push(w);
    if (w.slot === "output") {
      dueOut.set(w.node.index, w);
      laterOut.delete(w.node.index);
    }
  };
  // taken because they are behind the first change: they do not place it themselves
  const behind = new Set<Wanted>();
  for (const w of later)
    if (w.node.index >= from) {
      move(w);
      behind.add(w);
    }
  // A worklist: each due output is checked against its older views once, and again only when one
  // of them is blocked after it was checked (a chain of views settles in one pass, not one per link).
  const queue: Wanted[] = [...dueOut.values()];
  /** The older view `o` stays in full, so the newer one `w` does too; `wake`: RepayBound.wakeAt of this link. */
  const block = (w: Wanted, o: PartNode, repayLater: boolean, wake: number) => {
    w.blocked = true;
    w.blocker = o.index;
    if (repayLater) w.mayRepay = mayRepay = true;
    wakeAt = Math.min(wakeAt, wake);
    blockedAt.set(w.node.index, w);
    dueOut.delete(w.node.index);
    // the newer view that w was due beside must be checked again
    const newer = rt.newerViewPast(w.node.part.id);
    const n = newer !== undefined ? dueOut.get(newer.index) : undefined;
    if (n !== undefined) queue.push(n);
  };
  while (queue.length > 0) {
    const w = queue.pop()!;
    if (w.blocked || dueOut.get(w.node.index) !== w) continue;
    for (const older of rt.olderViewsPast(w.node.index)) {
      const o = older.node;
      let repays = true;
      // hidden already by a decision (the host's placeholders are looked past: olderViewsPast)
      if (slotsOf[o.index]?.output) continue;
      const pending = laterOut.get(o.index);
      const inDue = pending === undefined ? dueOut.get(o.index) : undefined;
      if (pending && (repays = forcedRepays(call, o, w, from, pending.tokens))) {
        if (insists(w)) pending.insist = true;
        move(pending);
        besides(pending, w);
        queue.push(pending);
      } else if (pending) {
        // its own prune waits for a batch, and going now beside w would not repay the re-cache either
        block(w, o, true, repaysAt(call, o, w, from, pending.tokens));
        break;
      } else if (inDue) {
        if (beside.has(inDue)) besides(inDue, w);
      } else if (!forced.has(o.index) && (repays = forcedRepays(call, o, w, from)) && forced.set(o.index, forcedView(call, o, older)).get(o.index)) {
        const f = forced.get(o.index)!;
        if (insists(w)) f.insist = true;
        due.push(f);
        dueOut.set(o.index, f);
        besides(f, w);
        queue.push(f);
      } else {
        // blocked only for want of a break-even, here or down the chain of views: a later call may repay it
        const repayLater = !repays ? forcedCandidate(call, o, older) !== undefined : (forced.get(o.index) ?? blockedAt.get(o.index))?.mayRepay === true;
        block(w, o, repayLater, !repays && repayLater ? repaysAt(call, o, w, from) : Infinity);
        break;
      }
    }
  }
  // an older view brought in only beside newer views that are all blocked (or withdrawn) stays as
  // it was: a pending one stays pending, a forced one is not made
  const withdrawn = new Set<Wanted>();
  if (beside.size > 0) {
    const alive = new Map<Wanted, number>(); // newer views of each one that still go
    const olderOf = new Map<Wanted, Wanted[]>();
    const gone: Wanted[] = [];
    for (const [o, newer] of beside) {
      let n = 0;
      for (const w of newer) {
        if (!w.blocked) n++;
        const list = olderOf.get(w);
        if (list) list.push(o);
        else olderOf.set(w, [o]);
      }
      alive.set(o, n);
      if (n === 0 && !o.blocked) gone.push(o);
    }
    for (const o of gone) withdrawn.add(o);
    while (gone.length > 0)
      for (const o of olderOf.get(gone.pop()!) ?? []) {
        if (o.blocked || withdrawn.has(o)) continue;
        const n = alive.get(o)! - 1;
        alive.set(o, n);
        if (n === 0) {
          withdrawn.add(o);
          gone.push(o);
        }
      }
  }
  if (withdrawn.size > 0) {
    let kept = 0;
    for (const w of due) {
      if (withdrawn.has(w)) w.moved = undefined;
      else due[kept++] = w;
    }
    due.length = kept;
  }
  let first = Infinity;
  let behindGoing = Infinity; // the first pending want that went only because it is behind `from`
  for (const w of due)
    if (w.blocked || call.unseen(w.node)) continue;
    else if (behind.has(w)) behindGoing = Math.min(behindGoing, w.node.index);
    else if (w.node.index < first) first = w.node.index;
  return { first, mayRepay, behindGoing, wakeAt };
}
