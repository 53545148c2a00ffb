// What a prune request does to a part, whoever asked for it (the model through the prune tool,
// manual.ts; the user with /acp sweep, sweep.ts): the patch a stored manual entry makes of the
// original part, computed in the "manual" phase (walk-manual.ts) so it goes through the same commit and
// render path as rule decisions; and how a request is stored in the session state.
import { metadataHasKey } from "../graph/metadata.js";
import { hostOf, resultText, type PartNode } from "../graph/graph.js";
import { describeCall } from "./actions/describe.js";
import type { Patch } from "./actions/index.js";
import { touch, type SessionState } from "./state.js";
import type { Holder, HoldersQuery } from "./holders.js";
import type { ManualBy, ManualEntry } from "./manual-entry.js";

/** Who made a manual entry. */
export const manualBy = (entry: ManualEntry | undefined): ManualBy => (entry?.by === "user" ? "user" : "agent");

export const REPLACE_MIN_SPAN = 30;
export const REPLACE_MIN_MARKER = 16;

/** Replaces start..end (inclusive) when each marker occurs exactly once in order; else an error text. */
export function replaceBetween(text: string, r: { start: string; end: string; replacement?: string }): { text?: string; error?: string } {
  if (r.start.length < REPLACE_MIN_MARKER && r.end.length < REPLACE_MIN_MARKER) return { error: `one marker must be at least ${REPLACE_MIN_MARKER} characters` };
  const s = text.indexOf(r.start);
  if (s < 0) return { error: "start marker not found" };
  if (text.indexOf(r.start, s + 1) >= 0) return { error: "start marker occurs more than once" };
  const e = text.indexOf(r.end, s + r.start.length);
  if (e < 0) return { error: "end marker not found after the start marker" };
  if (text.indexOf(r.end, e + 1) >= 0) return { error: "end marker occurs more than once" };
  const endAt = e + r.end.length;
  if (endAt - s < REPLACE_MIN_SPAN) return { error: `the matched span must be at least ${REPLACE_MIN_SPAN} characters` };
  const note = r.replacement ?? `[… ${endAt - s} chars removed by the agent]`;
  return { text: text.slice(0, s) + note + text.slice(endAt) };
}

/** What the provider receives as a part's content: a tool result, or a text or reasoning part's text. */
export function contentOf(node: PartNode): string {
  const part = node.part;
  return part.type === "tool" ? resultText(node) : typeof part.text === "string" ? part.text : "";
}

/**
 * A reasoning block the provider verifies: its metadata carries a signature or an encrypted copy
 * (Anthropic and Bedrock `signature` / `redactedData`, Google `thoughtSignature`, OpenAI
 * `reasoningEncryptedContent`). Its text must go out unchanged or not at all.
 */
export function signedReasoning(node: PartNode): boolean {
  const key = hostOf(node)?.signatureKey;
  return node.part.type === "reasoning" && key !== undefined && metadataHasKey(node.part.metadata, key);
}

/** What a discarded unsigned reasoning block becomes: providers that require the field still get one. */
export const REASONING_DISCARDED = "[reasoning pruned by the agent]";

/** The first line of a text, shortened: what a discarded message's breadcrumb shows. */
function gist(text: string): string {
  const line = text.trim().split("\n", 1)[0];
  return line.length > 60 ? `${line.slice(0, 60)}…` : line;
}

/** The patch of a manual entry for the original part, or undefined if it no longer applies. */
export function manualPatch(node: PartNode, entry: ManualEntry): Patch | undefined {
  const p = node.part;
  if (p.type !== "tool" && p.type !== "text" && p.type !== "reasoning") return undefined;
  if (p.type === "reasoning" && signedReasoning(node)) return entry.action === "discard" ? { drop: true } : undefined;
  const patch = (content: string): Patch => (p.type === "tool" ? { output: content } : { text: content });
  if (entry.action === "discard") {
    if (p.type === "tool") return patch(`${describeCall(p)} → discarded by the ${manualBy(entry)}`);
    return patch(p.type === "reasoning" ? REASONING_DISCARDED : `[message discarded by the ${manualBy(entry)}: ${JSON.stringify(gist(p.text ?? ""))}]`);
  }
  if (entry.action === "distill") {
    if (p.type === "tool") return patch(`${describeCall(p)} → distilled by the agent: ${entry.summary ?? ""}`);
    return patch(`[${p.type === "reasoning" ? "reasoning" : "message"} distilled by the agent] ${entry.summary ?? ""}`);
  }
  let text = contentOf(node);
  for (const r of entry.replaces ?? []) {
    const out = replaceBetween(text, r);
    if (out.text === undefined) return undefined;
    text = out.text;
  }
  return patch(text);
}

/** The older views of a part that would keep it in full if it were pruned (holders.ts holdersOf), as a request asks for them. */
export type HoldersOf = (partId: string, q: Omit<HoldersQuery, "backedOff">) => Holder[];

/**
 * What the holders check of a request asks (holders.ts): the parts it hides (`hiding`, and those
 * asked for before). A restored part it hides is skipped as hidden before its pin is looked at, so
 * storing the request (which un-pins it) changes no other part's answer.
 */
export function heldQuery(state: SessionState, hiding: string[]): Omit<HoldersQuery, "backedOff"> {
  const ids = new Set(hiding);
  return { hiding: (p) => ids.has(p) || state.manual?.[p] !== undefined };
}

/** Stores a prune request of the part (none: the one it has stands) and un-pins it. */
export function storeRequest(state: SessionState, partId: string, entry: ManualEntry | undefined): void {
  if (entry) (state.manual ??= {})[partId] = entry;
  touch(state, partId);
  if (state.pinned) delete state.pinned[partId];
}
