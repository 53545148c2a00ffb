// One call of the interpreter, in the fixed phase order:
//   protect → supersede → age → reduce → manual → commit → (render, in render.ts)
// A part gets at most one decision per slot; the earliest phase wins, so a superseded output
// is never also truncated. Committed decisions are sticky and skipped here.
import { tokensOf, toolResultText, type PartNode } from "../graph/graph.js";
import type { CommitPolicy } from "../rules/types.js";
import type { Patch } from "./actions/index.js";
import { patchChars, slotChars } from "./render.js";
import type { CompiledRule } from "./ruleset.js";
import type { SessionRuntime } from "./session.js";
import type { Decision } from "./state.js";
import { manualPatch } from "./manual.js";

/** What decided a part: a compiled rule, or the model's own request. */
interface Decider {
  id: string;
  options?: Record<string, unknown>;
  action: { name: string };
  spec: { commit?: "batch" | "immediate" };
}

const MANUAL: Decider = { id: "manual", action: { name: "manual" }, spec: { commit: "immediate" } };

interface Wanted {
  node: PartNode;
  slot: "output" | "input";
  rule: Decider;
  patch: Patch;
  tokens: number;
  by?: string;
}

/** Patches depend only on the part and the rule's options: computed once per (rule, part). */
const patchCache = new WeakMap<SessionRuntime, Map<string, Patch | null>>();

function patchFor(rt: SessionRuntime, rule: CompiledRule, node: PartNode, by?: PartNode): Patch | undefined {
  let cache = patchCache.get(rt);
  if (!cache) patchCache.set(rt, (cache = new Map()));
  const k = `${rule.index}\u0000${node.part.id}`;
  let p = cache.get(k);
  if (p === undefined) {
    p = rule.action.apply(node, rule.options as Record<string, any>, { by }) ?? null;
    cache.set(k, p);
  }
  return p ?? undefined;
}

/** Minimum characters a patch must save to be worth a change. */
const MIN_SAVING = 16;

/** Smaller as sent, not only in characters: JSON escapes and multi-byte breadcrumbs count too. */
function shrinks(n: PartNode, patch: Patch, before: number): boolean {
  const after = patchChars(patch);
  if (after + MIN_SAVING > before) return false;
  if (before - after > 256) return true; // clearly smaller; skip the byte count on large outputs
  const bytes = (s: string) => Buffer.byteLength(JSON.stringify(s));
  const original = patch.input !== undefined ? JSON.stringify(n.part.state?.input ?? {}) : patch.text !== undefined ? (n.part.text ?? "") : toolResultText(n.part);
  const replaced = patch.input !== undefined ? JSON.stringify(patch.input) : (patch.output ?? patch.text ?? patch.asText ?? "");
  return bytes(replaced) + MIN_SAVING <= bytes(original);
}

export interface CallResult {
  committed: number;
  pending: number;
  pendingTokens: number;
  rebuilt: boolean;
}

/** The protect phase alone: fills rt.protectedBy for the runtime's current graph. */
export function evaluateProtection(rt: SessionRuntime): void {
  rt.protectedBy = new Map();
  const nodes = rt.graph.nodes;
  for (const r of rt.rules.byPhase.protect)
    for (const i of rt.candidates[r.index]) if (!rt.protectedBy.has(i) && (!r.dynamicWhen || r.dynamicWhen(nodes[i], rt.ctxs[r.index]))) rt.protectedBy.set(i, r);
}

