// A supersede stands for a newer view of the same thing. When that view leaves the history while
// the part it superseded stays (a revert: the host removes the trailing turns, and OpenCode's undo
// restores the files too), the older view is the newest again and its note names a view the agent
// no longer has. Its decisions go, as a restore's would but without a pin: the rules decide it
// afresh, on the history as it now is. The revert changed the prompt from its own point on anyway;
// this re-caches from the lifted part to there.
import type { PartNode } from "../graph/graph.js";
import type { SessionRuntime } from "./session.js";
import { touch } from "./state.js";

/**
 * Lifts the decisions of parts superseded by a part that is no longer in the history, and of their
 * newer views whose output is pruned (a newer view is pruned only with its older views: restore
 * does the same). Reads the runtime's caches as `update` left them; returns the lifted part ids
 * (the caches are then stale).
 */
export function liftReverted(rt: SessionRuntime): string[] {
  const { graph, state } = rt;
  const orphans: PartNode[] = [];
  for (const i of rt.decided) {
    const slots = rt.slots[i];
    if (slots && (orphaned(slots.output?.by, rt) || orphaned(slots.input?.by, rt))) orphans.push(graph.nodes[i]);
  }
  if (orphans.length === 0) return [];
  const lifted = new Set<string>();
  for (const n of orphans) {
    lifted.add(n.part.id);
    for (const v of rt.newerViews(n.part.id)) if (state.decisions[v.part.id]?.output) lifted.add(v.part.id);
  }
  for (const id of lifted) {
    delete state.decisions[id];
    touch(state, id);
  }
  return [...lifted];
}

const orphaned = (by: string | undefined, rt: SessionRuntime) => by !== undefined && !rt.graph.byId.has(by);
