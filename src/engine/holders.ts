// The older views that keep a newer view in full. Commit never hides a newer view of a thing while
// an older view of it stays in full ("never stale over fresh", settle.ts settleAt): beside a newer
// view that goes, each older view goes too (its own prune, a prune request, or a note forced on it),
// unless nothing may change it. Those older views hold the newer one, so a prune request for it
// (context_prune, /acp sweep) would change nothing; manual.ts refuses it instead, and says which
// views hold it. Whether an older view stays in full is settle's own test (in-full.ts inFullBeside),
// made when the request comes rather than on the next call; of its reasons only untouchable's rarer
// ones (a part id shared with an earlier part, say) are not reported here yet.
import type { PartNode } from "../graph/graph.js";
import { inFullBeside } from "./in-full.js";
import type { SessionRuntime } from "./session.js";

/** An older view that stays in full, and why it does. */
export interface Holder {
  partId: string;
  /**
   * restored: pinned (/acp restore, context_prune restore); protected: a protect rule holds it;
   * backed-off: the rule that would hide it beside the newer view backed off after regret; no-note:
   * that rule has no note for it short enough (a note may outgrow a small output only a little).
   */
  why: "restored" | "protected" | "backed-off" | "no-note";
  /** The protect rule, or the rule that backed off or has no note. */
  rule?: string;
}

export interface HoldersQuery {
  /** Parts the same request hides, or an earlier request does from the next call: their older views are looked at in turn. */
  hiding(partId: string): boolean;
  /** The rules that back off in the session (regret.ts). */
  backedOff: ReadonlySet<string>;
}

/**
 * The older views of `node` (SessionRuntime.olderViewsPast, as settle walks them: past the host's
 * placeholders; transitively: an older view that goes brings its own older views along) that stay
 * in full and so keep `node` in full, nearest first; [] when a prune of `node` applies. An older
 * view already pruned ends the walk there.
 */
export function holdersOf(rt: SessionRuntime, node: PartNode, q: HoldersQuery): Holder[] {
  const out: (Holder & { at: number })[] = [];
  const seen = new Set<number>([node.index]);
  const walk = [node];
  while (walk.length > 0) {
    const newer = walk.pop()!;
    for (const mark of rt.olderViewsPast(newer.index)) {
      const o = mark.node;
      if (seen.has(o.index)) continue;
      seen.add(o.index);
      if (rt.slots[o.index]?.output) continue; // hidden already
      walk.push(o);
      const id = o.part.id;
      if (q.hiding(id)) continue;
      const why = inFullBeside(rt, mark, q.backedOff);
      if (why === "restored") out.push({ partId: id, why, at: o.index });
      else if (why === "backed-off" || why === "no-note") out.push({ partId: id, why, rule: mark.rule.id, at: o.index });
      else if (why === "protected") out.push({ partId: id, why, rule: rt.protectedBy.get(o.index)!.id, at: o.index });
    }
  }
  return out.sort((a, b) => b.at - a.at).map(({ at: _, ...h }) => h);
}

/** Holders by reason (kind and rule), in order of first appearance: one clause each in a reply. */
export function byReason(holders: Holder[]): { why: Holder["why"]; rule?: string; partIds: string[] }[] {
  const groups = new Map<string, { why: Holder["why"]; rule?: string; partIds: string[] }>();
  for (const h of holders) {
    const key = `${h.why} ${h.rule ?? ""}`;
    const g = groups.get(key);
    if (g) g.partIds.push(h.partId);
    else groups.set(key, { why: h.why, rule: h.rule, partIds: [h.partId] });
  }
  return [...groups.values()];
}

/**
 * Why a prune request (`verb`: discard, distill, replace) of the part shown as `id` is refused: the
 * older views that hold it, by id (`idOf`), and what to do about it, e.g.
 * `t9: t3, an older view of the same thing, was restored and stays in full; a newer view cannot be
 * hidden while an older one is shown (discard t3 too, in the same request, to hide both)`.
 */
export function heldText(id: string, holders: Holder[], verb: string, idOf: (partId: string) => string): string {
  // one reason per kind and rule, naming its views
  const reasons = byReason(holders).map(({ why, rule, partIds }) => {
    const ids = partIds.map(idOf);
    const one = ids.length === 1;
    const views = `${ids.join(", ")}, ${one ? "an older view" : "older views"} of the same thing,`;
    if (why === "restored") return `${views} ${one ? "was" : "were"} restored and ${one ? "stays" : "stay"} in full`;
    if (why === "protected") return `${views} ${one ? "is" : "are"} protected by rule "${rule}"`;
    if (why === "no-note") return `${views} ${one ? "stays" : "stay"} in full: rule "${rule}" has no note short enough to replace ${one ? "it" : "them"} beside the newer view`;
    return `${views} ${one ? "stays" : "stay"} in full: rule "${rule}", which would hide ${one ? "it" : "them"} beside the newer view, backed off after regret in this session`;
  });
  // no prune request changes a protected view, nor one too small for any note: nothing to advise
  if (holders.some((h) => h.why === "protected" || h.why === "no-note")) return `${id}: ${reasons.join("; ")}; a newer view is hidden only together with its older views, and no prune request hides ${holders.some((h) => h.why === "protected") ? "a protected part" : "an output smaller than its note"}`;
  const ids = holders.map((h) => idOf(h.partId)).join(", ");
  return `${id}: ${reasons.join("; ")}; a newer view cannot be hidden while an older one is shown (${verb} ${ids} too, in the same request, to hide ${holders.length === 1 ? "both" : "them all"})`;
}
