// Why a part is not pruned (acp explain --part, /acp explain): every rule whose static conditions
// admit the part, with where it stands on the last call. Read from the session's runtime, which it
// never changes: conditions are evaluated by explain's code (the same leaves as the compiled ones),
// and the verdicts the phases cached (a change wanted, or not worth making) are only looked up.
import type { PartNode } from "../graph/graph.js";
import { explainCondition, type ExplainedCondition, show } from "./explain.js";
import { holdsOn } from "./compile.js";
import { patchVerdict } from "./verdicts.js";
import { patchChars, slotChars } from "./render.js";
import type { CompiledRule, CompiledRuleSet } from "./ruleset.js";
import type { SessionRuntime } from "./session.js";
import { spares, type Spare } from "./spares.js";
import { holdersOf, type Holder } from "./holders.js";
import { isPinned, PIN_LASTS } from "./pins.js";

/**
 * - protected: a protect rule holds the part (a protect rule that matches; any other rule that does
 *   not override protection). A protect rule's protection does not hold against a rule that sets
 *   overrideProtection: such a rule that matches stands as it would on an unprotected part, and
 *   it, not the protection, decides what becomes of the part (overriddenBy, overrides)
 * - restored: it matches, but the user or the model restored the part, and rules leave it alone
 * - backed-off: the rule caused regret in this session and decides no new parts there
 * - taken: it matches, but another rule's change to the part's output (or a prune request's) is
 *   the one the last call wanted (one decision per slot)
 * - held: it matches, but an older view of the same thing stays in full (restored, protected, its
 *   rule backed off, no note short enough: holders.ts), and a newer view is never hidden while an
 *   older one is shown; it goes only once that older view goes too
 * - waiting: it matches; the change waits for the commit policy (a change to the prompt already sent
 *   applies where the cache breaks anyway, or once the batch repays the re-cache)
 * - not-worth: it matches, but its change would save too little
 * - superseded-elsewhere: a supersede rule with a newer part of the key that would supersede the
 *   part, which another supersede rule marked first (a part is superseded once)
 * - spared: a supersede rule with newer parts of the key its `by` admits, none of which supersedes
 *   the part (a range that does not cover it, an edit elsewhere, keepNewest)
 * - no-newer-view: a supersede rule whose condition holds, with no newer part of the same key (or
 *   none its `by` admits)
 * - no-match: its condition is false on this call
 *
 * A supersede rule matches only where a newer part of its key supersedes the part (it marked it):
 * until that is known, neither protection nor back-off is a reason it does not apply.
 */
export type Standing = "protected" | "restored" | "backed-off" | "taken" | "held" | "waiting" | "not-worth" | "superseded-elsewhere" | "spared" | "no-newer-view" | "no-match";

export interface StandingRule {
  id: string;
  description: string;
  source?: string;
  phase: string;
  standing: Standing;
  when: ExplainedCondition;
  /** A supersede rule's key for the part. */
  key?: string;
  /** The newer part that supersedes it: under this rule, or under markedBy. */
  by?: string;
  /** The supersede rule that marked the part, when another one (superseded-elsewhere). */
  markedBy?: string;
  /** The newer part of this rule's key that would supersede the part (superseded-elsewhere) or spares it (spared). */
  newer?: string;
  /** The rule whose change to the part's output the last call wanted ("manual": a prune request) (taken). */
  takenBy?: string;
  /** Why `newer` does not supersede the part (spared; none when the checks say it would). */
  spared?: Spare;
  /** Newer parts of the key that the rule's `by` does not admit (no-newer-view). */
  sameKey?: string[];
  /** The older views in full that hold the part in full (held). */
  holders?: Holder[];
  /** Tokens the change would save (waiting, when the phases computed it). */
  tokens?: number;
  /**
   * What the change would make of the slot it changes (not-worth): its characters before and
   * after, or `none` (the action's name) when the action leaves the part as it is. Absent where
   * the reason is not the size (a drop, an empty text, a call still running).
   */
  change?: { slot: "output" | "input" | "text" | "file"; before: number; after: number } | { none: string };
  /** A protect rule: the rules that match the part and override protection, so it does not hold against them. */
  overriddenBy?: string[];
  /** A rule that overrides protection, on a protected part: the protect rules that match it (their protection does not hold against this rule). */
  overrides?: string[];
}

const ORDER: Standing[] = ["protected", "restored", "held", "waiting", "backed-off", "taken", "not-worth", "superseded-elsewhere", "spared", "no-newer-view", "no-match"];

