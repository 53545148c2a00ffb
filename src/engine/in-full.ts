// Why an older view of a thing stays in full beside a newer view that goes. Commit never hides a
// newer view while an older view of it stays in full (settle.ts settleAt: it forces a note on the
// older view, or holds the newer one back); holders.ts answers a prune request from the same test
// ahead of time. One predicate, so a request is refused exactly where commit would hold it back.
import type { PartNode } from "../graph/graph.js";
import type { Decider, SupersedeMark } from "./parked.js";
import { evaluatePatch, type Candidate } from "./candidate.js";
import { patchChars, slotChars } from "./render.js";
import type { SessionRuntime } from "./session.js";
import { isPinned } from "./pins.js";
import { decisionsOf } from "./state.js";

/** Why no rule may change a part (untouchable), whatever it wants. */
export type Untouchable = "pinned" | "shared-id" | "other-type" | "user-text" | "current-reasoning";

/**
 * Invariants no rule can switch off: a restored part, the user's own words (only the opt-in
 * code-block action may shorten them) and the current turn's reasoning, which providers verify by
 * signature; and parts whose id holds no decisions of theirs.
 */
export function untouchable(rt: SessionRuntime, n: PartNode, rule: Decider): Untouchable | undefined {
  const { state, graph } = rt;
  if (isPinned(state, n.part.id)) return "pinned";
  // Decisions are keyed by part id: a part sharing its id with an earlier one is never decided.
  if (graph.byId.get(n.part.id) !== n) return "shared-id";
  // ...and so is one whose id holds the decisions of a part of another type (cut off, say)
  if (rt.slots[n.index] === undefined && state.decisions[n.part.id] !== undefined && decisionsOf(state.decisions, n.part) === undefined) return "other-type";
  const role = n.message.info?.role;
  if (role === "user" && n.part.type === "text" && !n.part.synthetic) return rule.action.name !== "collapse-code-blocks" ? "user-text" : undefined;
  return n.part.type === "reasoning" && n.msgIndex > graph.lastUserMsgIndex ? "current-reasoning" : undefined;
}

/**
 * Why the older view `mark.node` stays in full beside its newer view `mark.byNode` when that one
 * goes (undefined: a note is forced on it, forcedNote). restored: pinned; backed-off: the mark's rule
 * backed off after regret (`backedOff`); protected: a protect rule holds it; untouchable's other
 * reasons; no-note: the rule has no note for it that fits (forcedNote).
 */
export type InFull = "restored" | "backed-off" | "protected" | Exclude<Untouchable, "pinned"> | "no-note";

export function inFullBeside(rt: SessionRuntime, mark: SupersedeMark, backedOff: ReadonlySet<string>): InFull | undefined {
  const o = mark.node; // olderViews lists the marks of the first nodes of their ids
  const fixed = untouchable(rt, o, mark.rule);
  if (fixed === "pinned") return "restored";
  if (backedOff.has(mark.rule.id)) return "backed-off";
  if (rt.protectedBy.has(o.index) && mark.rule.options.overrideProtection !== true) return "protected";
  if (fixed !== undefined) return fixed;
  return forcedNote(mark) === null ? "no-note" : undefined;
}

/** How much larger than the output it replaces the note on a forced older view may be. */
const FORCED_GROWTH_CHARS = 160;

/**
 * The rule's note on the older view `mark.node` beside its newer view, growth allowed up to
 * FORCED_GROWTH_CHARS (null: none). It depends only on the part, the rule and the newer view (as
 * verdicts.ts candidateFor's): made once per mark, kept on it.
 */
export function forcedNote(mark: SupersedeMark): Candidate | null {
  if (mark.forced !== undefined) return mark.forced;
  const o = mark.node;
  const patch = mark.rule.action.apply(o, mark.rule.options as Record<string, any>, { by: mark.byNode });
  const fits = !!patch && patch.output !== undefined && patchChars(patch) - slotChars(o, patch) <= FORCED_GROWTH_CHARS;
  return (mark.forced = fits ? evaluatePatch(o, patch, { ...mark.rule.options, allowGrowth: true }) : null);
}
