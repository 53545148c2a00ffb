// Blocked wants carried from call to call. A supersede mark's want on a part is blocked by commit
// while an older view of the part stays in full ("never stale over fresh", settle.ts), and a
// blocked want is not a decision: without this index it was evaluated, wanted and blocked again on
// every call (about 3,400 per call on the 2,000-message bench session, docs/bench.md).
//
// A parked want is one the marks loop would produce again unchanged (nothing it depends on has
// changed: see PhaseCall in call.ts) and commit would block again, because the older view that blocked it (its
// blocker) is still either a parked want itself or a part with no output decision that nothing
// wants. The marks loop skips it; commit counts it as a pending want that stays blocked. It is
// unparked, with every parked want that depends on it, when its blocker gets wanted, when its own
// part is protected or its rule backs off, and all at once when the session's state changed between
// calls (a prune request, restore or sweep) or the caches are rebuilt.
//
// A want blocked only for want of a break-even (Wanted.mayRepay) is parked too, under a wake bound
// (RepayBound), and only from a call whose settle ran once: its chain stays blocked while the
// first change to the sent prefix (settle's `from`) is where it was parked, the calls since the
// cache was written stay below the fewest at which a link that did not repay would, and the sent
// prefix does not shrink (a longer span from the older view only repays less). Commit wakes all
// of them, with what depends on them, before settling when the calls or the sent prefix break the
// bound, and settles again with them in when the call did not settle once at that first change.
import type { PartNode } from "../graph/graph.js";
import type { Patch } from "./actions/index.js";
import type { CompiledRule } from "./ruleset.js";

export interface SupersedeMark {
  rule: CompiledRule;
  by: string; // part id of the superseding part
  /** The nodes the graph holds for the marked part's id and for `by` (the first node of each id; fixed until a rebuild). */
  node: PartNode;
  byNode: PartNode;
  /** Its want is parked (parked.ts, which alone sets it). */
  parked?: boolean;
  /** Creation order: the order of pendingMarks, which the marks loop keeps. */
  seq: number;
  /** forced-views.ts forcedView: the patch of the marked part as a forced older view (null: none), once made. */
  forced?: { patch: Patch; tokens: number } | null;
  /** forced-views.ts forcedView: the want made of `forced`, kept for the later calls that force the part again. */
  forcedWant?: Wanted;
}

/** What decided a part: a compiled rule, or the model's own request. */
export interface Decider {
  id: string;
  options?: Record<string, unknown>;
  action: { name: string };
}

/** A decision wanted on this call (phases.ts), before commit decides whether it applies now. */
export interface Wanted {
  node: PartNode;
  slot: "output" | "input";
  rule: Decider;
  patch: Patch;
  tokens: number;
  by?: string;
  /** The supersede mark the want comes from (the marks loop), if any. */
  mark?: SupersedeMark;
  /** commit: taken out of the pending list / held back because an older view stays in full (its node index). */
  moved?: boolean;
  blocked?: boolean;
  blocker?: number;
  /**
   * Blocked only because forcing an older view aside did not repay on this call (forced-views.ts
   * forcedRepays), its blocker or one further down its chain of views: the calls since the cache was
   * written grow, and the first change to the sent prefix moves, so a later call may repay it.
   * Parked only under a wake bound (RepayBound).
   */
  mayRepay?: boolean;
  /**
   * Goes whatever the break-even: a prune request of the model or the user (never deferred), or an
   * older view taken in beside one, so that the request is not held back by a stale view in full.
   */
  insist?: boolean;
}

/**
 * What keeps the parked mayRepay wants blocked (forced-views.ts forcedRepays is false for a link that
 * does not repay while `from` stays, the calls since the cache was written stay below `wakeAt`,
 * and the older view stays sent; a link that was free or repaid stays so): the settle run they
 * were blocked in, and every later call they stayed parked through, settled once at `from`.
 */
export interface RepayBound {
  /** The first change to the sent prefix of that settle run. */
  from: number;
  /** The fewest calls since the cache was written at which a link that did not repay might (floor: a call early is safe). */
  wakeAt: number;
  /** The lowest previous call's last message index they were parked at. */
  sentIdx: number;
  breakEven: number;
}

