// One call of the interpreter, in the fixed phase order:
//   protect → supersede → age → reduce → manual → commit → (render, in render.ts)
// A part gets at most one decision per slot; the earliest phase wins, so a superseded output
// is never also truncated. Committed decisions are sticky and skipped here.
import { inputChars, tokensOf, type PartNode } from "../graph/graph.js";
import type { CommitPolicy } from "../rules/types.js";
import type { Patch } from "./actions/index.js";
import { clearedByHost, lastUserIndex } from "../graph/prompt.js";
import { slotChars } from "./render.js";
import { evaluatePatch, type Candidate } from "./candidate.js";
import { inFullBeside, untouchable } from "./in-full.js";
import type { CompiledRule } from "./ruleset.js";
import type { SessionRuntime } from "./session.js";
import { cacheExpiredSince, noteDecision, type Decision } from "./state.js";
import { manualPatch, signedReasoning } from "./manual-patch.js";
import { noteReruns } from "./regret.js";
import { mergeSorted, sleeping } from "./sleepers.js";
import { DecidedNow, parking, type Decider, type ParkedSummary, type RepayBound, type SupersedeMark, type Wanted } from "./parked.js";

/** The model's own requests: applied on the call after it asked, wherever they are. */
const MANUAL: Decider = { id: "manual", action: { name: "manual" } };


/** Characters of a part the provider receives (output or text, plus a tool call's input); cached per node. */
export function sentChars(n: PartNode): number {
  const text = typeof n.part.text === "string" ? n.part.text.length : 0;
  if (n.part.type !== "tool") return n.outputChars + text;
  return n.outputChars + text + inputChars(n);
}

/**
 * Σ sentChars over nodes[first..end), from prefix sums kept by the runtime; the sums of nodes the
 * walk carried over stay valid (same parts), the rest are extended on demand.
 */
function sentBetween(rt: SessionRuntime, first: number, end: number): number {
  const pre = rt.sentPrefix;
  const nodes = rt.graph.nodes;
  if (pre.length === 0) pre.push(0);
  for (let i = pre.length - 1; i < end; i++) pre.push(pre[i] + sentChars(nodes[i]));
  return pre[end] - pre[first];
}

function candidateFor(rt: SessionRuntime, rule: CompiledRule, node: PartNode, by?: PartNode): Candidate | undefined {
  const cache = (rt.patches[rule.index] ??= new Map());
  let c = cache.get(node.part.id);
  if (c === undefined) {
    c = patchVerdict(rule, node, by);
    cache.set(node.part.id, c);
  }
  return c ?? undefined;
}

/** The rule's change to the part, if worth making (null: none, or it would save too little); not cached. */
export function patchVerdict(rule: CompiledRule, node: PartNode, by?: PartNode): Candidate | null {
  const patch = rule.action.apply(node, rule.options as Record<string, any>, { by });
  if (!patch) return null;
  // the provider verifies a signed block's text: it goes out unchanged or not at all
  if (patch.text !== undefined && signedReasoning(node)) return evaluatePatch(node, { drop: true }, rule.options);
  return evaluatePatch(node, patch, rule.options);
}

export interface CallResult {
  committed: number;
  pending: number;
  /** Parts whose decisions wait for a later call (their slot: output or input). */
  pendingParts: { partId: string; slot: "output" | "input" }[];
  pendingTokens: number;
  /** Blocked wants carried to the next call without being evaluated again (parked.ts). */
  parked: number;
  /** What the age and reduce rules leave out of their walks after this call: candidates waiting for time or for a supersede mark, and parts behind a parked want (sleepers.ts). */
  waiting: number;
  rebuilt: boolean;
  /** Carried-over nodes the graph walk rendered, which the render pass then skipped (render.ts carriedRenderer). */
  walked: number;
}

/** The protect phase alone: the time-dependent protection of the runtime's current graph. */
export function evaluateProtection(rt: SessionRuntime): void {
  rt.protectedBy.resetDynamic();
  const nodes = rt.graph.nodes;
  for (const r of rt.rules.byPhase.protect) {
    if (!r.dynamicWhen) continue; // static protection was settled when the part was processed
    for (const i of rt.candidates[r.index]) if (r.dynamicWhen(nodes[i], rt.ctxs[r.index])) rt.protectedBy.setDynamic(i, r);
  }
}

