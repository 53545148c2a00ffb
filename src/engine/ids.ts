// Short ids the model can cite: "[acp:tk3f]" ends a tool output, "[acp:mk3f]" an assistant
// message's text, "[acp:rk3f]" names a reasoning block. An id is given when a part first appears
// — while it is still in the unsent tail — and rendered the same way on every later call, so
// tagging never rewrites the cached prefix. Ids derive from the part id, so they can be
// recomputed from the history alone (lost or corrupt state) and two processes agree on them.
//
// A reasoning block's own text is never tagged: providers verify it by signature, and the current
// turn's reasoning must go out byte-identical. Its tag rides on the next part of the same step
// that carries tags (the step's text or a completed tool output), before that part's own tag.
import type { Graph, PartNode } from "../graph/graph.js";
import type { Part } from "../graph/types.js";
import type { SessionRuntime } from "./session.js";
import type { DecisionSlots, SessionState } from "./state.js";
import { setOutput, setUndoable, writeLog, type Undo, type WriteLog } from "./render.js";

/** t: tool output, m: assistant message text, r: reasoning. */
export type IdKind = "t" | "m" | "r";

export const ID_TAG = /\[acp:[tmr][0-9a-z]+\]/g;
export const tagOf = (id: string) => `[acp:${id}]`;

/** Minimum size worth an id: tagging tiny parts would cost more than pruning them saves. */
export const ID_MIN_CHARS = 400;

/** FNV-1a of the part id, in base 36: the same part gets the same id in every process. */
function hash36(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36).padStart(7, "0");
}

/** The id of a part: the kind letter and the shortest prefix of its hash (3+ chars) not taken by another part. */
export function idFor(partId: string, ids: Record<string, string>, kind: IdKind = "t"): string {
  const h = hash36(partId);
  for (let n = 3; n <= h.length; n++) {
    const id = `${kind}${h.slice(0, n)}`;
    if (ids[id] === undefined || ids[id] === partId) return id;
  }
  for (let k = 2; ; k++) if (ids[`${kind}${h}${k}`] === undefined) return `${kind}${h}${k}`; // full-hash collision
}

/** Which kind of id a part would get by its shape and size (protection is the caller's business). */
export function idKind(n: PartNode): IdKind | undefined {
  const p = n.part;
  if (p.type === "tool") return p.state?.status === "completed" && n.outputChars >= ID_MIN_CHARS ? "t" : undefined;
  const info = n.message?.info;
  // a compaction summary is all the model has of the history before it: not offered for pruning
  if (info?.role !== "assistant" || info.summary || typeof p.text !== "string" || p.text.length < ID_MIN_CHARS) return undefined;
  if (p.type === "text") return p.synthetic || p.ignored ? undefined : "m";
  return p.type === "reasoning" ? "r" : undefined;
}

/** A part that can show tags: text the provider receives, or a completed tool output. */
function carries(n: PartNode): boolean {
  const p = n.part;
  if (p.type === "tool") return p.state?.status === "completed";
  return p.type === "text" && n.message?.info?.role === "assistant" && !p.synthetic && !p.ignored && typeof p.text === "string" && p.text.trim() !== "";
}

export const isDropped = (slots: DecisionSlots | undefined) => slots?.output?.patch.drop === true || slots?.input?.patch.drop === true;

/** The part that shows a reasoning block's tag: the next part of its message that carries tags and is sent. */
export function carrierOf(nodes: PartNode[], n: PartNode, dropped: (n: PartNode) => boolean): PartNode | undefined {
  for (let j = n.index + 1; j < nodes.length && nodes[j].message === n.message; j++) if (carries(nodes[j]) && !dropped(nodes[j])) return nodes[j];
  return undefined;
}