/** The rules that consider the part, most telling first: what holds it, what is about to prune it, what does not apply. */
export function standingOf(rt: SessionRuntime, ruleSet: CompiledRuleSet, node: PartNode, regretLimit: number): StandingRule[] {
  const backedOff = rt.backedOff.rules(rt.state, regretLimit);
  const mark = rt.marks.get(node.part.id);
  const tool = node.part.type === "tool" ? node.part.tool : undefined;
  const out: StandingRule[] = [];
  const overriding = new Set<StandingRule>(); // entries of rules that override protection
  for (const r of ruleSet.rules) {
    const ctx = rt.ctxs[r.index];
    if (!holdsOn(r.staticWhen, node, tool, ctx)) continue;
    const when = explainCondition(r.ast.when, node, ctx);
    const marked = mark?.rule.id === r.id;
    const key = r.key?.get(node, ctx);
    const newer = r.phase === "supersede" && when.result && !marked ? newerOfKey(rt, r, node, key) : undefined;
    // the verdict the phases cached for this rule's change: a candidate, null (not worth it), or, where
    // they have not made it yet (a part that never got this far), made here without caching it
    let patch = rt.patches[r.index]?.get(node.part.id);
    if (patch === undefined && when.result && r.phase !== "protect" && (r.phase !== "supersede" || marked)) patch = patchVerdict(r, node, marked ? mark!.byNode : undefined);
    const entry: StandingRule = {
      id: r.id,
      description: r.spec.description,
      source: r.spec.source ? `${r.spec.source.file}:${r.spec.source.line}:${r.spec.source.col}` : undefined,
      phase: r.phase,
      standing: standing(rt, r, node, when.result, backedOff, marked, patch === null, newer),
      when,
    };
    if (r.key) entry.key = key;
    if (marked) entry.by = mark!.by;
    if (entry.standing === "taken") entry.takenBy = rt.decidedNow.get(node.index);
    if (entry.standing === "superseded-elsewhere") Object.assign(entry, { markedBy: mark!.rule.id, by: mark!.by, newer: newer!.superseding });
    // (a newer part that would supersede the unmarked part: the runtime's marks disagree; it is named without a reason)
    if (entry.standing === "spared") Object.assign(entry, newer!.superseding !== undefined ? { newer: newer!.superseding } : { newer: newer!.spared!.id, spared: newer!.spared!.why });
    if (entry.standing === "no-newer-view" && newer!.sameKey.length > 0) entry.sameKey = newer!.sameKey;
    if (entry.standing === "waiting" && r.action.slot !== "input") {
      // an older view in full holds the part in full: commit never hides it beside that view
      const holders = holdersOf(rt, node, { hiding: () => false, backedOff });
      if (holders.length > 0) Object.assign(entry, { standing: "held", holders });
    }
    if (entry.standing === "waiting" && patch) entry.tokens = patch.tokens;
    if (entry.standing === "not-worth") {
      const change = sizeOf(r, node, marked ? mark!.byNode : undefined);
      if (change) entry.change = change;
    }
    out.push(entry);
    if (r.options.overrideProtection === true && r.phase !== "protect") overriding.add(entry);
  }
  return ranked(out, overriding);
}

/** Standings of a rule that matches the part (it wants to change it, or would but for the reason named). */
const MATCHING = new Set<Standing>(["restored", "backed-off", "taken", "held", "waiting", "not-worth"]);

/**
 * Most telling first (ORDER). A protection that a matching rule overrides does not decide the
 * part's fate: that rule's own standing does, so the protect rules come right after the rules
 * that override them, and each side names the other.
 */
function ranked(entries: StandingRule[], overriding: ReadonlySet<StandingRule>): StandingRule[] {
  const rank = new Map<StandingRule, number>(entries.map((s) => [s, ORDER.indexOf(s.standing)]));
  const protectors = entries.filter((s) => s.phase === "protect" && s.standing === "protected");
  const overriders = protectors.length > 0 ? entries.filter((s) => overriding.has(s) && MATCHING.has(s.standing)) : [];
  if (overriders.length > 0) {
    const last = Math.max(...overriders.map((s) => rank.get(s)!));
    for (const s of protectors) {
      s.overriddenBy = overriders.map((o) => o.id);
      rank.set(s, last + 0.5);
    }
    for (const s of overriders) s.overrides = protectors.map((p) => p.id);
  }
  return entries.sort((a, b) => rank.get(a)! - rank.get(b)!);
}

