// When a time-dependent condition that is false on this call can hold again: a lower bound on the
// session's clocks, derived from the condition's tree (lang/condition.ts), so the age and reduce
// phases visit a waiting candidate only once its time may have come (sleepers.ts).
//
// Between two calls that do not rebuild the runtime the history only grows at its end, so the
// clocks (user turns, tool calls, tokens of completed tool output) never go back, and a fact of
// GROWTH grows by at most its clock's growth: `ageTurns` and `ageCalls` by exactly that, `idleTurns`
// and `idleCalls` by at most that (a later use only makes them smaller), `toolTokensNewer` by
// exactly the token clock's. So `fact >= value` (or `>`), false now, stays false until the clock has
// grown by the difference. Static leaves never change. Everything else (other operators, negated
// comparisons, `not`, phase facts, promptTokens, which drops with the previous turn's reasoning)
// bounds nothing: such a condition is evaluated on every call, as before.
//
// One phase fact waits for an event instead: `superseded` equal true. Supersede marks are only added
// while the runtime lives (session.ts supersedeOlder; a rebuild starts the candidates anew), so a
// part not superseded now cannot be before a mark names its part id: the condition waits for that
// mark (Wake.mark) as well as for its clocks.
import type { PartNode } from "../graph/graph.js";
import type { ConditionNode, LeafNode } from "../lang/condition.js";
import { getPath } from "../lang/path.js";
import { compileCondition } from "./compile.js";
import { factByName, GROWTH, type Clock, type FactContext } from "./facts.js";

/** A value per clock: the clocks' values on a call, or what they must reach first. */
export type Clocks = Record<Clock, number>;

/** What a condition waits for: its clocks, and with `mark` a supersede mark on the part's id too (set only when true). */
export type Wake = Clocks & { mark?: true };

/**
 * The clock values the condition cannot hold before (each clock must reach its value); every value
 * at or below now when nothing is known, Infinity when the condition can never hold.
 */
export type WakeFn = (n: PartNode, ctx: FactContext, now: Clocks) => Wake;

export const CLOCKS: readonly Clock[] = ["turns", "calls", "tokens"];
const NONE: Clocks = Object.freeze({ turns: -Infinity, calls: -Infinity, tokens: -Infinity });
const NEVER: Clocks = Object.freeze({ turns: Infinity, calls: Infinity, tokens: Infinity });
/** Not before the part is superseded (any clocks). */
const MARK: Wake = Object.freeze({ turns: -Infinity, calls: -Infinity, tokens: -Infinity, mark: true });

type Bound = WakeFn;

const STATIC_KINDS = new Set(["static", "config"]);
const isStatic = (cond: ConditionNode) => [...compileCondition(cond).kinds].every((k) => STATIC_KINDS.has(k));

/** `fact OP value` with OP as written and its `not:` decorators: the comparison it amounts to, if `>=` or `>`. */
function growthComparison(leaf: LeafNode): ">=" | ">" | undefined {
  const odd = leaf.negations % 2 === 1;
  switch (leaf.op) {
    case "greaterThanInclusive":
      return odd ? undefined : ">=";
    case "greaterThan":
      return odd ? undefined : ">";
    case "lessThan": // not:lessThan on numbers is >=
      return odd ? ">=" : undefined;
    case "lessThanInclusive":
      return odd ? ">" : undefined;
  }
  return undefined;
}

/** `superseded` equal true (as written: no path, no reference, no `not:`), which waits for a mark (Wake.mark). */
function waitsForMark(leaf: LeafNode): boolean {
  return leaf.fact?.fact === "superseded" && !leaf.fact.path?.text && !leaf.path?.text && leaf.op === "equal" && leaf.negations === 0 && leaf.ref === undefined && leaf.value === true;
}

