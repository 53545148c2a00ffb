// Short ids the model can cite ("acp:t12"). An id is given when a part first appears — while it
// is still in the unsent tail — and rendered the same way on every later call, so tagging never
// rewrites the cached prefix. Ids are never reused.
import type { Graph, PartNode } from "../graph/graph.js";
import type { SessionState } from "./state.js";

export const ID_TAG = /\[acp:t[0-9a-z]+\]/g;
export const tagOf = (id: string) => `[acp:${id}]`;

/** Gives ids to eligible parts that have none; returns partId → id for the whole graph. */
export function assignIds(graph: Graph, state: SessionState, eligible: (n: PartNode) => boolean): Map<string, string> {
  const ids = (state.ids ??= {});
  const byPart = new Map<string, string>();
  for (const [id, partId] of Object.entries(ids)) byPart.set(partId, id);
  for (const n of graph.nodes) {
    if (byPart.has(n.part.id) || !eligible(n)) continue;
    let next = state.nextId ?? 1;
    let id = `t${next.toString(36)}`;
    while (ids[id]) id = `t${(++next).toString(36)}`; // collision check against restored state
    ids[id] = n.part.id;
    state.nextId = next + 1;
    byPart.set(n.part.id, id);
  }
  return byPart;
}

/** Appends id tags to tool results and strips tags the model echoed into its own text. */
export function renderIds(graph: Graph, byPart: Map<string, string>): void {
  for (const n of graph.nodes) {
    const p = n.part;
    const id = byPart.get(p.id);
    if (id && p.type === "tool" && p.state) {
      const tag = tagOf(id);
      if (p.state.status === "completed" && typeof p.state.output === "string" && !p.state.output.endsWith(tag)) p.state.output = `${p.state.output}\n${tag}`;
    } else if (p.type === "text" && n.message.info?.role === "assistant" && typeof p.text === "string" && p.text.includes("[acp:")) {
      const stripped = p.text.replace(ID_TAG, "").replace(/[ \t]+\n/g, "\n");
      if (stripped.trim().length > 0) p.text = stripped;
    }
  }
}
