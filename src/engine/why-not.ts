// Why a part is not pruned (acp explain --part, /acp explain): every rule whose static conditions
// admit the part, with where it stands on the last call. Read from the session's runtime, which it
// never changes: conditions are evaluated by explain's code (the same leaves as the compiled ones),
// and the verdicts the phases cached (a change wanted, or not worth making) are only looked up.
import type { PartNode } from "../graph/graph.js";
import { explainCondition, type ExplainedCondition, show } from "./explain.js";
import { holdsOn } from "./compile.js";
import { patchVerdict } from "./phases.js";
import type { CompiledRule, CompiledRuleSet } from "./ruleset.js";
import type { SessionRuntime } from "./session.js";

/**
 * - protected: a protect rule holds the part (a protect rule that matches; any other rule that does
 *   not override protection)
 * - backed-off: the rule caused regret in this session and decides no new parts there
 * - waiting: it matches; the change waits for the commit policy (a change to the prompt already sent
 *   applies where the cache breaks anyway, or once the batch repays the re-cache)
 * - not-worth: it matches, but its change would save too little
 * - no-newer-view: a supersede rule whose condition holds, with no newer part of the same key
 * - no-match: its condition is false on this call
 */
export type Standing = "protected" | "backed-off" | "waiting" | "not-worth" | "no-newer-view" | "no-match";

export interface StandingRule {
  id: string;
  description: string;
  source?: string;
  phase: string;
  standing: Standing;
  when: ExplainedCondition;
  /** A supersede rule's key for the part. */
  key?: string;
  /** The newer part that supersedes it (waiting supersede). */
  by?: string;
  /** Tokens the change would save (waiting, when the phases computed it). */
  tokens?: number;
}

const ORDER: Standing[] = ["protected", "waiting", "backed-off", "not-worth", "no-newer-view", "no-match"];

/** The rules that consider the part, most telling first: what holds it, what is about to prune it, what does not apply. */
export function standingOf(rt: SessionRuntime, ruleSet: CompiledRuleSet, node: PartNode, regretLimit: number): StandingRule[] {
  const backedOff = rt.backedOff.rules(rt.state, regretLimit);
  const mark = rt.marks.get(node.part.id);
  const tool = node.part.type === "tool" ? node.part.tool : undefined;
  const out: StandingRule[] = [];
  for (const r of ruleSet.rules) {
    const ctx = rt.ctxs[r.index];
    if (!holdsOn(r.staticWhen, node, tool, ctx)) continue;
    const when = explainCondition(r.ast.when, node, ctx);
    const marked = mark?.rule.id === r.id;
    // the verdict the phases cached for this rule's change: a candidate, null (not worth it), or, where
    // they have not made it yet (a part that never got this far), made here without caching it
    let patch = rt.patches[r.index]?.get(node.part.id);
    if (patch === undefined && when.result && r.phase !== "protect" && (r.phase !== "supersede" || marked)) patch = patchVerdict(r, node, marked ? mark!.byNode : undefined);
    const entry: StandingRule = {
      id: r.id,
      description: r.spec.description,
      source: r.spec.source ? `${r.spec.source.file}:${r.spec.source.line}:${r.spec.source.col}` : undefined,
      phase: r.phase,
      standing: standing(rt, r, node, when.result, backedOff, marked, patch === null),
      when,
    };
    if (r.key) entry.key = r.key.get(node, ctx);
    if (marked) entry.by = mark!.by;
    if (entry.standing === "waiting" && patch) entry.tokens = patch.tokens;
    out.push(entry);
  }
  return out.sort((a, b) => ORDER.indexOf(a.standing) - ORDER.indexOf(b.standing));
}

function standing(rt: SessionRuntime, r: CompiledRule, node: PartNode, matches: boolean, backedOff: ReadonlySet<string>, marked: boolean, notWorth: boolean): Standing {
  if (!matches) return "no-match";
  if (r.phase === "protect") return "protected";
  if (rt.protectedBy.has(node.index) && r.options.overrideProtection !== true) return "protected";
  if (backedOff.has(r.id)) return "backed-off";
  if (r.phase === "supersede" && !marked) return "no-newer-view";
  return notWorth ? "not-worth" : "waiting";
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

/** One line: where the rule stands and, when it does not match, what fails. */
export function describeStanding(s: StandingRule): string {
  switch (s.standing) {
    case "protected":
      return s.phase === "protect" ? `${s.id}: protects it` : `${s.id}: matches, but the part is protected (the rule does not override protection)`;
    case "backed-off":
      return `${s.id}: matches, but the rule backed off in this session (it caused regret: regretLimit)`;
    case "waiting":
      return `${s.id}: matches${s.by ? ` (superseded by ${s.by})` : ""}; waits for the commit policy${s.tokens ? ` (would save ${s.tokens.toLocaleString("en-US")} tokens)` : ""}: a change to the prompt already sent applies where the cache breaks anyway or once the batch repays the re-cache`;
    case "not-worth":
      return `${s.id}: matches, but its change would save too little`;
    case "no-newer-view":
      return `${s.id}: no newer part with the same key${s.key !== undefined ? ` (${show(s.key, 120)})` : ""}`;
    case "no-match":
      return `${s.id}: does not match: ${failingLeaves(s.when).join("; ")}`;
  }
}