/** A want as commit found it, before settle moved, blocked or marked it. */
function unsettled(w: Wanted): void {
  w.moved = w.blocked = w.blocker = w.mayRepay = w.insist = undefined;
}

/** What settle decided, besides what stays pending: how it got there, which the parked mayRepay wants lean on (parked.ts RepayBound). */
interface Settled {
  later: Wanted[];
  /** The first change to the sent prefix of the last run. */
  from: number;
  /** It settled in one run, and what went through starts at or after `from` (the runs never asked whether a blocked want may repay). */
  once: boolean;
  /** RepayBound.wakeAt of the last run's links that did not repay (Infinity: none). */
  wakeAt: number;
}

export function runPhases(rt: SessionRuntime, policy: CommitPolicy, promptTokens: number, now: number): Omit<CallResult, "rebuilt" | "walked"> {
  const { graph, state, rules } = rt;
  const nodes = graph.nodes;
  const decisions = state.decisions;
  rt.decidedNow = new DecidedNow();
  const wanted: Wanted[] = [];
  const slotsOf = rt.slots;
  const taken = (n: PartNode, slot: "output" | "input") => (slot === "output" ? slotsOf[n.index]?.output : slotsOf[n.index]?.input) !== undefined;

  evaluateProtection(rt);

  // regret: the model's answer to the last request re-ran calls whose output it had hidden; a rule
  // with regretLimit events in this session decides no new parts (its earlier decisions stay)
  const sentIdx = sentMessageIndex(); // the previous call's prompt ended at this message
  let lastUserSent: number | undefined;
  /** The last user message the provider receives any content of (prompt.ts), once per call. */
  const providerLastUser = () => (lastUserSent ??= lastUserIndex(graph.messages, rt.host));
  if (noteReruns(state, nodes, rt.slots, rt.reruns, sentIdx) > 0) rt.backedOff.forget();
  const backedOff = rt.backedOff.rules(state, policy.regretLimit ?? 0);

  // Blocked wants carried from the last call (parked.ts) stand as wanted again, unless their part is
  // protected on this call or their rule backed off: then they are evaluated as any other.
  const parked = rt.parked;
  const plain = policy.plainBatch === true; // a baseline: one batch for everything, blind to the cache
  const parks = !plain && parking.on;
  if (!parks) parked.clear();
  // a view that stops being protected may let a parked chain go, whether it is the blocker or a
  // view further down (directly or through a forced view): evaluate them all again
  if (rt.protectedBy.endedSinceCheck() && parked.size > 0) parked.clear();
  if (parked.size > 0) {
    for (const i of [...rt.protectedBy.dynamic()]) if (parked.has(i)) parked.unpark(i);
    if (backedOff.size > 0) for (const i of parked.ofRules(backedOff)) parked.unpark(i);
    rt.decidedNow = new DecidedNow(parked.snapshot());
  }
  /** Parked wants whose blocker got wanted on this call: commit takes them in again, in their place. */
  const woken = new Map<number, Wanted>();

  // supersede (marks are kept incrementally by the runtime; committed ones leave pendingMarks)
  // (the pending marks in their order, less the parked ones: activeMarks)
  const marks = rt.activeMarks();
  let kept = 0;
  for (let k = 0; k < marks.length; k++) {
    const mark = marks[k];
    if (mark.parked === true) continue; // its want stands, blocked; back in the list once unparked
    const n = mark.node;
    const id = n.part.id;
    if (rt.pendingMarks.get(id) !== mark) continue; // decided since
    marks[kept++] = mark;
    if (woken.size > 0 && woken.has(n.index)) continue; // commit takes its want in (withParked)
    if (taken(n, "output")) {
      rt.pendingMarks.delete(id);
      kept--;
      continue;
    }
    if (backedOff.has(mark.rule.id)) continue;
    if (rt.protectedBy.has(n.index) && mark.rule.options.overrideProtection !== true) {
      if (rt.protectedBy.permanent.has(n.index)) {
        rt.pendingMarks.delete(id); // protected for good: never a change
        kept--;
      }
      continue;
    }
    const c = candidateFor(rt, mark.rule, n, mark.byNode);
    if (c) want(n, mark.rule, c, mark.by, mark);
    else {
      rt.pendingMarks.delete(id); // the verdict is cached: this mark never becomes a change
      kept--;
    }
  }
  marks.length = kept;

  // age, reduce: each rule walks the parts its static conditions admitted. A part leaves the list
  // for good once it can never change again: its slot decided (decisions are sticky; a restored
  // part is pinned), its patch not worth it (the verdict is cached), or protected for good. What
  // stays is what waits for time (age) or for its batch to commit, so a call costs little more
  // than the parts that are new.
  // A candidate whose time-dependent condition is false sleeps until the clocks reach what it
  // waits for (wake.ts, sleepers.ts), and comes back into the list in node order: the wants, and
  // so the decisions, are the same as when every candidate is evaluated on every call.
  // A candidate whose output a parked want stands for (decidedNow) leaves the list the same way
  // until that want is unparked.
  const clock = graph.clock;
  const clocks = clock ? { turns: clock.turns, calls: clock.calls, tokens: clock.tokens } : undefined;
  takeBackUnparked();
  for (const phase of ["age", "reduce"] as const)
    for (const r of rules.byPhase[phase]) {
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
        if (taken(n, slot) || (!override && rt.protectedBy.permanent.has(i))) continue;
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
        if (c) want(n, r, c);
        else kept--;
      }
      list.length = kept;
    }

  // manual: the model's own requests, committed like rule decisions but never deferred
  for (const [partId, entry] of Object.entries(state.manual ?? {})) {
    const n = graph.byId.get(partId);
    if (!n) continue;
    const current = slotsOf[n.index]?.output;
    // a rule's decision stands; the model's own earlier one gives way to a newer, different request
    if (current && current.rule !== MANUAL.id) continue;
    const patch = manualPatch(n, entry);
    if (current && patch && JSON.stringify(patch) === JSON.stringify(current.patch)) continue;
    const c = patch && evaluatePatch(n, patch);
    if (c && (!rt.decidedNow.has(n.index) || giveWay(n))) want(n, MANUAL, c);
  }

  return commit(wanted);

  /**
   * A rule's want on this call for `n`'s output gives way to a prune request for it: the rule's
   * prune may wait for its batch, the request never does. False when the want stands parked
   * (blocked by an older view in full, it changes nothing) or `n` has no want of its own.
   */
  function giveWay(n: PartNode): boolean {
    const k = wanted.findIndex((w) => w.node === n && w.slot === "output");
    if (k < 0) return false;
    wanted.splice(k, 1);
    return true;
  }

  function waiting(): number {
    let n = 0;
    for (const s of rt.sleepers) n += s?.size ?? 0;
    return n + rt.parkedOut.size;
  }

  /** The candidates whose parked want was unparked since the last call go back into their rules' lists, in node order. */
  function takeBackUnparked() {
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

  function want(n: PartNode, rule: Decider, c: Candidate, by?: string, mark?: SupersedeMark) {
    if (untouchable(rt, n, rule) !== undefined) return;
    const slot = c.patch.input !== undefined ? "input" : "output";
    if (slot === "output") {
      rt.decidedNow.set(n.index, rule.id);
      // parked wants blocked by this part may go through now: commit decides them again
      if (parked.blocks(n.index)) for (const w of parked.unpark(n.index)) woken.set(w.node.index, w);
    }
    wanted.push({ node: n, slot, rule, patch: c.patch, tokens: c.tokens, by, mark });
  }

  /**
   * The wanted list as the marks loop would have made it with the woken wants (and all parked ones
   * when `all`) evaluated in their place, pendingMarks order: their wants are the ones kept when parked.
   * The marks loop's wants come first in that order (by mark.seq, the order of pendingMarks), so the
   * taken-in wants are merged into them by seq rather than by a walk of every pending mark.
   */
  function withParked(list: Wanted[], all: boolean): Wanted[] {
    const extra: Wanted[] = [];
    const add = (p: Wanted) => {
      const mark = p.mark!;
      if (rt.pendingMarks.get(mark.node.part.id) !== mark || mark.node.index !== p.node.index) return; // not pending: the walk would not meet it
      unsettled(p);
      extra.push(p);
    };
    for (const p of woken.values()) add(p);
    if (all) for (const p of parked.wants()) if (!woken.has(p.node.index)) add(p);
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

  // commit: decisions on parts the provider has not seen yet apply at once; decisions that would
  // change the already-sent (cached) prefix wait until the cache breaks anyway (the provider drops
  // earlier reasoning, or the cache expired) or together they repay the re-cache. Where the prefix
  // changes, everything pending behind that point goes in the same call (it costs no more), and an
  // older view of a thing is never left in full while a newer view of it is pruned.
  function commit(active: Wanted[]) {
    const expired = !plain && cacheExpired(sentIdx);
    if (expired) state.cachedSince = state.calls;
    const freeFrom = plain ? Infinity : expired ? 0 : reasoningBreak(sentIdx);
    const pressure = policy.pressureTokens > 0 && promptTokens >= policy.pressureTokens;
    // The wants parked for want of a break-even stay out of settle only while their bound holds
    // (parked.ts RepayBound); otherwise they are woken and decided in their place, as evaluated.
    const bound = parked.repayBound;
    if (bound !== undefined && !(Math.max(1, callsSinceCached()) < bound.wakeAt && sentIdx >= bound.sentIdx && policy.breakEven === bound.breakEven)) wakeRepaying();
    let b = batch(active, freeFrom, pressure);
    // (their first change is known only once settled: where it moved, settle again with them in;
    // also where they were taken in with all parked wants, so that none goes through while parked)
    if (parked.repayCount > 0 && !(b.settled.once && b.settled.from === parked.repayBound!.from)) {
      for (const w of active) unsettled(w);
      wakeRepaying();
      b = batch(active, freeFrom, pressure);
    }
    const { due, settled } = b;
    const later = settled.later;
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
    if (parks) park(due, settled);
    const pendingParts = later.map((w) => ({ partId: w.node.part.id, slot: w.slot }));
    return { committed: rt.committedNow.length, pending: later.length, pendingParts, pendingTokens: later.reduce((s, w) => s + w.tokens, 0), parked: parked.size, waiting: waiting() };
  }

  /** The wants parked for want of a break-even (and what leans on them) are taken into commit again, in their place. */
  function wakeRepaying() {
    for (const w of parked.unparkRepaying()) woken.set(w.node.index, w);
  }

  /**
   * The due and pending wants, settled. Parked wants are pending wants on sent parts that settle
   * would block: counted here, left out of the lists. Where one is on a part not sent yet, or the
   * batch stays pending (settle may then move them), they are all taken in, in their place, and
   * decided as any other.
   */
  function batch(active: Wanted[], freeFrom: number, pressure: boolean): { due: Wanted[]; settled: Settled } {
    const summary = parked.size > 0 ? parked.summary() : undefined;
    const withAll = summary !== undefined && summary.lastMsg > sentIdx;
    const outside = summary !== undefined && !withAll ? summary : undefined;
    let [due, later] = split(withAll || woken.size > 0 ? withParked(active, withAll) : active, sentIdx);
    // a plain batch counts the outputs it prunes, as the pruners it reproduces do
    const pendingTokens = later.reduce((s, w) => s + (plain ? tokensOf(slotChars(w.node, w.patch)) : w.tokens), 0) + (outside?.tokens ?? 0);
    const pendingCount = later.length + (outside?.count ?? 0);
    // settle starts from the first due want on the sent prefix, as if every due want went through;
    // the parked wants go with the batch too, blocked again, and count there as they would evaluated
    let start = Infinity;
    if (pendingCount > 0 && (pendingTokens >= policy.minTokens || pressure || (!plain && paysOff(firstOf(later, outside), pendingTokens, freeFrom)))) {
      due.push(...later);
      later = [];
      if (outside) start = outside.first;
    } else if (outside) [due, later] = split(withParked(active, true), sentIdx);
    return { due, settled: settle(due, later, sentIdx, freeFrom, start) };
  }

  /** Decisions due now (manual ones, and those on parts not sent yet) and those that may wait. */
  function split(list: Wanted[], sentIdx: number): [Wanted[], Wanted[]] {
    const due: Wanted[] = [];
    const later: Wanted[] = [];
    for (const w of list) (w.rule === MANUAL || (!plain && unseen(w.node, sentIdx)) ? due : later).push(w);
    return [due, later];
  }

  /**
   * Is a decision on `n` free on this call: the provider has not been sent it yet, or receives
   * nothing of it now (reasoning of an earlier turn, which the host leaves out once a later user
   * message exists)? Such a decision changes no cached prefix, so it neither waits nor places the
   * first change.
   */
  function unseen(n: PartNode, sentIdx: number): boolean {
    if (n.msgIndex > sentIdx) return true;
    if (n.part.type !== "reasoning" || !rt.host.dropsAtNextTurn(n.part)) return false;
    return n.msgIndex < providerLastUser();
  }

  /** The first node index among pending wants and the parked ones counted beside them. */
  function firstOf(later: Wanted[], outside?: ParkedSummary): number {
    let first = Math.min(nodes.length, outside?.first ?? Infinity);
    for (const w of later) if (w.node.index < first) first = w.node.index;
    return first;
  }

  /**
   * Parks the blocked supersede wants whose blocker is parked or wanted by nothing on this call (and
   * undecided): the next calls skip them until that changes (parked.ts). Oldest first, so that a
   * chain of views parks whole. One blocked for want of a break-even is parked under a wake bound,
   * only when settle ran once (its block was not asked whether it may repay: parked.ts RepayBound).
   */
  function park(due: Wanted[], settled: Settled) {
    const blocked = due.filter((w) => w.blocked && (!w.mayRepay || settled.once) && w.mark !== undefined && !parked.has(w.node.index));
    blocked.sort((a, b) => a.node.index - b.node.index);
    const bound: RepayBound = { from: settled.from, wakeAt: settled.wakeAt, sentIdx, breakEven: policy.breakEven };
    for (const w of blocked) {
      const b = w.blocker!;
      if (!(parked.has(b) || (!rt.decidedNow.has(b) && slotsOf[b]?.output === undefined))) continue;
      if (w.mayRepay) parked.parkRepaying(w, b, bound);
      else parked.park(w, b);
    }
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
  function settle(due: Wanted[], later: Wanted[], sentIdx: number, freeFrom: number, start: number): Settled {
    const dueCount = due.length;
    let from = Math.min(freeFrom, start);
    for (const w of due) if (!unseen(w.node, sentIdx) && w.node.index < from) from = w.node.index;
    // wants blocked at an earlier first change with no break-even waiting on the way: a later one
    // lets less go, so they stay blocked whatever the calls since the cache was written
    let firm: Set<Wanted> | undefined;
    let once = false;
    let wakeAt = Infinity;
    for (let run = 1; ; run++) {
      const ran = settleAt(due, later, sentIdx, from);
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
  function settleAt(due: Wanted[], later: Wanted[], sentIdx: number, from: number): { first: number; mayRepay: boolean; behindGoing: number; wakeAt: number } {
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
      const newer = rt.marks.get(w.node.part.id)?.byNode;
      const n = newer !== undefined ? dueOut.get(newer.index) : undefined;
      if (n !== undefined) queue.push(n);
    };
    while (queue.length > 0) {
      const w = queue.pop()!;
      if (w.blocked || dueOut.get(w.node.index) !== w) continue;
      for (const older of rt.olderViews.get(w.node.index) ?? []) {
        const o = older.node;
        let repays = true;
        // hidden already: by a decision, or by the host (its placeholder is no view in full)
        if (slotsOf[o.index]?.output || clearedByHost(o.part)) continue;
        const pending = laterOut.get(o.index);
        const inDue = pending === undefined ? dueOut.get(o.index) : undefined;
        if (pending && (repays = forcedRepays(o, w, from, sentIdx, pending.tokens))) {
          if (insists(w)) pending.insist = true;
          move(pending);
          besides(pending, w);
          queue.push(pending);
        } else if (pending) {
          // its own prune waits for a batch, and going now beside w would not repay the re-cache either
          block(w, o, true, repaysAt(o, w, from, pending.tokens));
          break;
        } else if (inDue) {
          if (beside.has(inDue)) besides(inDue, w);
        } else if (!forced.has(o.index) && (repays = forcedRepays(o, w, from, sentIdx)) && forced.set(o.index, forcedView(o, older)).get(o.index)) {
          const f = forced.get(o.index)!;
          if (insists(w)) f.insist = true;
          due.push(f);
          dueOut.set(o.index, f);
          besides(f, w);
          queue.push(f);
        } else {
          // blocked only for want of a break-even, here or down the chain of views: a later call may repay it
          const repayLater = !repays ? forcedCandidate(o, older) !== undefined : (forced.get(o.index) ?? blockedAt.get(o.index))?.mayRepay === true;
          block(w, o, repayLater, !repays && repayLater ? repaysAt(o, w, from) : Infinity);
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
      if (w.blocked || unseen(w.node, sentIdx)) continue;
      else if (behind.has(w)) behindGoing = Math.min(behindGoing, w.node.index);
      else if (w.node.index < first) first = w.node.index;
    return { first, mayRepay, behindGoing, wakeAt };
  }
  /**
   * An older view whose supersede was not worth a change on its own (its output is no larger than
   * the note that replaces it, a "FAIL" line say): replaced anyway when a newer view of the same
   * thing goes, so that the stale view is not the one left in full (where it repays: forcedRepays).
   */
  function forcedView(o: PartNode, mark: SupersedeMark): Wanted | undefined {
    const c = forcedCandidate(o, mark);
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
  function forcedCandidate(o: PartNode, mark: SupersedeMark): Candidate | undefined {
    // (o is mark.node.) A patch known not to fit settles it (inFullBeside says no-note) before the
    // look-ups, which are cache misses on a long session.
    if (mark.forced === null || inFullBeside(rt, mark, backedOff) !== undefined) return undefined;
    return mark.forced ?? undefined;
  }

  /** A prune request, or an older view taken in beside one: it goes whatever the break-even (Wanted.insist). */
  function insists(w: Wanted): boolean {
    return w.rule === MANUAL || w.insist === true;
  }

  /**
   * May an older view `o` go beside its newer view `w` (forced, or its own prune pending with
   * `ownTokens`)? Free behind the first change to the sent prefix (`from`) or where the provider has
   * not seen it; before it, only if what the two free repays re-caching from `o` up to that change,
   * by the same break-even as a batch. Beside a prune request, always: the model or the user asked
   * for the change, and it is never deferred.
   */
  function forcedRepays(o: PartNode, w: Wanted, from: number, sentIdx: number, ownTokens = 0): boolean {
    if (o.index >= from || unseen(o, sentIdx) || !(policy.breakEven > 0) || insists(w)) return true;
    const cached = callsSinceCached();
    return (w.tokens + ownTokens) * Math.max(1, cached) >= policy.breakEven * recacheTokens(o, from);
  }

  /**
   * For a link that did not repay (forcedRepays false): below how many calls since the cache was
   * written it still does not at this `from` (a later call's span from `o` is no shorter). The floor
   * of the ratio: a call early, never late (x·tokens < breakEven·span for every x < it).
   */
  function repaysAt(o: PartNode, w: Wanted, from: number, ownTokens = 0): number {
    return Math.floor((policy.breakEven * recacheTokens(o, from)) / (w.tokens + ownTokens));
  }

  /** What taking the older view `o` in re-caches: the sent prefix from it up to the first change `from`. */
  function recacheTokens(o: PartNode, from: number): number {
    return tokensOf(sentBetween(rt, o.index, Math.min(from, nodes.length)));
  }

  /**
   * Cache break-even: is freeing `freed` tokens worth re-caching everything from the first edit up
   * to `end` (the prefix break, or the end of the prompt)? Tool inputs are re-cached too.
   */
  function paysOff(first: number, freed: number, end: number): boolean {
    if (!(policy.breakEven > 0) || freed <= 0) return false;
    // Where the cache breaks anyway on this call, the re-cache runs only up to that break, and waiting
    // would make it run to the prompt's end: no wait there.
    const wait = end === Infinity ? policy.minTurnCalls ?? 0 : 0;
    if (wait > 0 && turnCalls(wait) < wait) return false;
    const after = sentBetween(rt, first, Math.min(end, nodes.length));
    const cached = callsSinceCached();
    return freed * Math.max(1, cached) >= policy.breakEven * tokensOf(after);
  }

  /**
   * Calls the current turn has made (its assistant messages), counted up to `limit`. A turn's first
   * calls say nothing of how long it goes on, and a session often ends a call or two into a turn.
   */
  function turnCalls(limit: number): number {
    const msgs = graph.messages;
    let n = 0;
    for (let i = graph.lastUserMsgIndex + 1; i < msgs.length && n < limit; i++) if (msgs[i]?.info?.role === "assistant") n++;
    return n;
  }

  /** Calls to come before the cache expires again, estimated as the calls since it last did. */
  function callsSinceCached(): number {
    return state.calls - Math.min(state.calls, state.cachedSince ?? 0);
  }

  /** Is the previous call older than the cache lifetime? Then nothing is cached: the prefix breaks at the start. */
  function cacheExpired(sentIdx: number): boolean {
    return sentIdx >= 0 && cacheExpiredSince(state, policy.cacheTtlMinutes, now);
  }

  /**
   * Providers drop the reasoning of turns before the last user message. On the first call after a
   * new user message the cached prefix therefore ends at the previous turn's first reasoning part:
   * its node index, or Infinity when there is no such break on this call.
   */
  function reasoningBreak(sentIdx: number): number {
    const msgs = graph.messages;
    if (sentIdx < 0 || graph.lastUserMsgIndex <= sentIdx) return Infinity;
    // the provider's last user message is the last one it receives any content of (prompt.ts)
    if (providerLastUser() <= sentIdx) return Infinity; // no new user message it receives
    const sentUser = lastUserIndex(msgs, rt.host, sentIdx); // the last call sent the reasoning after this message
    let lo = 0; // nodes are in message order: the first node after sentUser
    for (let hi = nodes.length; lo < hi; ) {
      const mid = (lo + hi) >>> 1;
      if (nodes[mid].msgIndex <= sentUser) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < nodes.length; i++) {
      const n = nodes[i];
      if (n.msgIndex > sentIdx) break;
      if (n.part.type !== "reasoning" || !n.part.text || !rt.host.dropsAtNextTurn(n.part)) continue;
      const info = msgs[n.msgIndex]?.info;
      if (info?.role === "assistant" && (!info.error || (info.error as { name?: string }).name === rt.host.abortedError)) return n.index;
    }
    return Infinity;
  }

  /**
   * The index of the last message the previous call sent. A history may repeat message ids
   * (OpenCode's do not); then the first message with that id is taken: assuming less was sent
   * costs at most a cache write, while assuming more leaves decisions on unsent parts waiting
   * behind a change of the prefix (a later message reusing the id hid the new user turn's break).
   */
  function sentMessageIndex(): number {
    if (state.sentUpTo === undefined) return -1; // nothing sent yet: everything is tail
    // the walk found it when it was asked for this id (no second pass over the messages)
    const i = graph.anchor2 === state.sentUpTo && graph.anchorIndex2 !== undefined ? graph.anchorIndex2 : graph.messages.findIndex((m) => m?.info?.id === state.sentUpTo);
    return i >= 0 ? i : graph.messages.length; // prefix unknown (compaction, revert): treat all as sent
  }
}
