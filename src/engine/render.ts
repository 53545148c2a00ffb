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

function applyPatch(node: PartNode, patch: Patch): boolean {
  const part = node.part;
  const st = part.state;
  if (patch.output !== undefined && st) {
    if (st.status === "error") st.error = patch.output;
    else {
      st.output = patch.output;
      if (Array.isArray(st.attachments)) st.attachments = [];
      if (st.time?.compacted) delete st.time.compacted;
    }
  }
  if (patch.input !== undefined && st) st.input = patch.input;
  if (patch.text !== undefined && patch.text.length > 0) part.text = patch.text;
  if (patch.asText !== undefined)
    node.message.parts[node.partIndex] = { id: part.id, sessionID: part.sessionID, messageID: part.messageID, type: "text", text: patch.asText, synthetic: true };
  return patch.drop === true;
}

function applySlots(node: PartNode, slots: DecisionSlots, drops: Map<Message, Set<number>>): void {
  const dropIt = (slots.input !== undefined && applyPatch(node, slots.input.patch)) || (slots.output !== undefined && applyPatch(node, slots.output.patch));
  if (!dropIt) return;
  let set = drops.get(node.message);
  if (!set) drops.set(node.message, (set = new Set()));
  set.add(node.partIndex);
}

/** Removes dropped parts with one pass per message (indexes stay valid until then). */
function applyDrops(drops: Map<Message, Set<number>>): void {
  for (const [message, set] of drops) {
    const kept = message.parts.filter((_, i) => !set.has(i));
    message.parts.length = 0;
    for (const p of kept) message.parts.push(p); // no spread: messages may hold 100k+ parts
  }
}

/** Mutates the messages of `graph` in place: every committed decision of `nodes` (by index). */
export function render(graph: Graph, decided: number[]): void {
  const drops = new Map<Message, Set<number>>();
  for (const i of decided) {
    const node = graph.nodes[i];
    if (node?.slots) applySlots(node, node.slots, drops);
  }
  applyDrops(drops);
}

/** The same from the state record alone, for a graph the runtime did not build (repeats). */
export function renderById(graph: Graph, decisions: Record<string, DecisionSlots>): void {
  const drops = new Map<Message, Set<number>>();
  for (const id in decisions) {
    const node = graph.byId.get(id);
    if (node) applySlots(node, decisions[id], drops);
  }
  applyDrops(drops);
}