/** Off only in tests: the calls then run without parking, as the reference the parked calls must equal (tests/engine/parked.test.ts). */
export const parking = { on: true };

/** What commit needs of the parked wants as a whole (they are pending wants on already-sent parts). */
export interface ParkedSummary {
  count: number;
  tokens: number;
  /** The lowest node index and the highest message index among them. */
  first: number;
  lastMsg: number;
}

/** The parked wants of a session (SessionRuntime.parked); a want's mark is flagged while it is parked, so the marks loop skips it without a look-up. */
export class ParkedWants<W extends Wanted = Wanted> {
  /** Node index → the parked want on that part's output, and the node index of its blocker. */
  private readonly byNode = new Map<number, { want: W; blocker: number }>();
  /** Node indexes of the parked wants blocked for want of a break-even (Wanted.mayRepay), and what keeps them blocked. */
  private readonly repaying = new Set<number>();
  private bound?: RepayBound;
  /** Blocker node index → the node indexes of the parked wants it blocks. */
  private readonly dependents = new Map<number, Set<number>>();
  /** Node index → the parked want's rule id: the entries they stand for in SessionRuntime.decidedNow. */
  readonly rules = new Map<number, string>();
  /** Parked wants per rule id (backed-off rules unpark theirs). */
  private readonly perRule = new Map<string, number>();
  /** Wants unparked since the marks loop last took them (SessionRuntime.activeMarks): their marks are walked again. */
  readonly released: W[] = [];
  /** Node indexes unparked since the age and reduce phases last took them back into their lists (walk-rules.ts). */
  readonly freed: number[] = [];
  private summed: ParkedSummary = { count: 0, tokens: 0, first: Infinity, lastMsg: -Infinity };
  /** A want at `first` or `lastMsg` was unparked: summary() recounts. */
  private recount = false;
  /** Since the last snapshot(): the wants parked then and unparked since (node index → rule id), and the nodes parked since. */
  private readonly unparkedSince = new Map<number, string>();
  private readonly parkedSince = new Set<number>();

  get size(): number {
    return this.byNode.size;
  }

  has(i: number): boolean {
    return this.byNode.has(i);
  }

  get(i: number): W | undefined {
    return this.byNode.get(i)?.want;
  }

  /** The parked wants, in no particular order. */
  *wants(): IterableIterator<W> {
    for (const { want } of this.byNode.values()) yield want;
  }

  /** Does a parked want depend on node `i` staying as it is (not wanted, not decided)? */
  blocks(i: number): boolean {
    return this.dependents.has(i);
  }

  /** Parked wants blocked for want of a break-even (parkRepaying). */
  get repayCount(): number {
    return this.repaying.size;
  }

  /** What keeps them blocked (undefined when none is parked). */
  get repayBound(): Readonly<RepayBound> | undefined {
    return this.repaying.size > 0 ? this.bound : undefined;
  }

  /**
   * Parks a want blocked for want of a break-even, in a settle run under `bound`: with those parked
   * already, only at the same first change (the bound then narrows to both).
   */
  parkRepaying(want: W, blocker: number, bound: RepayBound): boolean {
    const i = want.node.index;
    if (this.byNode.has(i)) return false;
    const b = this.repayBound;
    if (b !== undefined && (b.from !== bound.from || b.breakEven !== bound.breakEven)) return false;
    this.bound = b === undefined ? { ...bound } : { ...b, wakeAt: Math.min(b.wakeAt, bound.wakeAt), sentIdx: Math.min(b.sentIdx, bound.sentIdx) };
    this.park(want, blocker);
    this.repaying.add(i);
    return true;
  }

  /** Unparks every want parked for want of a break-even, with what depends on them; returns the wants unparked. */
  unparkRepaying(out: W[] = []): W[] {
    for (const i of [...this.repaying]) this.unpark(i, out);
    return out;
  }

