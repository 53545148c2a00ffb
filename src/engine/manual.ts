// Manual decisions: what the model asks for through the prune tool (discard, distill, replace,
// restore) on tool outputs, its own earlier text and reasoning. Requests are validated against
// the original history and stored in state; the patches are computed in the "manual" phase from
// the fresh copy the host hands over, so they go through the same commit and render path as rule
// decisions.
import { buildGraph, toolResultText, type Graph, type PartNode } from "../graph/graph.js";
import type { Message, Part } from "../graph/types.js";
import { describeCall } from "./actions/describe.js";
import type { Patch } from "./actions/index.js";
import { touch, type SessionState } from "./state.js";

export type ManualAction = "discard" | "distill" | "replace" | "restore";

export interface ManualTarget {
  id: string;
  summary?: string;
  start?: string;
  end?: string;
  replacement?: string;
}

export interface ManualRequest {
  action: ManualAction;
  targets: (ManualTarget | string)[];
}

export interface ManualEntry {
  action: Exclude<ManualAction, "restore">;
  summary?: string;
  replaces?: { start: string; end: string; replacement?: string }[];
}

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
export function contentOf(part: Part): string {
  return part.type === "tool" ? toolResultText(part) : typeof part.text === "string" ? part.text : "";
}

/**
 * A reasoning block the provider verifies: its metadata carries a signature or an encrypted copy
 * (Anthropic and Bedrock `signature` / `redactedData`, Google `thoughtSignature`, OpenAI
 * `reasoningEncryptedContent`). Its text must go out unchanged or not at all.
 */
export function signedReasoning(part: Part): boolean {
  return part.type === "reasoning" && hasSignature(part.metadata, 0);
}

function hasSignature(v: unknown, depth: number): boolean {
  if (!v || typeof v !== "object" || depth > 3) return false;
  for (const [k, x] of Object.entries(v)) {
    if (/signature|encrypted|redacted/i.test(k) && x !== undefined && x !== null && x !== "") return true;
    if (hasSignature(x, depth + 1)) return true;
  }
  return false;
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
  if (p.type === "reasoning" && signedReasoning(p)) return entry.action === "discard" ? { drop: true } : undefined;
  const patch = (content: string): Patch => (p.type === "tool" ? { output: content } : { text: content });
  if (entry.action === "discard") {
    if (p.type === "tool") return patch(`${describeCall(p)} → discarded by the agent`);
    return patch(p.type === "reasoning" ? REASONING_DISCARDED : `[message discarded by the agent: ${JSON.stringify(gist(p.text ?? ""))}]`);
  }
  if (entry.action === "distill") {
    if (p.type === "tool") return patch(`${describeCall(p)} → distilled by the agent: ${entry.summary ?? ""}`);
    return patch(`[${p.type === "reasoning" ? "reasoning" : "message"} distilled by the agent] ${entry.summary ?? ""}`);
  }
  let text = contentOf(p);
  for (const r of entry.replaces ?? []) {
    const out = replaceBetween(text, r);
    if (out.text === undefined) return undefined;
    text = out.text;
  }
  return patch(text);
}

export interface ManualContext {
  state: SessionState;
  /** Original (unpruned) history, to validate targets. */
  history: Message[];
  /** Its graph, when the caller has built it already. */
  graph?: Graph;
  /** Why a part may not be pruned (the protecting rule), or undefined. */
  protection(partId: string): string | undefined;
  protectedHelp: string;
  restore(partId: string): boolean;
}

/** Why a target cannot take this action, or undefined. */
function refusal(node: PartNode, action: ManualAction, graph: Graph): string | undefined {
  const p = node.part;
  if (p.type !== "tool" && p.type !== "text" && p.type !== "reasoning") return `a ${p.type} part cannot be pruned`;
  if (p.type !== "reasoning") return undefined;
  if (node.msgIndex > graph.lastUserMsgIndex)
    return "reasoning of the current turn cannot be pruned: the provider checks it until the turn ends. It can be pruned after the user's next message";
  if (action !== "discard" && action !== "restore" && signedReasoning(p)) return "this reasoning is signed by the provider, so it can be discarded but not distilled or cut";
  return undefined;
}

