// Applying committed decisions to the request copy. Only this file mutates host messages.
import { resultText, textOf, type Graph, type PartNode } from "../graph/graph.js";
import type { IdTags } from "./id-tags.js";
import type { Message, Part } from "../graph/types.js";
import type { Patch } from "./actions/index.js";
import { decisionsOf, type DecisionSlots } from "./state.js";

const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * JSON.stringify(s).length: a string without characters to escape is measured without writing it
 * out; one with them (code: quotes, newlines) is written natively, which is faster than counting
 * its escapes in JavaScript.
 */
function jsonStringLength(s: string): number {
  return s.search(NEEDS_ESCAPE) < 0 ? s.length + 2 : JSON.stringify(s).length;
}

/** JSON.stringify(v).length of plain JSON data, without building the text; -1 for anything else. */
function plainJsonLength(v: unknown, depth: number): number {
  if (v === null) return 4;
  switch (typeof v) {
    case "string":
      return jsonStringLength(v);
    case "number":
      return Number.isFinite(v) ? String(v).length : 4;
    case "boolean":
      return v ? 4 : 5;
    case "object":
      break;
    default:
      return -1;
  }
  if (depth > 64) return -1;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return -1;
    let n = v.length > 0 ? v.length + 1 : 2;
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return -1;
      const m = plainJsonLength(v[i], depth + 1);
      if (m < 0) return -1;
      n += m;
    }
    return n;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return -1;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  let n = keys.length > 0 ? keys.length + 1 : 2;
  for (let i = 0; i < keys.length; i++) {
    const m = plainJsonLength(o[keys[i]], depth + 1);
    if (m < 0) return -1;
    n += plainJsonLength(keys[i], depth) + 1 + m;
  }
  return n;
}

/** textOf(v).length; a tool input's JSON is measured without being written out. */
export function textLength(v: unknown): number {
  if (typeof v === "string") return v.length;
  if (v !== null && typeof v === "object" && typeof (Object.prototype as any).toJSON !== "function" && typeof (Array.prototype as any).toJSON !== "function") {
    const n = plainJsonLength(v, 0);
    if (n >= 0) return n;
  }
  return textOf(v).length;
}

/** Characters of a tool part's input as sent (its JSON; `{}` when absent), measured once per node. */
export function inputCharsOf(node: PartNode): number {
  let n = node.inChars;
  if (n === undefined) node.inChars = n = textLength(node.part.state?.input ?? {});
  return n;
}

/** Characters the provider receives for the slot a patch replaces (for token accounting). */
export function slotChars(node: PartNode, patch: Patch): number {
  const p = node.part;
  if (patch.input !== undefined) return inputCharsOf(node);
  if (patch.output !== undefined) return resultText(node).length;
  if (patch.text !== undefined) return (p.text ?? "").length;
  if (patch.asText !== undefined) return textOf(p.url).length;
  if (patch.drop) return p.type === "tool" ? resultText(node).length + (p.state?.input === undefined ? 0 : inputCharsOf(node)) : textOf(p.text).length;
  return 0;
}

export function patchChars(patch: Patch): number {
  if (patch.input !== undefined) return textLength(patch.input);
  return (patch.output ?? patch.text ?? patch.asText ?? "").length;
}

/** Closures that put back what rendering changed, so a failure midway can leave the copy as it was. */
export type Undo = (() => void)[];

const hasOwn = Object.prototype.hasOwnProperty;
const plainProto = Object.prototype;
/** The properties render and the id tags write (see WriteLog.owns). */
const WRITTEN = ["output", "error", "attachments", "input", "text"];
const CHUNK = 4096; // entries per chunk of a write log: 32 KB, below V8's large-object size

/**
 * A record of property writes, four entries per write (object, key, old value, had own
 * property), put back in reverse by the one closure `writeLog` adds to `undo`: rendering ten
 * thousand decisions allocates no closure per write, and fixed-size chunks never grow or copy.
 */