export function runPhases(rt: SessionRuntime, policy: CommitPolicy, promptTokens: number): Omit<CallResult, "rebuilt"> {
  const { graph, state, rules } = rt;
  const nodes = graph.nodes;
  const decisions = state.decisions;
  rt.supersededNow = new Map();
  rt.decidedNow = new Map();
  const wanted: Wanted[] = [];
  const taken = (n: PartNode, slot: "output" | "input") => decisions[n.part.id]?.[slot] !== undefined;

  const dynamicOk = (r: CompiledRule, n: PartNode) => !r.dynamicWhen || r.dynamicWhen(n, rt.ctxs[r.index]);

  evaluateProtection(rt);

  // supersede (marks are kept incrementally by the runtime)
  for (const [id, mark] of rt.marks) {
    const n = graph.byId.get(id);
    if (!n) continue;
    rt.supersededNow.set(n.index, mark.rule);
    if (taken(n, "output") || (rt.protectedBy.has(n.index) && mark.rule.options.overrideProtection !== true)) continue;
    const by = graph.byId.get(mark.by);
    const patch = patchFor(rt, mark.rule, n, by);
    if (patch) want(n, mark.rule, patch, mark.by);
  }

  // age, reduce
  for (const phase of ["age", "reduce"] as const)
    for (const r of rules.byPhase[phase]) {
      const slot = r.action.slot === "input" ? "input" : "output";
      for (const i of rt.candidates[r.index]) {
        const n = nodes[i];
        if ((rt.protectedBy.has(i) && r.options.overrideProtection !== true) || taken(n, slot)) continue;
        if (slot === "output" && rt.decidedNow.has(i)) continue;
        if (!dynamicOk(r, n)) continue;
        const patch = patchFor(rt, r, n);
        if (patch) want(n, r, patch);
      }
    }

  // manual: the model's own requests, committed like rule decisions but never deferred
  for (const [partId, entry] of Object.entries(state.manual ?? {})) {
    const n = graph.byId.get(partId);
    if (!n || taken(n, "output") || rt.decidedNow.has(n.index)) continue;
    const patch = manualPatch(n, entry);
    if (patch) want(n, MANUAL, patch);
  }

  return commit(wanted);

  // Invariants no rule can switch off: the user's own words (only the opt-in code-block action
  // may shorten them) and the current turn's reasoning, which providers verify by signature.
  function untouchable(n: PartNode, rule: Decider): boolean {
    const role = n.message.info?.role;
    if (role === "user" && n.part.type === "text" && !n.part.synthetic) return rule.action.name !== "collapse-code-blocks";
    if (n.part.type === "reasoning" && n.msgIndex > graph.lastUserMsgIndex) return true;
    return state.pinned?.[n.part.id] === true;
  }

  function want(n: PartNode, rule: Decider, patch: Patch, by?: string) {
    if (untouchable(n, rule)) return;
    const before = slotChars(n, patch);
    // never make a part larger (comparison baselines may, to reproduce other pruners exactly)
    if (!patch.drop && rule.options?.allowGrowth !== true && !shrinks(n, patch, before)) return;
    const slot = patch.input !== undefined ? "input" : "output";
    if (slot === "output") rt.decidedNow.set(n.index, rule.id);
    const tokens = Math.max(0, tokensOf(before) - tokensOf(patchChars(patch)));
    wanted.push({ node: n, slot, rule, patch, tokens, by });
  }

  // commit: decisions on parts the provider has not seen yet apply at once; decisions that
  // would change the already-sent (cached) prefix wait until together they free enough.
  function commit(list: Wanted[]) {
    const sentIdx = sentMessageIndex();
    const now: Wanted[] = [];
    const later: Wanted[] = [];
    for (const w of list) (w.node.msgIndex > sentIdx || w.rule.spec.commit === "immediate" ? now : later).push(w);
    const pendingTokens = later.reduce((s, w) => s + w.tokens, 0);
    const pressure = policy.pressureTokens > 0 && promptTokens >= policy.pressureTokens;
    if (later.length > 0 && (pendingTokens >= policy.minTokens || pressure || paysOff(later, pendingTokens))) now.push(...later.splice(0));
    for (const w of now) {
      const d: Decision = { rule: w.rule.id, action: w.rule.action.name, patch: w.patch, tokens: w.tokens, call: state.calls };
      if (w.by) d.by = w.by;
      (decisions[w.node.part.id] ??= {})[w.slot] = d;
    }
    return { committed: now.length, pending: later.length, pendingTokens: later.reduce((s, w) => s + w.tokens, 0) };
  }

  /** Cache break-even: is freeing `freed` tokens worth re-caching everything after the first edit? */
  function paysOff(list: Wanted[], freed: number): boolean {
    if (!(policy.breakEven > 0) || freed <= 0) return false;
    const first = Math.min(...list.map((w) => w.node.index));
    let after = 0;
    for (let i = first; i < nodes.length; i++) after += nodes[i].outputChars + (typeof nodes[i].part.text === "string" ? nodes[i].part.text!.length : 0);
    return freed * Math.max(1, state.calls) >= policy.breakEven * tokensOf(after);
  }

  function sentMessageIndex(): number {
    if (state.sentUpTo === undefined) return -1; // nothing sent yet: everything is tail
    const msgs = graph.messages;
    for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i]?.info?.id === state.sentUpTo) return i;
    return msgs.length; // prefix unknown (compaction, revert): treat all as sent
  }
}