/** Applies a request to state; returns the text the model gets back. */
export function applyManual(req: ManualRequest, ctx: ManualContext): { ok: boolean; text: string } {
  const { state } = ctx;
  const ids = state.ids ?? {};
  const graph = ctx.graph ?? buildGraph(ctx.history);
  const lines: string[] = [];
  let ok = true;
  const targets = (req.targets ?? []).map((t) => (typeof t === "string" ? { id: t } : t));
  if (!["discard", "distill", "replace", "restore"].includes(req.action)) return { ok: false, text: `unknown action "${req.action}" (discard | distill | replace | restore)` };
  if (targets.length === 0) return { ok: true, text: "nothing to do: no targets given" };
  for (const t of targets) {
    const id = String(t.id ?? "").replace(/^\[?acp:/, "").replace(/\]$/, "");
    const partId = ids[id];
    const node = partId ? graph.byId.get(partId) : undefined;
    if (!node) {
      ok = false;
      lines.push(`${id}: unknown id. Available: ${availableIds(state, graph).join(", ") || "none"}`);
      continue;
    }
    if (req.action === "restore") {
      const had = ctx.restore(partId);
      lines.push(had ? `${id}: restored; the full ${node.part.type === "tool" ? "output" : "text"} is back from the next step` : `${id}: was not pruned`);
      continue;
    }
    const refused = refusal(node, req.action, graph);
    if (refused) {
      ok = false;
      lines.push(`${id}: ${refused}`);
      continue;
    }
    const protection = ctx.protection(partId);
    if (protection) {
      ok = false;
      lines.push(`${id}: protected (${node.part.tool ?? node.part.type}) ${protection}; ${ctx.protectedHelp}`);
      continue;
    }
    const manual = (state.manual ??= {});
    if (req.action === "distill") {
      if (!t.summary?.trim()) {
        ok = false;
        lines.push(`${id}: distill needs a non-empty summary`);
        continue;
      }
      manual[partId] = { action: "distill", summary: t.summary.trim() };
    } else if (req.action === "discard") manual[partId] = { action: "discard" };
    else {
      if (!t.start || !t.end) {
        ok = false;
        lines.push(`${id}: replace needs start and end markers`);
        continue;
      }
      const prev = manual[partId]?.action === "replace" ? manual[partId].replaces ?? [] : [];
      const entry: ManualEntry = { action: "replace", replaces: [...prev, { start: t.start, end: t.end, replacement: t.replacement }] };
      let text = contentOf(node.part);
      let err: string | undefined;
      for (const r of entry.replaces!) {
        const out = replaceBetween(text, r);
        if (out.error) err = out.error;
        else text = out.text!;
      }
      if (err) {
        ok = false;
        lines.push(`${id}: ${err} (markers must match the original ${node.part.type === "tool" ? "output" : "text"} literally; replaced spans must not overlap)`);
        continue;
      }
      manual[partId] = entry;
    }
    touch(state, partId);
    if (state.pinned) delete state.pinned[partId];
    // A newer request replaces the model's earlier decision at the next transform (manual phase);
    // until then the earlier one stays, so no process ever sees the part unpruned in between.
    lines.push(`${id}: ${req.action === "discard" ? "discarded" : req.action === "distill" ? "distilled" : "replaced"}`);
  }
  return { ok, text: lines.join("\n") };
}

function availableIds(state: SessionState, graph: Graph): string[] {
  return Object.entries(state.ids ?? {})
    .filter(([, partId]) => graph.byId.has(partId) && !state.decisions[partId]?.output)
    .map(([id, partId]) => [id, contentOf(graph.byId.get(partId)!.part).length] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .map(([id, chars]) => `${id} (${Math.ceil(chars / 4)} tokens)`);
}