export class WriteLog {
  private chunks: unknown[][] = [];
  private cur: unknown[] = new Array(CHUNK);
  private n = 0;
  /** No written property is inherited from Object.prototype (checked once per log). */
  private readonly clean = WRITTEN.every((k) => !(k in plainProto));

  add(obj: object, key: string | number, old: unknown, had: boolean): void {
    if (this.n === CHUNK) {
      this.chunks.push(this.cur);
      this.cur = new Array(CHUNK);
      this.n = 0;
    }
    const c = this.cur;
    const n = this.n;
    c[n] = obj;
    c[n + 1] = key;
    c[n + 2] = old;
    c[n + 3] = had;
    this.n = n + 4;
  }

  /**
   * hasOwnProperty(obj, key) for one of the WRITTEN keys, whose value reads `value`.
   * hasOwnProperty costs a few hundred ns per call on the host's objects; on a plain object over
   * a clean Object.prototype, a defined value or `key in obj` says the same.
   */
  owns(obj: object, key: string, value: unknown): boolean {
    if (!this.clean || Object.getPrototypeOf(obj) !== plainProto) return hasOwn.call(obj, key);
    return value !== undefined || key in obj;
  }

  /** Puts every recorded write back, newest first. */
  undo(): void {
    const chunks = [...this.chunks, this.cur];
    for (let c = chunks.length - 1; c >= 0; c--) {
      const log = chunks[c];
      for (let i = (c === chunks.length - 1 ? this.n : CHUNK) - 4; i >= 0; i -= 4) {
        const obj = log[i] as Record<string | number, unknown>;
        const key = log[i + 1] as string | number;
        if (log[i + 3]) obj[key] = log[i + 2];
        else delete obj[key];
      }
    }
    this.chunks = [];
    this.cur = new Array(CHUNK);
    this.n = 0;
  }
}

/** A write log whose writes are undone, in reverse, where its closure stands in `undo`. */
export function writeLog(undo: Undo): WriteLog {
  const log = new WriteLog();
  undo.push(() => log.undo());
  return log;
}

/** hasOwnProperty(obj, key) for an object whose `key` reads `value` (see WriteLog.owns). */
export function owns(obj: object, key: string, value: unknown): boolean {
  if (Object.getPrototypeOf(obj) !== plainProto || key in plainProto) return hasOwn.call(obj, key);
  return value !== undefined || key in obj;
}

/** Sets a tool state's output, recording the old one in `log` (id tags: one per tagged output). */
export function setOutput(st: { output?: unknown }, value: string, log: WriteLog): void {
  const old = st.output;
  log.add(st, "output", old, log.owns(st, "output", old));
  st.output = value;
}

/** Sets obj[key] = value, remembering the old value (or its absence) in `undo`. */
export function setUndoable<T extends object>(obj: T, key: keyof T & string, value: unknown, undo: Undo): void {
  const old = (obj as any)[key];
  const had = owns(obj, key, old);
  undo.push(() => (had ? ((obj as any)[key] = old) : delete (obj as any)[key]));
  (obj as any)[key] = value;
}

// The writes below name their property: each access site sees few object shapes and stays fast,
// where one helper taking the key would make every access a megamorphic keyed lookup.
// `part` is the part at `parts[pi]` in the host's copy: never the node's own part object, which
// keeps the content as stored (rules and actions read it on later calls).
function applyPatch(node: PartNode, part: Part, parts: Part[], pi: number, patch: Patch, log: WriteLog): boolean {
  const st = part.state;
  const output = patch.output;
  if (output !== undefined && st) {
    if (st.status === "error") {
      const old = st.error;
      log.add(st, "error", old, log.owns(st, "error", old));
      st.error = output;
    } else {
      const old = st.output;
      log.add(st, "output", old, log.owns(st, "output", old));
      st.output = output;
      if (Array.isArray(st.attachments)) {
        log.add(st, "attachments", st.attachments, log.owns(st, "attachments", st.attachments));
        st.attachments = [];
      }
      // A tool node's signature ends in "c" whenever the part was compacted (graph.ts sigOf, the
      // same for every copy the node is reused for): other tool parts skip the read of state.time.
      const time = part.type === "tool" && typeof node.sig === "string" && !node.sig.endsWith("c") ? undefined : st.time;
      if (time?.compacted) {
        log.add(time, "compacted", time.compacted, true); // put back as a plain assignment, as it was read
        delete time.compacted;
      }
    }
  }
  const input = patch.input;
  if (input !== undefined && st) {
    const old = st.input;
    log.add(st, "input", old, log.owns(st, "input", old));
    st.input = input;
  }
  const text = patch.text;
  if (text !== undefined && text.length > 0) {
    const old = part.text;
    log.add(part, "text", old, log.owns(part, "text", old));
    part.text = text;
  }
  if (patch.asText !== undefined) {
    log.add(parts, pi, parts[pi], true);
    parts[pi] = { id: part.id, sessionID: part.sessionID, messageID: part.messageID, type: "text", text: patch.asText, synthetic: true };
  }
  return patch.drop === true;
}

