// A rule's verdict on a part: the change it makes, if worth making. The walks (walk-marks.ts,
// walk-rules.ts) read it from the runtime's cache; why-not.ts asks it afresh.
import type { PartNode } from "../graph/graph.js";
import { evaluatePatch, type Candidate } from "./candidate.js";
import { signedReasoning } from "./manual-patch.js";
import type { CompiledRule } from "./ruleset.js";
import type { SessionRuntime } from "./session.js";

export function candidateFor(rt: SessionRuntime, rule: CompiledRule, node: PartNode, by?: PartNode): Candidate | undefined {
  const cache = (rt.patches[rule.index] ??= new Map());
  let c = cache.get(node.part.id);
  if (c === undefined) {
    c = patchVerdict(rule, node, by);
    cache.set(node.part.id, c);
  }
  return c ?? undefined;
}

/** The rule's change to the part, if worth making (null: none, or it would save too little); not cached. */
export function patchVerdict(rule: CompiledRule, node: PartNode, by?: PartNode): Candidate | null {
  const patch = rule.action.apply(node, rule.options as Record<string, any>, { by });
  if (!patch) return null;
  // the provider verifies a signed block's text: it goes out unchanged or not at all
  if (patch.text !== undefined && signedReasoning(node)) return evaluatePatch(node, { drop: true }, rule.options);
  return evaluatePatch(node, patch, rule.options);
}