/** A leaf `growing fact >= value` (or `>`) with a value that does not change: its bound; undefined for any other leaf. */
function leafBound(leaf: LeafNode): Bound | undefined {
  if (waitsForMark(leaf)) return (n, ctx) => (ctx.supersededRule(n) !== undefined ? NONE : MARK);
  const fact = leaf.fact?.fact;
  const clock = fact === undefined ? undefined : GROWTH[fact];
  const cmp = growthComparison(leaf);
  if (clock === undefined || cmp === undefined || leaf.path?.text) return undefined;
  const get = factByName.get(fact!)!.get;
  let value: (n: PartNode, ctx: FactContext) => unknown;
  if (leaf.ref) {
    const def = factByName.get(leaf.ref.fact);
    const segs = leaf.ref.path?.text ? leaf.ref.path.segments : [];
    if (!def || !STATIC_KINDS.has(def.kind) || !segs) return undefined;
    value = segs.length === 0 ? def.get : (n, c) => getPath(def.get(n, c), segs);
  } else {
    const v = leaf.value;
    value = () => v;
  }
  return (n, ctx, now) => {
    const a = get(n, ctx);
    const b = value(n, ctx);
    if (typeof a !== "number" || typeof b !== "number" || !Number.isFinite(a) || !Number.isFinite(b)) return NONE;
    if (cmp === ">=" ? a >= b : a > b) return NONE;
    // the fact grows by at most the clock's growth (whole numbers): it needs b - a more (>=), or more than that (>)
    const more = cmp === ">=" ? Math.ceil(b - a) : Math.floor(b - a) + 1;
    return { ...NONE, [clock]: now[clock] + more };
  };
}

function bound(cond: ConditionNode): Bound {
  if (cond.kind !== "invalid" && isStatic(cond)) {
    const test = compileCondition(cond).test;
    return (n, ctx) => (test(n, ctx) ? NONE : NEVER);
  }
  switch (cond.kind) {
    case "leaf":
      return leafBound(cond) ?? (() => NONE);
    case "all": {
      // every child must hold: the latest of their bounds, clock by clock
      const children = cond.children.map(bound);
      return (n, ctx, now) => {
        let out = NONE;
        for (const child of children) out = latest(out, child(n, ctx, now));
        return out;
      };
    }
    case "any": {
      // one child must hold: the earliest of their bounds, clock by clock (an empty any holds)
      if (cond.children.length === 0) return () => NONE;
      const children = cond.children.map(bound);
      return (n, ctx, now) => {
        let out = NEVER;
        for (const child of children) out = earliest(out, child(n, ctx, now));
        return out;
      };
    }
    default:
      return () => NONE;
  }
}

// (all: a mark either child waits for; any: only one both wait for, since either may hold first)
function latest(a: Wake, b: Wake): Wake {
  if (b === NONE) return a;
  if (a === NONE) return b;
  const out: Wake = { turns: Math.max(a.turns, b.turns), calls: Math.max(a.calls, b.calls), tokens: Math.max(a.tokens, b.tokens) };
  if (a.mark === true || b.mark === true) out.mark = true;
  return out;
}

function earliest(a: Wake, b: Wake): Wake {
  if (a === NEVER) return b;
  if (b === NEVER) return a;
  const out: Wake = { turns: Math.min(a.turns, b.turns), calls: Math.min(a.calls, b.calls), tokens: Math.min(a.tokens, b.tokens) };
  if (a.mark === true && b.mark === true) out.mark = true;
  return out;
}

/** The wake function of a time-dependent condition; undefined when no leaf of it reads a growing fact or waits for a mark (nothing to wait for). */
export function wakeOf(cond: ConditionNode): WakeFn | undefined {
  const grows = (c: ConditionNode): boolean =>
    c.kind === "leaf" ? c.fact !== undefined && (GROWTH[c.fact.fact] !== undefined || waitsForMark(c)) : c.kind === "all" || c.kind === "any" ? c.children.some(grows) : c.kind === "not" ? grows(c.child) : false;
  return grows(cond) ? bound(cond) : undefined;
}