/** Parts to drop: per parts array of the copy, their indexes (applied last, so indexes stay valid). */
export type Drops = Map<Part[], number[]>;

function dropLater(drops: Drops, parts: Part[], pi: number): void {
  const list = drops.get(parts);
  if (list) list.push(pi);
  else drops.set(parts, [pi]);
}

/** Removes dropped parts with one pass per message; one closure undoes them all. */
export function applyDrops(drops: Drops, undo: Undo): void {
  if (drops.size === 0) return;
  const saved: { parts: unknown[]; all: unknown[] }[] = [];
  undo.push(() => {
    for (let k = saved.length - 1; k >= 0; k--) {
      const { parts, all } = saved[k];
      parts.length = 0;
      for (const p of all) parts.push(p);
    }
  });
  for (const [parts, list] of drops) {
    const all = parts.slice();
    saved.push({ parts, all });
    let ascending = true;
    for (let k = 1; k < list.length && ascending; k++) ascending = list[k - 1] <= list[k];
    parts.length = 0;
    if (ascending) {
      // rendered in prompt order: walk the indexes beside the parts
      let d = 0;
      for (let i = 0; i < all.length; i++) {
        while (d < list.length && list[d] < i) d++;
        if (d < list.length && list[d] === i) continue;
        parts.push(all[i]); // no spread: 100k+ parts possible
      }
    } else {
      const set = new Set(list);
      for (let i = 0; i < all.length; i++) if (!set.has(i)) parts.push(all[i]);
    }
  }
}

// A plan: what rendering writes for a completed tool part (not compacted) in a fresh copy with
// tags on, the case of nearly every part of a long history. Kept on the node until its decisions
// or its tag suffix change (whoever changes them resets rKind): most calls then write cached
// values without reading the decisions, their patches or the copy's own output.
const PLAN_OTHER = 0; // anything else: the general path (renderSlots)
const PLAN_WRITE = 1; // write rInput as the input (if set), rValue as the output (if set)
const PLAN_DROP = 2; // one output decision whose patch only drops the part
const PLAN_NONE = 3; // nothing to write
const PLAN_DECIDED = 4; // PLAN_WRITE for an output decision: the attachments are emptied too

/** Only replaces the output (a string), or only the input: the common patches. */
const outputOnly = (p: Patch) => typeof p.output === "string" && p.input === undefined && p.text === undefined && p.asText === undefined && p.drop !== true;
const inputOnly = (p: Patch) => p.input !== undefined && p.output === undefined && p.text === undefined && p.asText === undefined && p.drop !== true;
const dropOnly = (p: Patch) => p.drop === true && p.output === undefined && p.input === undefined && p.text === undefined && p.asText === undefined;

