// Whether a patch is worth making, and what it saves: the check every change passes (rule wants,
// prune requests, forced older views), shared by the phases (verdicts.ts, walk-manual.ts) and the shared in-full test
// (in-full.ts).
import { resultText, TERMINAL, tokensOf, type PartNode } from "../graph/graph.js";
import type { Patch } from "./actions/index.js";
import { patchChars, slotChars } from "./render.js";

/** A patch with what it saves; depends only on the part and the rule, so it is cached. */
export interface Candidate {
  patch: Patch;
  tokens: number;
}

/** Minimum characters a patch must save to be worth a change. */
const MIN_SAVING = 16;

/** Checks that a patch is worth applying and counts the tokens it saves. */
export function evaluatePatch(n: PartNode, patch: Patch, options?: Record<string, unknown>): Candidate | null {
  if (patch.text !== undefined && patch.text.trim() === "") return null; // never an empty text part
  // A pending or running call's output is not sent (the host sends an interruption note).
  if (patch.output !== undefined && n.part.type === "tool" && !TERMINAL.has(n.part.state?.status as string)) return null;
  const before = slotChars(n, patch);
  // never make a part larger (comparison baselines may, to reproduce other pruners exactly)
  if (!patch.drop && options?.allowGrowth !== true && !shrinks(n, patch, before)) return null;
  return { patch, tokens: Math.max(0, tokensOf(before) - tokensOf(patchChars(patch))) };
}

/** Smaller as sent, not only in characters: JSON escapes and multi-byte breadcrumbs count too. */
function shrinks(n: PartNode, patch: Patch, before: number): boolean {
  const after = patchChars(patch);
  if (after + MIN_SAVING > before) return false;
  if (before - after > 256) return true; // clearly smaller; skip the byte count on large outputs
  const bytes = (s: string) => Buffer.byteLength(JSON.stringify(s));
  const original = patch.input !== undefined ? JSON.stringify(n.part.state?.input ?? {}) : patch.text !== undefined ? (n.part.text ?? "") : resultText(n);
  const replaced = patch.input !== undefined ? JSON.stringify(patch.input) : (patch.output ?? patch.text ?? patch.asText ?? "");
  return bytes(replaced) + MIN_SAVING <= bytes(original);
}
