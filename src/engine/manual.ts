// Manual decisions: what the model asks for through the prune tool (discard, distill, replace,
// restore). Requests are validated against the original history and stored in state; the
// patches are computed in the "manual" phase from the fresh copy the host hands over, so they
// go through the same commit and render path as rule decisions.
import { buildGraph, toolResultText, type PartNode } from "../graph/graph.js";
import type { Message } from "../graph/types.js";
import { describeCall } from "./actions/describe.js";
import type { Patch } from "./actions/index.js";
import type { SessionState } from "./state.js";

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

/** The patch of a manual entry for the original part, or undefined if it no longer applies. */
export function manualPatch(node: PartNode, entry: ManualEntry): Patch | undefined {
  const p = node.part;
  if (p.type !== "tool") return undefined;
  if (entry.action === "discard") return { output: `${describeCall(p)} → discarded by the agent` };
  if (entry.action === "distill") return { output: `${describeCall(p)} → distilled by the agent: ${entry.summary ?? ""}` };
  let text = toolResultText(p);
  for (const r of entry.replaces ?? []) {
    const out = replaceBetween(text, r);
    if (out.text === undefined) return undefined;
    text = out.text;
  }
  return { output: text };
}

export interface ManualContext {
  state: SessionState;
  /** Original (unpruned) history, to validate targets. */
  history: Message[];
  isProtected(partId: string): boolean;
  protectedHelp: string;
  restore(partId: string): boolean;
}

/** Applies a request to state; returns the text the model gets back. */
export function applyManual(req: ManualRequest, ctx: ManualContext): { ok: boolean; text: string } {
  const { state } = ctx;
  const ids = state.ids ?? {};
  const graph = buildGraph(ctx.history);
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
      lines.push(had ? `${id}: restored; the full output is back from the next step` : `${id}: was not pruned`);
      continue;
    }
    if (ctx.isProtected(partId)) {
      ok = false;
      lines.push(`${id}: protected (${node.part.tool}); ${ctx.protectedHelp}`);
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
      let text = toolResultText(node.part);
      let err: string | undefined;
      for (const r of entry.replaces!) {
        const out = replaceBetween(text, r);
        if (out.error) err = out.error;
        else text = out.text!;
      }
      if (err) {
        ok = false;
        lines.push(`${id}: ${err} (markers must match the original output literally; replaced spans must not overlap)`);
        continue;
      }
      manual[partId] = entry;
    }
    if (state.pinned) delete state.pinned[partId];
    // A newer request replaces the model's earlier one for this part.
    if (state.decisions[partId]?.output?.rule === "manual") delete state.decisions[partId].output;
    lines.push(`${id}: ${req.action === "discard" ? "discarded" : req.action === "distill" ? "distilled" : "replaced"}`);
  }
  return { ok, text: lines.join("\n") };
}

function availableIds(state: SessionState, graph: ReturnType<typeof buildGraph>): string[] {
  return Object.entries(state.ids ?? {})
    .filter(([, partId]) => graph.byId.has(partId) && !state.decisions[partId]?.output)
    .map(([id, partId]) => [id, graph.byId.get(partId)!.outputChars] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .map(([id, chars]) => `${id} (${Math.ceil(chars / 4)} tokens)`);
}