function planOf(node: PartNode): number {
  node.rValue = undefined;
  node.rInput = undefined;
  if (node.part.type !== "tool" || node.sig !== "completed") return PLAN_OTHER;
  const out = node.slots?.output?.patch;
  const inp = node.slots?.input?.patch;
  if (out !== undefined && inp === undefined && dropOnly(out)) return PLAN_DROP;
  if ((out !== undefined && !outputOnly(out)) || (inp !== undefined && !inputOnly(inp))) return PLAN_OTHER;
  const base = out !== undefined ? out.output : node.part.state?.output;
  if (typeof base !== "string") return PLAN_OTHER;
  node.rInput = inp?.input;
  // the tag follows the output, written once: tagOutput's `${output}\n${suffix}`
  node.rValue = node.suffix !== undefined ? `${base}\n${node.suffix}` : out !== undefined ? base : undefined;
  if (node.rValue === undefined && node.rInput === undefined) return PLAN_NONE;
  return out !== undefined ? PLAN_DECIDED : PLAN_WRITE;
}

/** Where rendering writes: the undo log, the drops to apply at the end, and whether id tags are shown. */
export interface RenderTarget {
  log: WriteLog;
  drops: Drops;
  /** Ids are on (config `tool`): echoed ids are stripped from assistant text. */
  ids: boolean;
  /** The host's id tags. */
  idTags: IdTags;
  /** Id tags are shown (ids on, and not the copy the compaction agent summarises). */
  tags: boolean;
  /**
   * The copy came from the host, not back from us (not an array this pruner rendered before): its
   * parts hold the content as stored, so no output can already end with our tag and no text with
   * its suffix. Checking would read the end of every tagged output, one cache miss each.
   */
  fresh?: boolean;
}

/** Appends `suffix` to a completed tool output (a second pass over our own output keeps it once). */
export function tagOutput(part: Part, suffix: string, log: WriteLog, fresh = false): void {
  const st = part.state;
  if (part.type === "tool" && st?.status === "completed" && typeof st.output === "string" && (fresh || !st.output.endsWith(suffix))) setOutput(st, `${st.output}\n${suffix}`, log);
}

/**
 * Assistant text: tags the model echoed are stripped, then the part's own suffix (if any) is
 * appended. Our own output coming back (a repeated transform) keeps its suffix as it is.
 */
export function renderText(part: Part, suffix: string | undefined, to: Pick<RenderTarget, "log" | "idTags">, quotes?: boolean): void {
  if (part.type !== "text" || typeof part.text !== "string") return;
  const { log, idTags } = to;
  // quotes: whether the text holds a tag's start, when the caller knows it (a fresh copy of a text seen before)
  const has = quotes ?? part.text.includes(idTags.marker);
  if (suffix === undefined && !has) return;
  const own = suffix === undefined ? "" : `\n${suffix}`;
  let base = own && quotes === undefined && part.text.endsWith(own) ? part.text.slice(0, -own.length) : part.text;
  if (has && base.includes(idTags.marker)) {
    const stripped = base.replace(idTags.all, "").replace(/[ \t]+\n/g, "\n");
    if (stripped.trim().length > 0) base = stripped; // never an empty text part
  }
  if (base + own !== part.text) {
    const old = part.text;
    log.add(part, "text", old, log.owns(part, "text", old));
    part.text = base + own;
  }
}

/**
 * Renders a node into `part`, the part at `parts[pi]` of the host's copy: its committed decisions,
 * then its id tags and the stripping of echoed ids (assistant text). Drops are collected.
 */
export function renderNode(node: PartNode, part: Part, parts: Part[], pi: number, to: RenderTarget): void {
  if (to.tags && to.fresh === true) {
    let kind = node.rKind;
    if (kind === undefined) node.rKind = kind = planOf(node);
    if (kind === PLAN_DROP) return dropLater(to.drops, parts, pi);
    if (kind === PLAN_WRITE || kind === PLAN_DECIDED) {
      const st = part.state!;
      const log = to.log;
      const input = node.rInput;
      if (input !== undefined) {
        const old = st.input;
        log.add(st, "input", old, log.owns(st, "input", old));
        st.input = input as typeof st.input;
      }
      const output = node.rValue;
      if (output !== undefined) {
        const old = st.output;
        log.add(st, "output", old, log.owns(st, "output", old));
        st.output = output;
        // an output decision also empties the attachments (applyOutput)
        if (kind === PLAN_DECIDED && Array.isArray(st.attachments)) {
          log.add(st, "attachments", st.attachments, log.owns(st, "attachments", st.attachments));
          st.attachments = [];
        }
      }
      return;
    }
    if (kind === PLAN_NONE) return;
  }
  renderSlow(node, part, parts, pi, to);
}