/** What the rule's change would make of the part, by size, where size is why it is not worth making (evaluatePatch's shrink check). */
function sizeOf(r: CompiledRule, node: PartNode, by: PartNode | undefined): StandingRule["change"] {
  const patch = r.action.apply(node, r.options as Record<string, any>, { by });
  if (!patch) return { none: r.action.name };
  if (patch.drop || patch.text?.trim() === "" || (node.part.type === "tool" && patch.output !== undefined && node.part.state?.status !== "completed" && node.part.state?.status !== "error")) return undefined;
  const slot = patch.input !== undefined ? "input" : patch.output !== undefined ? "output" : patch.text !== undefined ? "text" : "file";
  return { slot, before: slotChars(node, patch), after: patchChars(patch) };
}

function standing(rt: SessionRuntime, r: CompiledRule, node: PartNode, matches: boolean, backedOff: ReadonlySet<string>, marked: boolean, notWorth: boolean, newer: NewerOfKey | undefined): Standing {
  if (!matches) return "no-match";
  if (r.phase === "protect") return "protected";
  // a supersede rule that did not mark the part does not match it: say what its newer parts do
  // before protection or back-off, which would claim a match
  if (newer) {
    if (newer.superseding !== undefined) return rt.marks.has(node.part.id) ? "superseded-elsewhere" : "spared";
    return newer.spared ? "spared" : "no-newer-view";
  }
  // no rule decides a restored part again (in-full.ts untouchable), protected or not
  if (isPinned(rt.state, node.part.id)) return "restored";
  if (rt.protectedBy.has(node.index) && r.options.overrideProtection !== true) return "protected";
  if (backedOff.has(r.id)) return "backed-off";
  // the earlier phase's (or rule's) want holds the output: this rule's change is not wanted at all
  const first = r.action.slot === "input" ? undefined : rt.decidedNow.get(node.index);
  if (first !== undefined && first !== r.id) return "taken";
  return notWorth ? "not-worth" : "waiting";
}

/** What the newer parts of the part's key do to it under a supersede rule that did not mark it. */
interface NewerOfKey {
  /** The first that would supersede it (another rule marked the part first). */
  superseding?: string;
  /** The first that the rule's `by` admits but that spares it, and why. */
  spared?: { id: string; why: Spare };
  /** Those (before `superseding`) that the rule's `by` does not admit. */
  sameKey: string[];
}

/** The newer parts of `key` under `r`, walked as the runtime's groups saw them (supersedeOlder's checks, by spares). */
function newerOfKey(rt: SessionRuntime, r: CompiledRule, node: PartNode, key: string | undefined): NewerOfKey {
  const out: NewerOfKey = { sameKey: [] };
  if (key === undefined) return out;
  const ctx = rt.ctxs[r.index];
  const nodes = rt.graph.nodes;
  let olderIsNewest = true; // no `when` member of the key since the part (keepNewest keeps the newest)
  for (let i = node.index + 1; i < nodes.length; i++) {
    const n = nodes[i];
    if (n.part.id === node.part.id || r.key!.get(n, ctx) !== key) continue;
    const tool = n.part.type === "tool" ? n.part.tool : undefined;
    // supersede conditions are static (compile.ts): staticWhen is the whole `when`
    const member = holdsOn(r.staticWhen, n, tool, ctx);
    if (!(r.by ? holdsOn(r.by, n, tool, ctx) : member)) out.sameKey.push(n.part.id);
    else {
      const why = spares(r, node, n, member, olderIsNewest);
      if (why === undefined) return { ...out, superseding: n.part.id };
      out.spared ??= { id: n.part.id, why };
    }
    if (member) olderIsNewest = false;
  }
  return out;
}

/** A leaf as `fact = value (operator expected)`. */
const leafText = (e: Extract<ExplainedCondition, { fact: unknown }>) => `${e.fact}${e.path ? ` ${e.path}` : ""} = ${show(e.factResult, 60)} (${e.operator} ${show(e.valueResult, 60)})`;

/** The leaves that make a false condition false, as `fact = value (operator expected)`. */
export function failingLeaves(e: ExplainedCondition): string[] {
  if (e.result) return [];
  if ("all" in e) return e.all.flatMap(failingLeaves);
  if ("any" in e) return [e.any.map((c) => failingLeaves(c).join(" and ")).filter(Boolean).join(" or ")].filter(Boolean);
  if ("not" in e) return [`not (${holdingLeaves(e.not).join(" and ")})`];
  return [leafText(e)];
}

/** The leaves that make a true condition true (what a `not` turned false). */
function holdingLeaves(e: ExplainedCondition): string[] {
  if (!e.result) return [];
  if ("all" in e) return e.all.flatMap(holdingLeaves);
  if ("any" in e) return holdingLeaves(e.any.find((c) => c.result)!);
  if ("not" in e) return failingLeaves(e.not).map((s) => `not (${s})`);
  return [leafText(e)];
}

