// Short ids the model can cite: "[acp:tk3f]" ends a tool output, "[acp:mk3f]" an assistant
// message's text, "[acp:rk3f]" names a reasoning block. An id is given when a part first appears
// — while it is still in the unsent tail — and rendered the same way on every later call, so
// tagging never rewrites the cached prefix. Ids derive from the part id, so they can be
// recomputed from the history alone (lost or corrupt state) and two processes agree on them.
//
// A reasoning block's own text is never tagged: providers verify it by signature, and the current
// turn's reasoning must go out byte-identical. Its tag rides on the next part of the same step
// that carries tags (the step's text or a completed tool output), before that part's own tag.
import type { PartNode } from "../graph/graph.js";
import type { IdTags } from "./id-tags.js";
import type { RenderState } from "./render-state.js";
import type { SessionRuntime } from "./session.js";
import { noteId, type DecisionSlots } from "./state.js";
import { isDropped } from "./render.js";
export { isDropped } from "./render.js";

/** t: tool output, m: assistant message text, r: reasoning. */
export type IdKind = "t" | "m" | "r";

/**
 * The short id a user or the model wrote, however it was quoted: `t1bz`, `[acp:t1bz]`, `acp:t1bz`
 * (surrounding spaces and backticks too). Anything else comes back trimmed.
 */
export function bareId(raw: string, tags: IdTags): string {
  const s = raw.trim().replace(/^`+|`+$/g, "");
  return tags.quoted.exec(s)?.[1] ?? s;
}

/**
 * The part an id names: a short id the plugin gave (`t1bz`, quoted or not), or a part id
 * (`prt_…`) that `known` recognises. `shown` is the id as it reads back to the user.
 */
export function partOf(ids: Record<string, string> | undefined, raw: string, known: (partId: string) => boolean, tags: IdTags): { shown: string; partId?: string } {
  const shown = bareId(raw, tags);
  const byShort = Object.prototype.hasOwnProperty.call(ids ?? {}, shown) ? ids![shown] : undefined;
  if (byShort !== undefined) return { shown, partId: byShort };
  return known(shown) ? { shown, partId: shown } : { shown };
}

/** Minimum size worth an id: tagging tiny parts would cost more than pruning them saves. */
export const ID_MIN_CHARS = 400;

/** FNV-1a of the part id, in base 36: the same part gets the same id in every process. */
function hash36(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36).padStart(7, "0");
}

/** The id the model and the user know a part by (its [acp:…] tag), or the part id where it has none. */
export function shownIdOf(ids: Record<string, string> | undefined, partId: string): string {
  for (const [id, p] of Object.entries(ids ?? {})) if (p === partId) return id;
  return partId;
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

/** A part that can show tags: text the provider receives, or a completed tool output (a string: tags are appended to it). */
function carries(n: PartNode): boolean {
  const p = n.part;
  if (p.type === "tool") return p.state?.status === "completed" && typeof p.state.output === "string";
  return p.type === "text" && n.message?.info?.role === "assistant" && !p.synthetic && !p.ignored && typeof p.text === "string" && p.text.trim() !== "";
}


/** The part that shows a reasoning block's tag: the next part of its message that carries tags and is sent. */
export function carrierOf(nodes: PartNode[], n: PartNode, dropped: (n: PartNode) => boolean): PartNode | undefined {
  for (let j = n.index + 1; j < nodes.length && nodes[j].msgIndex === n.msgIndex; j++) if (carries(nodes[j]) && !dropped(nodes[j])) return nodes[j];
  return undefined;
}

/** Gives ids to eligible parts from `from` on that have none yet. */
export function assignIds(rt: SessionRuntime, from: number, eligible: (n: PartNode) => boolean): void {
  const ids = rt.state.ids ?? {}; // attached on the first id: a state without ids saves and loads the same
  const nodes = rt.graph.nodes;
  const dropped = (x: PartNode) => isDropped(rt.slots[x.index]);
  const views = rt.view.views;
  for (let i = from; i < nodes.length; i++) {
    const n = nodes[i];
    if (views[i]?.tag !== undefined || rt.idByPart.has(n.part.id)) continue;
    // a part sharing an earlier part's id gets no id: ids, like decisions, name the first part
    // (attach in session.ts), so a rebuilt or restarted runtime would not show it either
    if (rt.graph.byId.get(n.part.id) !== n) continue;
    const kind = idKind(n);
    if (kind === undefined || !eligible(n)) continue;
    if (kind === "r" && !carrierOf(nodes, n, dropped)) continue; // nowhere to show it
    const id = idFor(n.part.id, ids, kind);
    ids[id] = n.part.id;
    rt.state.ids = ids;
    if (kind === "t" && typeof n.part.callID === "string") (rt.state.idCalls ??= {})[id] = n.part.callID;
    noteId(rt.state, id);
    rt.idByPart.set(n.part.id, id);
    rt.view.of(n).tag = rt.idTags.make(id);
    rt.tagged.push(i);
  }
}

/**
 * Recomputes the suffixes (own tag, then the tags of the reasoning blocks a part carries, in prompt
 * order) of the nodes of the messages holding `from` (node indexes); a reasoning block's carrier
 * is in its own message. A node whose suffix changed is planned again (RenderState.changed).
 */
export function updateSuffixes(nodes: PartNode[], slots: readonly (DecisionSlots | undefined)[], rs: RenderState, from: Iterable<number>): void {
  const done = new Set<number>();
  const views = rs.views;
  const dropped = (x: PartNode) => isDropped(slots[x.index]);
  for (const i of from) {
    const n = nodes[i];
    if (!n || done.has(n.msgIndex)) continue;
    done.add(n.msgIndex);
    let a = i;
    while (a > 0 && nodes[a - 1].msgIndex === n.msgIndex) a--;
    let b = i + 1;
    while (b < nodes.length && nodes[b].msgIndex === n.msgIndex) b++;
    let tagged = false;
    for (let j = a; j < b && !tagged; j++) tagged = views[j] !== undefined && (views[j]!.tag !== undefined || views[j]!.suffix !== undefined);
    if (!tagged) continue; // no tag to place, none to take away
    const next = new Map<PartNode, string>();
    for (let j = a; j < b; j++) {
      const t = nodes[j];
      const tag = views[j]?.tag;
      if (tag === undefined) continue;
      const target = t.part.type === "reasoning" ? carrierOf(nodes, t, dropped) : t;
      if (!target) continue;
      const had = next.get(target);
      next.set(target, had === undefined ? tag : `${had} ${tag}`);
    }
    for (let j = a; j < b; j++) {
      const suffix = next.get(nodes[j]);
      if (suffix === views[j]?.suffix) continue;
      rs.changed(nodes[j]);
      views[j]!.suffix = suffix;
    }
  }
}

/** Every message's suffixes (after the caches were rebuilt). */
export function updateAllSuffixes(nodes: PartNode[], slots: readonly (DecisionSlots | undefined)[], rs: RenderState): void {
  const firsts: number[] = [];
  for (let i = 0; i < nodes.length; i++) if (i === 0 || nodes[i - 1].msgIndex !== nodes[i].msgIndex) firsts.push(i);
  updateSuffixes(nodes, slots, rs, firsts);
}