  park(want: W, blocker: number): void {
    const i = want.node.index;
    if (this.byNode.has(i)) return;
    this.parkedSince.add(i);
    this.byNode.set(i, { want, blocker });
    this.rules.set(i, want.rule.id);
    this.perRule.set(want.rule.id, (this.perRule.get(want.rule.id) ?? 0) + 1);
    if (want.mark) want.mark.parked = true;
    let deps = this.dependents.get(blocker);
    if (!deps) this.dependents.set(blocker, (deps = new Set()));
    deps.add(i);
    const s = this.summed;
    s.count++;
    s.tokens += want.tokens;
    if (i < s.first) s.first = i;
    if (want.node.msgIndex > s.lastMsg) s.lastMsg = want.node.msgIndex;
  }

  /** Unparks what depends on node `i`, transitively, and `i` itself when it is parked; returns the wants unparked. */
  unpark(i: number, out: W[] = []): W[] {
    const own = this.byNode.get(i);
    if (own) {
      const w = own.want;
      if (!this.parkedSince.has(i) && !this.unparkedSince.has(i)) this.unparkedSince.set(i, w.rule.id);
      this.byNode.delete(i);
      this.repaying.delete(i);
      this.rules.delete(i);
      const left = this.perRule.get(w.rule.id)! - 1;
      if (left > 0) this.perRule.set(w.rule.id, left);
      else this.perRule.delete(w.rule.id);
      if (w.mark) w.mark.parked = false;
      const deps = this.dependents.get(own.blocker);
      deps?.delete(i);
      if (deps?.size === 0) this.dependents.delete(own.blocker);
      const s = this.summed;
      s.count--;
      s.tokens -= w.tokens;
      if (i === s.first || w.node.msgIndex === s.lastMsg) this.recount = true;
      out.push(w);
      this.released.push(w);
      this.freed.push(i);
    }
    const deps = this.dependents.get(i);
    if (deps) for (const d of [...deps]) this.unpark(d, out);
    return out;
  }

  /** Node indexes of parked wants whose rule is in `ids`. */
  ofRules(ids: ReadonlySet<string>): number[] {
    const out: number[] = [];
    if ([...ids].some((id) => this.perRule.has(id))) for (const [i, p] of this.byNode) if (ids.has(p.want.rule.id)) out.push(i);
    return out;
  }

  summary(): Readonly<ParkedSummary> {
    if (this.recount) {
      this.recount = false;
      const s = this.summed;
      s.first = Infinity;
      s.lastMsg = -Infinity;
      for (const { want } of this.byNode.values()) {
        if (want.node.index < s.first) s.first = want.node.index;
        if (want.node.msgIndex > s.lastMsg) s.lastMsg = want.node.msgIndex;
      }
    }
    return this.summed;
  }

  /**
   * Marks the parked wants as they stand now, which standing() answers for until the next snapshot
   * (a call's decidedNow: the wants that stood at its start count as wanted all through it, also
   * once unparked), without copying them.
   */
  snapshot(): this {
    this.unparkedSince.clear();
    this.parkedSince.clear();
    return this;
  }

  /** The rule of the want parked on node `i` at the last snapshot, if any. */
  standing(i: number): string | undefined {
    const gone = this.unparkedSince.get(i);
    if (gone !== undefined) return gone;
    return this.parkedSince.has(i) ? undefined : this.rules.get(i);
  }

  clear(): void {
    this.unparkedSince.clear();
    this.parkedSince.clear();
    for (const { want } of this.byNode.values()) {
      if (want.mark) want.mark.parked = false;
      this.released.push(want);
      this.freed.push(want.node.index);
    }
    this.byNode.clear();
    this.repaying.clear();
    this.bound = undefined;
    this.dependents.clear();
    this.rules.clear();
    this.perRule.clear();
    this.summed = { count: 0, tokens: 0, first: Infinity, lastMsg: -Infinity };
    this.recount = false;
  }
}

/**
 * What a call has wanted so far (node index → rule id: SessionRuntime.decidedNow): its own wants, and
 * the parked wants that stood at its start (ParkedWants.snapshot), read in place.
 */
export class DecidedNow {
  private readonly own = new Map<number, string>();
  constructor(private readonly parked?: { standing(i: number): string | undefined }) {}
  has(i: number): boolean {
    return this.own.has(i) || (this.parked !== undefined && this.parked.standing(i) !== undefined);
  }
  get(i: number): string | undefined {
    return this.own.get(i) ?? this.parked?.standing(i);
  }
  set(i: number, rule: string): void {
    this.own.set(i, rule);
  }
}