/** The general case: each decision's patch, then tags and echoes, as written. */
function renderSlow(node: PartNode, part: Part, parts: Part[], pi: number, to: RenderTarget): void {
  const slots = node.slots;
  const log = to.log;
  if (slots !== undefined) {
    if ((slots.input !== undefined && applyPatch(node, part, parts, pi, slots.input.patch, log)) || (slots.output !== undefined && applyPatch(node, part, parts, pi, slots.output.patch, log))) return dropLater(to.drops, parts, pi);
    part = parts[pi]; // a mask replaces the part
  }
  if (!to.ids) return;
  const suffix = to.tags ? node.suffix : undefined;
  if (part.type === "tool") {
    if (suffix !== undefined) tagOutput(part, suffix, log, to.fresh === true && slots === undefined);
    return;
  }
  if ((suffix !== undefined || node.echo === true || slots !== undefined) && part.type === "text" && node.assistantText === true) {
    // a fresh copy of the text the node was built from: whether it quotes ids is known (attach)
    const known = to.fresh === true && slots === undefined && part.text?.length === node.textLen;
    renderText(part, suffix, to, known ? node.echo === true : undefined);
  }
}

/** A copy of a part that writes can go to (the part, its tool state, and its times if a compaction mark may be removed). */
function writable(part: Part): Part {
  const copy: Part = { ...part };
  const st = part.state;
  if (st && typeof st === "object") {
    const s = { ...st };
    if (s.time && typeof s.time === "object" && s.time.compacted) s.time = { ...s.time };
    copy.state = s;
  }
  return copy;
}

/**
 * Renders a node into the copy at its place, on a fresh copy of its part when the part there is
 * the node's own (the part it was built from) or was already written this call.
 */
export function renderAt(node: PartNode, messages: Message[], stamp: number, to: RenderTarget): void {
  const parts = messages[node.msgIndex]?.parts;
  const current = parts?.[node.partIndex];
  if (!current || current.id !== node.part.id) return;
  const wanted = node.slots !== undefined || (to.tags && node.suffix !== undefined) || (to.ids && node.echo === true);
  if (node.rc === stamp || current === node.part) {
    if (!wanted) {
      if (node.rc === stamp) {
        to.log.add(parts, node.partIndex, current, true);
        parts[node.partIndex] = node.part; // the same content as the host's copy of it
      }
      return;
    }
    const fresh = writable(node.part);
    to.log.add(parts, node.partIndex, current, true);
    parts[node.partIndex] = fresh;
    renderNode(node, fresh, parts, node.partIndex, to);
  } else if (wanted) renderNode(node, current, parts, node.partIndex, to);
  node.rc = stamp;
}

/** Decisions that take the part out of the prompt. */
export const isDropped = (slots: DecisionSlots | undefined) => slots?.output?.patch.drop === true || slots?.input?.patch.drop === true;

/** Applies committed decisions from the state record alone, for a graph the runtime did not build (repeats). */
export function renderById(graph: Graph, decisions: Record<string, DecisionSlots>, to: RenderTarget): void {
  for (const id in decisions) {
    const node = graph.byId.get(id);
    // the part found by id must be the one decided: after a drop, a later part sharing its id comes first
    const slots = node && decisionsOf(decisions, node.part);
    if (!node || !slots) continue;
    // our own output again: its dropped parts are gone, and the part found by their id is another
    if (!to.fresh && isDropped(slots)) continue;
    const parts = node.message.parts;
    const part = parts[node.partIndex];
    if (part !== node.part) continue;
    if ((slots.input !== undefined && applyPatch(node, part, parts, node.partIndex, slots.input.patch, to.log)) || (slots.output !== undefined && applyPatch(node, part, parts, node.partIndex, slots.output.patch, to.log))) dropLater(to.drops, parts, node.partIndex);
  }
}
