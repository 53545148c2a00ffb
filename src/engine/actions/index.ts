import { clear, distill, supersede, truncate } from "./output.js";
import { collapseCodeBlocks, drop, mask, protect, stripInput } from "./part.js";
import type { ActionDef } from "./types.js";

export const ACTIONS: ActionDef[] = [protect, supersede, clear, truncate, distill, stripInput, mask, drop, collapseCodeBlocks];
export const actionByName = new Map(ACTIONS.map((a) => [a.name, a]));
export type { ActionDef, Patch, Slot } from "./types.js";
