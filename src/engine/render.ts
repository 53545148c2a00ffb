// Applying committed decisions to the request copy. Only this file mutates host messages.
import { textOf, toolResultText, type Graph, type PartNode } from "../graph/graph.js";
import type { Message } from "../graph/types.js";
import type { Patch } from "./actions/index.js";
import type { DecisionSlots } from "./state.js";

/** Characters the provider receives for the slot a patch replaces (for token accounting). */
export function slotChars(node: PartNode, patch: Patch): number {
  const p = node.part;
  if (patch.input !== undefined) return textOf(p.state?.input ?? {}).length;
  if (patch.output !== undefined) return toolResultText(p).length;
  if (patch.text !== undefined) return (p.text ?? "").length;
  if (patch.asText !== undefined) return textOf(p.url).length;
  if (patch.drop) return p.type === "tool" ? toolResultText(p).length + textOf(p.state?.input).length : textOf(p.text).length;
  return 0;
}

export function patchChars(patch: Patch): number {
  if (patch.input !== undefined) return textOf(patch.input).length;
  return (patch.output ?? patch.text ?? patch.asText ?? "").length;
}

/** Closures that put back what rendering changed, so a failure midway can leave the copy as it was. */
export type Undo = (() => void)[];

/** Sets obj[key] = value, remembering the old value (or its absence) in `undo`. */
export function setUndoable<T extends object>(obj: T, key: keyof T & string, value: unknown, undo: Undo): void {
  const had = Object.prototype.hasOwnProperty.call(obj, key);
  const old = (obj as any)[key];
  undo.push(() => (had ? ((obj as any)[key] = old) : delete (obj as any)[key]));
  (obj as any)[key] = value;
}

function applyPatch(node: PartNode, patch: Patch, undo: Undo): boolean {
  const part = node.part;
  const st = part.state;
  if (patch.output !== undefined && st) {
    if (st.status === "error") setUndoable(st, "error", patch.output, undo);
    else {
      setUndoable(st, "output", patch.output, undo);
      if (Array.isArray(st.attachments)) setUndoable(st, "attachments", [], undo);
      if (st.time?.compacted) {
        const time = st.time;
        const was = time.compacted;
        undo.push(() => (time.compacted = was));
        delete time.compacted;
      }
    }
  }
  if (patch.input !== undefined && st) setUndoable(st, "input", patch.input, undo);
  if (patch.text !== undefined && patch.text.length > 0) setUndoable(part, "text", patch.text, undo);
  if (patch.asText !== undefined) {
    const parts = node.message.parts;
    const i = node.partIndex;
    const was = parts[i];
    undo.push(() => (parts[i] = was));
    parts[i] = { id: part.id, sessionID: part.sessionID, messageID: part.messageID, type: "text", text: patch.asText, synthetic: true };
  }
  return patch.drop === true;
}

function applySlots(node: PartNode, slots: DecisionSlots, drops: Map<Message, Set<number>>, undo: Undo): void {
  const dropIt = (slots.input !== undefined && applyPatch(node, slots.input.patch, undo)) || (slots.output !== undefined && applyPatch(node, slots.output.patch, undo));
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
  const drops = new Map<Message, Set<number>>();
  for (const i of decided) {
    const node = graph.nodes[i];
    if (node?.slots) applySlots(node, node.slots, drops, undo);
  }
  applyDrops(drops, undo);
}

/** The same from the state record alone, for a graph the runtime did not build (repeats). */
export function renderById(graph: Graph, decisions: Record<string, DecisionSlots>, undo: Undo = []): void {
  const drops = new Map<Message, Set<number>>();
  for (const id in decisions) {
    const node = graph.byId.get(id);
    if (node) applySlots(node, decisions[id], drops, undo);
  }
  applyDrops(drops, undo);
}
