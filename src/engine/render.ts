// Applying committed decisions to the request copy. Only this file mutates host messages.
import { textOf, toolResultText, type Graph, type PartNode } from "../graph/graph.js";
import type { Message } from "../graph/types.js";
import type { Patch } from "./actions/index.js";
import type { DecisionSlots } from "./state.js";

const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify(v).length of plain JSON data, without building the text; -1 for anything else. */
function plainJsonLength(v: unknown, depth: number): number {
  if (v === null) return 4;
  switch (typeof v) {
    case "string":
      return NEEDS_ESCAPE.test(v) ? JSON.stringify(v).length : v.length + 2;
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

/** Characters the provider receives for the slot a patch replaces (for token accounting). */
export function slotChars(node: PartNode, patch: Patch): number {
  const p = node.part;
  if (patch.input !== undefined) return textLength(p.state?.input ?? {});
  if (patch.output !== undefined) return toolResultText(p).length;
  if (patch.text !== undefined) return (p.text ?? "").length;
  if (patch.asText !== undefined) return textOf(p.url).length;
  if (patch.drop) return p.type === "tool" ? toolResultText(p).length + textLength(p.state?.input) : textOf(p.text).length;
  return 0;
}

export function patchChars(patch: Patch): number {
  if (patch.input !== undefined) return textLength(patch.input);
  return (patch.output ?? patch.text ?? patch.asText ?? "").length;
}

/** Closures that put back what rendering changed, so a failure midway can leave the copy as it was. */
export type Undo = (() => void)[];

/**
 * A flat record of property writes, four entries per write (object, key, old value, had own
 * property), put back in reverse by the one closure `writeLog` adds to `undo`: rendering ten
 * thousand decisions allocates no closure per write.
 */
export type WriteLog = unknown[];

/** A write log whose writes are undone, in reverse, where its closure stands in `undo`. */
export function writeLog(undo: Undo): WriteLog {
  const log: WriteLog = [];
  undo.push(() => {
    for (let i = log.length - 4; i >= 0; i -= 4) {
      const obj = log[i] as Record<string | number, unknown>;
      const key = log[i + 1] as string | number;
      if (log[i + 3]) obj[key] = log[i + 2];
      else delete obj[key];
    }
    log.length = 0;
  });
  return log;
}

const hasOwn = Object.prototype.hasOwnProperty;
const plainProto = Object.prototype;

/**
 * hasOwnProperty(obj, key) for an object whose `key` reads `value`. hasOwnProperty costs a few
 * hundred ns per call on the host's objects (ten thousand writes per call); on a plain object over
 * an Object.prototype without `key`, a defined value or `key in obj` says the same.
 */
export function owns(obj: object, key: string, value: unknown): boolean {
  if (Object.getPrototypeOf(obj) !== plainProto || key in plainProto) return hasOwn.call(obj, key);
  return value !== undefined || key in obj;
}

/** Sets a tool state's output, recording the old one in `log` (id tags: one per tagged output). */
export function setOutput(st: { output?: unknown }, value: string, log: WriteLog): void {
  const old = st.output;
  log.push(st, "output", old, owns(st, "output", old));
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
function applyPatch(node: PartNode, patch: Patch, log: WriteLog): boolean {
  const part = node.part;
  const st = part.state;
  const output = patch.output;
  if (output !== undefined && st) {
    if (st.status === "error") {
      const old = st.error;
      log.push(st, "error", old, owns(st, "error", old));
      st.error = output;
    } else {
      const old = st.output;
      log.push(st, "output", old, owns(st, "output", old));
      st.output = output;
      if (Array.isArray(st.attachments)) {
        log.push(st, "attachments", st.attachments, owns(st, "attachments", st.attachments));
        st.attachments = [];
      }
      // A tool node's signature ends in "c" whenever the part was compacted (graph.ts sigOf, read
      // from this very part this call): other tool parts skip the read of state.time.
      const time = part.type === "tool" && typeof node.sig === "string" && !node.sig.endsWith("c") ? undefined : st.time;
      if (time?.compacted) {
        log.push(time, "compacted", time.compacted, true); // put back as a plain assignment, as it was read
        delete time.compacted;
      }
    }
  }
  const input = patch.input;
  if (input !== undefined && st) {
    const old = st.input;
    log.push(st, "input", old, owns(st, "input", old));
    st.input = input;
  }
  const text = patch.text;
  if (text !== undefined && text.length > 0) {
    const old = part.text;
    log.push(part, "text", old, owns(part, "text", old));
    part.text = text;
  }
  if (patch.asText !== undefined) {
    const parts = node.message.parts;
    const i = node.partIndex;
    log.push(parts, i, parts[i], true);
    parts[i] = { id: part.id, sessionID: part.sessionID, messageID: part.messageID, type: "text", text: patch.asText, synthetic: true };
  }
  return patch.drop === true;
}

function applySlots(node: PartNode, slots: DecisionSlots, drops: Map<Message, Set<number>>, log: WriteLog): void {
  const dropIt = (slots.input !== undefined && applyPatch(node, slots.input.patch, log)) || (slots.output !== undefined && applyPatch(node, slots.output.patch, log));
  if (!dropIt) return;
  let set = drops.get(node.message);
  if (!set) drops.set(node.message, (set = new Set()));
  set.add(node.partIndex);
}

/** Removes dropped parts with one pass per message (indexes stay valid until then). */
function applyDrops(drops: Map<Message, Set<number>>, undo: Undo): void {
  for (const [message, set] of drops) {
    const parts = message.parts;
    const all = parts.slice();
    undo.push(() => {
      parts.length = 0;
      for (const p of all) parts.push(p);
    });
    parts.length = 0;
    for (let i = 0; i < all.length; i++) if (!set.has(i)) parts.push(all[i]); // no spread: 100k+ parts possible
  }
}

/** Mutates the messages of `graph` in place: every committed decision of `nodes` (by index). */
export function render(graph: Graph, decided: number[], undo: Undo = []): void {
  // In prompt order the walk follows the nodes and the host's copy as they lie in memory; the
  // writes of different parts are independent, so the order changes nothing else.
  for (let k = 1; k < decided.length; k++)
    if (decided[k - 1] > decided[k]) {
      decided.sort((a, b) => a - b);
      break;
    }
  const drops = new Map<Message, Set<number>>();
  const log = writeLog(undo);
  const nodes = graph.nodes;
  for (let k = 0; k < decided.length; k++) {
    const node = nodes[decided[k]];
    if (node?.slots) applySlots(node, node.slots, drops, log);
  }
  applyDrops(drops, undo);
}

/** The same from the state record alone, for a graph the runtime did not build (repeats). */
export function renderById(graph: Graph, decisions: Record<string, DecisionSlots>, undo: Undo = []): void {
  const drops = new Map<Message, Set<number>>();
  const log = writeLog(undo);
  for (const id in decisions) {
    const node = graph.byId.get(id);
    if (node) applySlots(node, decisions[id], drops, log);
  }
  applyDrops(drops, undo);
}
