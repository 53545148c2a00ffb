// Manual decisions: what the model asks for through the prune tool (discard, distill, replace,
// restore) on tool outputs, its own earlier text and reasoning. Requests are validated against the
// original history and stored in state; the patches are computed in the "manual" phase from the
// fresh copy the host hands over (manual-patch.ts), so they go through the same commit and render
// path as rule decisions. What the user discards with /acp sweep is stored the same way (sweep.ts).
import { buildGraph, tokensOf, type Graph, type PartNode } from "../graph/graph.js";
import type { HostProfile } from "../graph/host.js";
import type { Message } from "../graph/types.js";
import { idTags, type IdTags } from "./id-tags.js";
import { partOf, shownIdOf } from "./ids.js";
import type { SessionState } from "./state.js";
import { heldText } from "./holders.js";
import type { ManualAction, ManualEntry } from "./manual-entry.js";
import { contentOf, heldQuery, manualBy, manualPatch, replaceBetween, signedReasoning, storeRequest, type HoldersOf } from "./manual-patch.js";
import { evaluatePatch } from "./candidate.js";

export type { ManualAction, ManualBy, ManualEntry } from "./manual-entry.js";

export interface ManualTarget {
  id: string;
  summary?: string;
  start?: string;
  end?: string;
  replacement?: string;
}

export interface ManualRequest {
  action: ManualAction;
  /** Ids, objects with an id, or the specification's tuples: `[id]`, `[id, summary]`, `[start, end, replacement?]`. */
  targets: (ManualTarget | string | string[])[];
}

export interface ManualContext {
  state: SessionState;
  /** The host (its id tags, part ids, placeholders). */
  host: HostProfile;
  /** Original (unpruned) history, to validate targets. */
  history: Message[];
  /** Its graph, when the caller has built it already. */
  graph?: Graph;
  /** Why a part may not be pruned (the protecting rule), or undefined. */
  protection(partId: string): string | undefined;
  protectedHelp: string;
  restore(partId: string): RestoreOutcome;
  /** The older views of a part that would keep it in full if it were pruned (holders.ts holdersOf). */
  holders: HoldersOf;
}

/**
 * What a restore did. Whatever it finds, the part is pinned afterwards: it is sent in full from the
 * next request, and no rule prunes it until a later call views the same thing again (pins.ts; a
 * later prune request of the model or a sweep of the user may).
 */
export interface RestoreOutcome {
  /** The part was pruned (a decision, or a prune request not applied yet) and is sent in full again. */
  restored: boolean;
  /**
   * Not pruned, but rules wanted to prune it: their change waited for the commit policy (a change to
   * the prompt already sent waits for a free cache break or a batch). With the part pinned it never applies.
   */
  waiting: { rule: string; tokens?: number }[];
  /**
   * Newer views of the same thing (SessionRuntime.newerViews) whose output was pruned, restored and
   * pinned with it, nearest first: an older view is never in full while a newer view of it is hidden.
   */
  newer: string[];
  /** It was pinned before (restored earlier): nothing changed for the part itself. */
  wasPinned: boolean;
}

/** The answer to one restore target. */
function restoreLine(id: string, node: PartNode, r: RestoreOutcome, state: SessionState): string {
  const what = node.part.type === "tool" ? "output" : "text";
  const newer = r.newer.length
    ? `; its newer views of the same thing ${r.newer.map((p) => shownIdOf(state.ids, p)).join(", ")} were pruned and are restored with it (an older view is never shown in full while a newer one is hidden)`
    : "";
  if (r.restored) return `${id}: restored; the full ${what} is back from the next step${newer}`;
  if (r.waiting.length > 0) return `${id}: was not pruned yet, but ${rulesText(r.waiting)} waited to prune it; it now stays in full until you view the same thing again${newer}`;
  return `${id}: was not pruned; it ${r.wasPinned ? "was restored before and" : "now"} stays in full until you view the same thing again${newer}`;
}

