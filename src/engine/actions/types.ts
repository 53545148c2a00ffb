import type { PartNode } from "../../graph/graph.js";
import type { ActionDecl, Slot } from "../../lang/actions.js";

export type { Slot };

/** What an action does to the request copy of one part. Stored with the decision so the
 * rendered bytes stay identical on every later call (prompt cache). */
export interface Patch {
  output?: string; // replaces a tool result (state.output, or state.error for failed calls)
  input?: Record<string, unknown>; // replaces a tool call's input
  text?: string; // replaces a text/reasoning part's text
  asText?: string; // turns the part (e.g. a file attachment) into a text part
  drop?: true; // removes the part (never for a tool part still needing its call/result pair: it goes as a whole)
}

export interface ActionContext {
  /** Superseding part, for supersede breadcrumbs. */
  by?: PartNode;
}

/** Returns the patch, or undefined when the action does not apply to this part. */
export type ActionApply = (node: PartNode, options: Record<string, any>, ctx: ActionContext) => Patch | undefined;

/** An action of the catalogue (lang/actions.ts) with what it does. */
export interface ActionDef extends ActionDecl {
  apply: ActionApply;
}
