import type { PartNode } from "../../graph/graph.js";

/** What an action does to the request copy of one part. Stored with the decision so the
 * rendered bytes stay identical on every later call (prompt cache). */
export interface Patch {
  output?: string; // replaces a tool result (state.output, or state.error for failed calls)
  input?: Record<string, unknown>; // replaces a tool call's input
  text?: string; // replaces a text/reasoning part's text
  asText?: string; // turns the part (e.g. a file attachment) into a text part
  drop?: true; // removes the part (never for a tool part still needing its call/result pair: it goes as a whole)
}

/** Which part of a part an action changes; one decision per slot, the earliest phase wins. */
export type Slot = "protect" | "output" | "input";

export interface ActionContext {
  /** Superseding part, for supersede breadcrumbs. */
  by?: PartNode;
}

export interface ActionDef {
  name: string;
  description: string;
  slot: Slot;
  /** JSON Schema of the options beside `action` in a rule's `then`. */
  options: { type: "object"; properties: Record<string, unknown>; additionalProperties: false; required?: string[] };
  /** Returns the patch, or undefined when the action does not apply to this part. */
  apply(node: PartNode, options: Record<string, any>, ctx: ActionContext): Patch | undefined;
}
