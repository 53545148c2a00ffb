// What each action of the catalogue (lang/actions.ts) does to a part.
import { ACTION_DECLS, type ActionName } from "../../lang/actions.js";
import { clear, distill, supersede, truncate } from "./output.js";
import { collapseCodeBlocks, drop, mask, protect, stripInput } from "./part.js";
import type { ActionApply, ActionDef } from "./types.js";

/** One implementation per action of the catalogue (an action added there without one fails to compile). */
const APPLY: Record<ActionName, ActionApply> = { protect, supersede, clear, truncate, distill, "strip-input": stripInput, mask, drop, "collapse-code-blocks": collapseCodeBlocks };

export const ACTIONS: ActionDef[] = ACTION_DECLS.map((d) => ({ ...d, apply: APPLY[d.name as ActionName] }));
export const actionByName = new Map(ACTIONS.map((a) => [a.name, a]));
export type { ActionApply, ActionDef, Patch, Slot } from "./types.js";
