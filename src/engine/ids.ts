// Short ids the model can cite ("acp:tk3f"). An id is given when a part first appears — while it
// is still in the unsent tail — and rendered the same way on every later call, so tagging never
// rewrites the cached prefix. Ids derive from the part id, so they can be recomputed from the
// history alone (lost or corrupt state) and two processes agree on them.
import type { Graph, PartNode } from "../graph/graph.js";
import type { SessionRuntime } from "./session.js";
import type { SessionState } from "./state.js";
import { setOutput, setUndoable, writeLog, type Undo, type WriteLog } from "./render.js";

export const ID_TAG = /\[acp:t[0-9a-z]+\]/g;
export const tagOf = (id: string) => `[acp:${id}]`;

/** FNV-1a of the part id, in base 36: the same part gets the same id in every process. */
function hash36(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36).padStart(7, "0");
}

/** The id of a part: the shortest prefix of its hash (3+ chars) not taken by another part. */
export function idFor(partId: string, ids: Record<string, string>): string {
  const h = hash36(partId);
  for (let n = 3; n <= h.length; n++) {
    const id = `t${h.slice(0, n)}`;
    if (ids[id] === undefined || ids[id] === partId) return id;
  }
  for (let k = 2; ; k++) if (ids[`t${h}${k}`] === undefined) return `t${h}${k}`; // full-hash collision
}

/** Gives ids to eligible parts from `from` on that have none yet. */
export function assignIds(rt: SessionRuntime, from: number, eligible: (n: PartNode) => boolean): void {
  const ids = (rt.state.ids ??= {});
  const nodes = rt.graph.nodes;
  for (let i = from; i < nodes.length; i++) {
    const n = nodes[i];
    if (n.tag !== undefined || rt.idByPart.has(n.part.id) || !eligible(n)) continue;
    const id = idFor(n.part.id, ids);
    ids[id] = n.part.id;
    rt.idByPart.set(n.part.id, id);
    n.tag = tagOf(id);
    rt.tagged.push(i);
  }
}

function tagOutput(n: PartNode, tag: string, log: WriteLog): void {
  const st = n.part.state;
  if (n.part.type === "tool" && st?.status === "completed" && typeof st.output === "string" && !st.output.endsWith(tag)) setOutput(st, `${st.output}\n${tag}`, log);
}

/** Strips tags the model echoed into its own text. */
function stripEchoes(graph: Graph, undo: Undo): void {
  for (const m of graph.messages) {
    if (m?.info?.role !== "assistant" || !Array.isArray(m.parts)) continue;
    for (const p of m.parts) {
      if (p?.type !== "text" || typeof p.text !== "string" || !p.text.includes("[acp:")) continue;
      const stripped = p.text.replace(ID_TAG, "").replace(/[ \t]+\n/g, "\n");
      if (stripped.trim().length > 0) setUndoable(p, "text", stripped, undo);
    }
  }
}

/** Appends the id tags of the runtime's tagged parts and strips echoed ids. */
export function renderIds(rt: SessionRuntime, undo: Undo = []): void {
  const nodes = rt.graph.nodes;
  const log = writeLog(undo);
  for (const i of rt.tagged) {
    const n = nodes[i];
    if (n?.tag) tagOutput(n, n.tag, log);
  }
  stripEchoes(rt.graph, undo);
}

/** The same from the state record alone, for a graph the runtime did not build (repeats). */
export function renderIdsById(graph: Graph, state: SessionState, undo: Undo = []): void {
  const log = writeLog(undo);
  for (const [id, partId] of Object.entries(state.ids ?? {})) {
    const n = graph.byId.get(partId);
    if (n) tagOutput(n, tagOf(id), log);
  }
  stripEchoes(graph, undo);
}