/** Gives ids to eligible parts from `from` on that have none yet. */
export function assignIds(rt: SessionRuntime, from: number, eligible: (n: PartNode) => boolean): void {
  const ids = (rt.state.ids ??= {});
  const nodes = rt.graph.nodes;
  const dropped = (x: PartNode) => isDropped(x.slots);
  for (let i = from; i < nodes.length; i++) {
    const n = nodes[i];
    if (n.tag !== undefined || rt.idByPart.has(n.part.id)) continue;
    const kind = idKind(n);
    if (kind === undefined || !eligible(n)) continue;
    if (kind === "r" && !carrierOf(nodes, n, dropped)) continue; // nowhere to show it
    const id = idFor(n.part.id, ids, kind);
    ids[id] = n.part.id;
    rt.idByPart.set(n.part.id, id);
    n.tag = tagOf(id);
    rt.tagged.push(i);
  }
}

/** What goes after each part: its own tag and those of the reasoning blocks it carries, in prompt order. */
function suffixes(nodes: PartNode[], tagged: [PartNode, string][], dropped: (n: PartNode) => boolean): Map<Part, string> {
  tagged.sort((a, b) => a[0].index - b[0].index);
  const out = new Map<Part, string>();
  for (const [n, tag] of tagged) {
    const target = n.part.type === "reasoning" ? carrierOf(nodes, n, dropped) : n;
    if (!target) continue;
    const had = out.get(target.part);
    out.set(target.part, had === undefined ? tag : `${had} ${tag}`);
  }
  return out;
}

function tagOutput(part: Part, suffix: string, log: WriteLog): void {
  const st = part.state;
  if (part.type === "tool" && st?.status === "completed" && typeof st.output === "string" && !st.output.endsWith(suffix)) setOutput(st, `${st.output}\n${suffix}`, log);
}

/**
 * Assistant text: tags the model echoed are stripped, then the part's own suffix (if any) is
 * appended. Our own output coming back (a repeated transform) keeps its suffix as it is.
 */
function renderTexts(graph: Graph, suffixOf: Map<Part, string>, undo: Undo): void {
  for (const m of graph.messages) {
    if (m?.info?.role !== "assistant" || !Array.isArray(m.parts)) continue;
    for (const p of m.parts) {
      if (p?.type !== "text" || typeof p.text !== "string") continue;
      const suffix = suffixOf.get(p);
      if (suffix === undefined && !p.text.includes("[acp:")) continue;
      const own = suffix === undefined ? "" : `\n${suffix}`;
      let base = own && p.text.endsWith(own) ? p.text.slice(0, -own.length) : p.text;
      if (base.includes("[acp:")) {
        const stripped = base.replace(ID_TAG, "").replace(/[ \t]+\n/g, "\n");
        if (stripped.trim().length > 0) base = stripped; // never an empty text part
      }
      if (base + own !== p.text) setUndoable(p, "text", base + own, undo);
    }
  }
}

function renderAll(graph: Graph, suffixOf: Map<Part, string>, undo: Undo): void {
  const log = writeLog(undo); // one undo entry for all tags (thousands per call)
  for (const [part, suffix] of suffixOf) tagOutput(part, suffix, log);
  renderTexts(graph, suffixOf, undo);
}

/**
 * Appends the id tags of the runtime's tagged parts and strips echoed ids. Without `tags` (the
 * copy the compaction agent summarises) only the echoes are stripped: ids there would only end
 * up in the summary, naming parts the model no longer has.
 */
export function renderIds(rt: SessionRuntime, undo: Undo = [], tags = true): void {
  const nodes = rt.graph.nodes;
  const tagged: [PartNode, string][] = [];
  if (tags) for (const i of rt.tagged) if (nodes[i]?.tag) tagged.push([nodes[i], nodes[i].tag!]);
  renderAll(rt.graph, suffixes(nodes, tagged, (n) => isDropped(n.slots)), undo);
}

/** The same from the state record alone, for a graph the runtime did not build (repeats). */
export function renderIdsById(graph: Graph, state: SessionState, undo: Undo = [], tags = true): void {
  const tagged: [PartNode, string][] = [];
  if (tags)
    for (const [id, partId] of Object.entries(state.ids ?? {})) {
      const n = graph.byId.get(partId);
      if (n) tagged.push([n, tagOf(id)]);
    }
  renderAll(graph, suffixes(graph.nodes, tagged, (n) => isDropped(state.decisions[n.part.id])), undo);
}