const keyText = (s: StandingRule) => (s.key !== undefined ? ` (${show(s.key, 120)})` : "");
const listed = (ids: string[], most = 3) => ids.slice(0, most).join(", ") + (ids.length > most ? ` and ${ids.length - most} more` : "");

const SPARED: Record<Spare, string> = {
  range: "its line range does not cover this one's (range)",
  overlap: "it changes no line this one wrote (overlap)",
  keepNewest: "the rule keeps the newest view of the key before it (keepNewest)",
};

/** "matches", with the newer part that supersedes the part and the protection the rule overrides. */
function matches(s: StandingRule): string {
  const notes = [s.by && (s.standing === "waiting" || s.standing === "held") ? `superseded by ${s.by}` : undefined, s.overrides ? `it overrides ${listed(s.overrides)}` : undefined].filter(Boolean);
  return `matches${notes.length ? ` (${notes.join("; ")})` : ""}`;
}

const SLOT: Record<string, string> = { output: "its output", input: "its input", text: "its text", file: "the file" };

/** Why a change is not worth making: what it would make of the part, when size is the reason. */
function notWorth(change: StandingRule["change"]): string {
  if (!change) return "its change would save too little";
  if ("none" in change) return `its action (${change.none}) would leave the part as it is`;
  const { slot, before, after } = change;
  const n = (c: number) => `${c.toLocaleString("en-US")} char${c === 1 ? "" : "s"}`;
  if (after >= before) return `its change would not shrink the part: ${SLOT[slot]}, ${n(before)}, would become ${n(after)}`;
  return `its change would save too little: ${SLOT[slot]}, ${n(before)}, would become ${n(after)}`;
}

/** The older views that hold a part in full, each with why it stays in full. */
function heldBy(holders: Holder[]): string {
  const why = (h: Holder) =>
    h.why === "restored" ? "was restored" : h.why === "protected" ? `is protected by rule "${h.rule}"` : h.why === "backed-off" ? `stays in full: rule "${h.rule}" backed off after regret` : `stays in full: rule "${h.rule}" has no note short enough for it`;
  return listed(holders.map((h) => `${h.partId} ${why(h)}`));
}

/** One line: where the rule stands and, when it does not match, what fails. */
export function describeStanding(s: StandingRule): string {
  switch (s.standing) {
    case "protected":
      if (s.phase !== "protect") return `${s.id}: matches, but the part is protected (the rule does not override protection)`;
      return s.overriddenBy ? `${s.id}: protects it from every rule but ${listed(s.overriddenBy)}, which ${s.overriddenBy.length === 1 ? "overrides" : "override"} protection` : `${s.id}: protects it`;
    case "restored":
      return `${s.id}: ${matches(s)}, but the part was restored, and rules leave a restored part alone ${PIN_LASTS}`;
    case "taken":
      return `${s.id}: ${matches(s)}, but ${s.takenBy === "manual" ? "a prune request's" : `${s.takenBy}'s`} change to the part's output is the one wanted (one change per slot)`;
    case "backed-off":
      return `${s.id}: ${matches(s)}, but the rule backed off in this session (it caused regret: regretLimit)`;
    case "held":
      return `${s.id}: ${matches(s)}, but an older view of the same thing stays in full (${heldBy(s.holders ?? [])}), and a newer view is never hidden while an older one is shown`;
    case "waiting":
      return `${s.id}: ${matches(s)}; waits for the commit policy${s.tokens ? ` (would save ${s.tokens.toLocaleString("en-US")} tokens)` : ""}: a change to the prompt already sent applies where the cache breaks anyway or once the batch repays the re-cache`;
    case "not-worth":
      return `${s.id}: ${matches(s)}, but ${notWorth(s.change)}`;
    case "superseded-elsewhere":
      return `${s.id}: newer part ${s.newer} has the same key${keyText(s)}, but the part is already superseded by ${s.markedBy} (by ${s.by})`;
    case "spared":
      return `${s.id}: newer part ${s.newer} has the same key${keyText(s)}, but ${s.spared ? `does not supersede it: ${SPARED[s.spared]}` : "the rule has not superseded the part"}`;
    case "no-newer-view":
      return s.sameKey ? `${s.id}: no newer part with the same key${keyText(s)} meets its by condition (newer with the key: ${listed(s.sameKey)})` : `${s.id}: no newer part with the same key${keyText(s)}`;
    case "no-match":
      return `${s.id}: does not match: ${failingLeaves(s.when).join("; ")}`;
  }
}
