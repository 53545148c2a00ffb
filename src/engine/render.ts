// Applying committed decisions to the request copy. Only this file mutates host messages.
import { textOf, toolResultText, type Graph, type PartNode } from "../graph/graph.js";
import type { Part } from "../graph/types.js";
import type { Patch } from "./actions/index.js";
import type { Decision, DecisionSlots } from "./state.js";

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

function applyPatch(part: Part, patch: Patch, replace: (p: Part) => void): boolean {
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
    replace({ id: part.id, sessionID: part.sessionID, messageID: part.messageID, type: "text", text: patch.asText, synthetic: true });
  return patch.drop === true;
}

/** Mutates `graph.messages` in place; returns the number of parts changed. */
export function render(graph: Graph, decisions: Record<string, DecisionSlots>): number {
  const drops: PartNode[] = [];
  let changed = 0;
  for (const id in decisions) {
    const node = graph.byId.get(id);
    if (!node) continue; // the part left the history (compaction, revert)
    const slots = decisions[id];
    for (const d of [slots.input, slots.output] as (Decision | undefined)[]) {
      if (!d) continue;
      changed++;
      const replace = (p: Part) => (node.message.parts[node.partIndex] = p);
      if (applyPatch(node.part, d.patch, replace)) drops.push(node);
    }
  }
  // Remove back to front so earlier indexes stay valid.
  drops.sort((a, b) => b.msgIndex - a.msgIndex || b.partIndex - a.partIndex);
  for (const n of drops) n.message.parts.splice(n.partIndex, 1);
  return changed;
}