/** `rule "a"` or `rules "a" and "b"`. */
export function rulesText(waiting: RestoreOutcome["waiting"]): string {
  const names = [...new Set(waiting.map((w) => `"${w.rule}"`))];
  return names.length === 1 ? `rule ${names[0]}` : `rules ${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** Why a target cannot take this action, or undefined. */
function refusal(node: PartNode, action: ManualAction, graph: Graph): string | undefined {
  const p = node.part;
  if (p.type !== "tool" && p.type !== "text" && p.type !== "reasoning") return `a ${p.type} part cannot be pruned`;
  if (p.type !== "reasoning") return undefined;
  if (node.msgIndex > graph.lastUserMsgIndex)
    return "reasoning of the current turn cannot be pruned: the provider checks it until the turn ends. It can be pruned after the user's next message";
  if (action !== "discard" && action !== "restore" && signedReasoning(node)) return "this reasoning is signed by the provider, so it can be discarded but not distilled or cut";
  return undefined;
}

const ACTIONS: readonly ManualAction[] = ["discard", "distill", "replace", "restore"];
/** An id the model meant (one it mistyped or that is gone), not a replace marker. */
function looksLikeId(s: string, tags: IdTags, host: HostProfile): boolean {
  const short = tags.quoted.exec(s)?.[1];
  return (short !== undefined && /^[tmr][0-9a-z]{3,9}$/.test(short)) || (s.startsWith(host.partIdPrefix) && /^\w+$/.test(s.slice(host.partIdPrefix.length)) && s.length > host.partIdPrefix.length);
}

/**
 * One target as the model wrote it, made an object: an id, an object with an id, or a tuple
 * (`[id]`, `[id, summary]` for distill, `[id, start, end, replacement?]` or the specification's
 * `[start, end, replacement?]` for replace, whose part is the one the markers find).
 */
function targetOf(t: unknown, action: ManualAction, isId: (s: string) => boolean, looksLike: (s: string) => boolean, findSpan: (start: string, end: string) => string | { error: string }): ManualTarget | { error: string } {
  if (typeof t === "string") return { id: t };
  if (Array.isArray(t)) {
    const [a, b, c, d] = t.map((x) => (typeof x === "string" ? x : x === undefined || x === null ? undefined : String(x)));
    if (a === undefined || a.trim() === "") return { error: `${JSON.stringify(t)}: the first element must be an id` };
    if (action === "distill") return { id: a, summary: b };
    if (action !== "replace") return { id: a };
    if (isId(a) || looksLike(a.trim()) || b === undefined) return { id: a, start: b, end: c, replacement: d };
    const id = findSpan(a, b);
    return typeof id === "string" ? { id, start: a, end: b, replacement: c } : id;
  }
  if (t && typeof t === "object" && typeof (t as ManualTarget).id === "string") return t as ManualTarget;
  return { error: `${JSON.stringify(t) ?? String(t)}: not an id (targets are ids such as t12, or [id, …] tuples)` };
}

/** Applies a request to state; returns the text the model gets back. */
export function applyManual(req: ManualRequest, ctx: ManualContext): { ok: boolean; text: string } {
  const { state } = ctx;
  const graph = ctx.graph ?? buildGraph(ctx.history, undefined, { host: ctx.host });
  // unknown-id lines list the ids still available once the whole request is applied
  const lines: (string | (() => string))[] = [];
  let ok = true;
  if (!ACTIONS.includes(req.action)) return { ok: false, text: `unknown action "${req.action}" (discard | distill | replace | restore)` };
  const raw: unknown[] = Array.isArray(req.targets) ? req.targets : req.targets === undefined || req.targets === null ? [] : [req.targets];
  if (raw.length === 0) return { ok: true, text: "nothing to do: no targets given" };
  const tags = idTags(ctx.host.idTag);
  const resolve = (s: string) => partOf(state.ids, s, (partId) => graph.byId.has(partId), tags);
  const isId = (s: string) => resolve(s).partId !== undefined;
  const findSpan = (start: string, end: string) => spanOwner(state, graph, start, end);
  const seen = new Set<string>();
  /** Targets the request may prune, with their reply lines: applied once every target is known. */
  const accepted: { line: number; id: string; partId: string; node: PartNode; entry: ManualEntry | undefined }[] = [];
  for (const item of raw) {
    const t = targetOf(item, req.action, isId, (s) => looksLikeId(s, tags, ctx.host), findSpan);
    if ("error" in t) {
      ok = false;
      lines.push(t.error);
      continue;
    }
    const { shown: id, partId } = resolve(String(t.id ?? ""));
    const node = partId ? graph.byId.get(partId) : undefined;
    if (seen.has(partId ?? `?${id}`)) continue; // a target named twice is answered once
    seen.add(partId ?? `?${id}`);
    if (!node || !partId) {
      ok = false;
      lines.push(() => `${id || '""'}: unknown id. Available: ${availableIds(state, graph, ctx.protection).join(", ") || "none"}`);
      continue;
    }
    if (req.action === "restore") {
      lines.push(restoreLine(id, node, ctx.restore(partId), state));
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
    const entry = manualEntry(t, req.action, node, state.manual?.[partId]);
    if (typeof entry === "string") {
      ok = false;
      lines.push(`${id}: ${entry}`);
      continue;
    }
    const unchanged = entry && notSmaller(node, entry);
    if (unchanged) {
      ok = false;
      lines.push(`${id}: ${unchanged}`);
      continue;
    }
    // a discard of a part discarded already (by an earlier request or a sweep) changes nothing: say so
    const again = entry === undefined ? `already discarded${manualBy(state.manual?.[partId]) === "user" ? " by the user" : ""}` : "discarded";
    lines.push(`${id}: ${req.action === "discard" ? again : req.action === "distill" ? "distilled" : "replaced"}`);
    accepted.push({ line: lines.length - 1, id, partId, node, entry });
  }
  // A newer view goes only with its older views: one that stays in full (restored, say) holds it,
  // unless the same request hides that one too (so the order of the targets does not matter).
  const q = heldQuery(state, accepted.map((a) => a.partId));
  for (const a of accepted) {
    const holders = ctx.holders(a.partId, q);
    if (holders.length > 0) {
      ok = false;
      lines[a.line] = heldText(a.id, holders, req.action, (p) => shownIdOf(state.ids, p));
      continue;
    }
    // discarded already (a sweep, say): the breadcrumb and who asked stay as they are
    storeRequest(state, a.partId, a.entry);
    // A newer request replaces the model's earlier decision at the next transform (manual phase);
    // until then the earlier one stays, so no process ever sees the part unpruned in between.
  }
  return { ok, text: lines.map((l) => (typeof l === "string" ? l : l())).join("\n") };
}

/**
 * The entry a prune request of the part stores (undefined: it is discarded already, and the
 * breadcrumb and who asked stay as they are), or why it cannot.
 */
function manualEntry(t: ManualTarget, action: Exclude<ManualAction, "restore">, node: PartNode, current: ManualEntry | undefined): ManualEntry | undefined | string {
  if (action === "discard") return current?.action === "discard" ? undefined : { action: "discard" };
  if (action === "distill") return t.summary?.trim() ? { action: "distill", summary: t.summary.trim() } : "distill needs a non-empty summary";
  if (!t.start || !t.end) return "replace needs start and end markers";
  const prev = current?.action === "replace" ? current.replaces ?? [] : [];
  const entry: ManualEntry = { action: "replace", replaces: [...prev, { start: t.start, end: t.end, replacement: t.replacement }] };
  let text = contentOf(node);
  let err: string | undefined;
  for (const r of entry.replaces!) {
    const out = replaceBetween(text, r);
    if (out.error) err = out.error;
    else text = out.text!;
  }
  if (err) return `${err} (markers must match the original ${node.part.type === "tool" ? "output" : "text"} literally; replaced spans must not overlap)`;
  return entry;
}

/**
 * Why the request would not make the part smaller, or undefined. Commit makes no change that does
 * not shrink a part (candidate.ts evaluatePatch), so such a request would be answered as done and
 * never applied.
 */
function notSmaller(node: PartNode, entry: ManualEntry): string | undefined {
  const patch = manualPatch(node, entry);
  if (patch && evaluatePatch(node, patch)) return undefined;
  const what = `${node.part.type === "tool" ? "output" : "text"} (${contentOf(node).length.toLocaleString("en-US")} chars)`;
  if (entry.action === "discard") return `kept: the ${what} is no longer than its note would be, so discarding it frees nothing`;
  if (entry.action === "distill") return `kept: the summary is not shorter than the ${what}`;
  return `kept: the replacement does not make the ${what} shorter`;
}

/** The id of the one part with an id whose content holds start…end (the id-less replace tuple). */
function spanOwner(state: SessionState, graph: Graph, start: string, end: string): string | { error: string } {
  const owners: string[] = [];
  for (const [id, partId] of Object.entries(state.ids ?? {})) {
    const n = graph.byId.get(partId);
    if (n && replaceBetween(contentOf(n), { start, end }).text !== undefined) owners.push(id);
  }
  if (owners.length === 1) return owners[0];
  const span = `${JSON.stringify(start)} … ${JSON.stringify(end)}`;
  if (owners.length === 0) return { error: `${span}: no output or message with an id holds these markers (give the id first: [id, start, end, replacement])` };
  return { error: `${span}: several parts hold these markers (${owners.join(", ")}); give the id first: [id, start, end, replacement]` };
}

/** Ids the model could still prune: not pruned or asked for already, not protected; the largest first. */
function availableIds(state: SessionState, graph: Graph, protection: (partId: string) => string | undefined): string[] {
  const out: string[] = [];
  const candidates = Object.entries(state.ids ?? {})
    .filter(([, partId]) => graph.byId.has(partId) && !state.decisions[partId]?.output && !state.manual?.[partId])
    .map(([id, partId]) => [id, partId, contentOf(graph.byId.get(partId)!).length] as const)
    .sort((a, b) => b[2] - a[2]);
  for (const [id, partId, chars] of candidates) {
    if (out.length === 20) break;
    if (!protection(partId)) out.push(`${id} (${tokensOf(chars)} tokens)`);
  }
  return out;
}
