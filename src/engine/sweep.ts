// /acp sweep: the user discards the tool outputs since their last message (or the newest n), stored
// as prune requests of the user's (manual-patch.ts), applied like the model's from the next request.
import type { Graph } from "../graph/graph.js";
import type { Holder } from "./holders.js";
import { heldQuery, manualPatch, storeRequest, type HoldersOf } from "./manual-patch.js";
import { evaluatePatch } from "./candidate.js";
import type { SessionState } from "./state.js";

export interface SweepResult {
  /** Outputs newly discarded, and the tokens that frees from every later request. */
  parts: number;
  tokens: number;
  /** Left alone: pruned or asked for already, protected, too small to be worth a breadcrumb. */
  already: number;
  protected: number;
  small: number;
  /**
   * Left alone as well, when there are any: newer views of a thing whose older view stays in full
   * (restored, say), and those older views (holders.ts), each once. The sweep hides a newer view
   * only with its older views.
   */
  held?: { parts: number; holders: Holder[] };
}

/**
 * /acp sweep: the user discards the completed tool outputs after their last message (or the newest
 * n). Each is counted once: outputs already pruned, or already asked for by an earlier sweep or by
 * the agent, are left alone, and the tokens are what the breadcrumb saves, as the commit reports.
 * A newer view of a thing whose older view stays in full is left alone too (`holders`: as
 * ManualContext.holders), unless the sweep discards that older view as well.
 */
export function applySweep(state: SessionState, graph: Graph, n: number | undefined, protection: (partId: string) => unknown, holders: HoldersOf): SweepResult {
  const tools = graph.nodes.filter((x) => x.part.type === "tool" && x.part.state?.status === "completed" && graph.byId.get(x.part.id) === x);
  const targets = n !== undefined ? tools.slice(Math.max(0, tools.length - n)) : tools.filter((x) => x.msgIndex > graph.lastUserMsgIndex);
  const r: SweepResult = { parts: 0, tokens: 0, already: 0, protected: 0, small: 0 };
  const accepted: { id: string; tokens: number }[] = [];
  for (const t of targets) {
    const id = t.part.id;
    if (state.decisions[id]?.output || state.manual?.[id]) r.already++;
    else if (protection(id)) r.protected++;
    else {
      // the check commit makes (candidate.ts): a breadcrumb no smaller than the output is never applied
      const patch = manualPatch(t, { action: "discard", by: "user" });
      const c = patch && evaluatePatch(t, patch);
      if (!c) r.small++;
      else accepted.push({ id, tokens: c.tokens });
    }
  }
  const q = heldQuery(state, accepted.map((a) => a.id));
  const seen = new Set<string>();
  for (const { id, tokens } of accepted) {
    const held = holders(id, q);
    if (held.length > 0) {
      r.held ??= { parts: 0, holders: [] };
      r.held.parts++;
      for (const h of held)
        if (!seen.has(h.partId)) {
          seen.add(h.partId);
          r.held.holders.push(h);
        }
      continue;
    }
    storeRequest(state, id, { action: "discard", by: "user" });
    r.parts++;
    r.tokens += tokens;
  }
  return r;
}
