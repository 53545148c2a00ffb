// Explain mode: evaluates every leaf of a condition and returns the same tree shape as
// json-rules-engine's RuleResult (`result`, `factResult`, `valueResult` on each leaf).
import type { PartNode } from "../graph/graph.js";
import type { Condition, Leaf } from "../rules/types.js";
import { parsePath, pathOf } from "../lang/path.js";
import { factByName, type FactContext } from "./facts.js";
import { resolveOperator } from "../lang/operators.js";

export type ExplainedCondition =
  | { all: ExplainedCondition[]; result: boolean }
  | { any: ExplainedCondition[]; result: boolean }
  | { not: ExplainedCondition; result: boolean }
  | (Leaf & { factResult: unknown; valueResult: unknown; result: boolean });

function factValue(fact: string, path: string | undefined, node: PartNode, ctx: FactContext): unknown {
  const v = factByName.get(fact)?.get(node, ctx);
  return path ? pathOf(v, parsePath(path)) : v;
}

export function explainCondition(cond: Condition, node: PartNode, ctx: FactContext): ExplainedCondition {
  if ("all" in cond) {
    const all = cond.all.map((c) => explainCondition(c, node, ctx));
    return { all, result: all.every((c) => c.result) };
  }
  if ("any" in cond) {
    const any = cond.any.map((c) => explainCondition(c, node, ctx));
    return { any, result: any.length === 0 || any.some((c) => c.result) };
  }
  if ("not" in cond) {
    const not = explainCondition(cond.not, node, ctx);
    return { not, result: !not.result };
  }
  const leaf = cond as Leaf;
  const factResult = factValue(leaf.fact, leaf.path, node, ctx);
  const v = leaf.value as any;
  const valueResult = v && typeof v === "object" && !Array.isArray(v) && typeof v.fact === "string" ? factValue(v.fact, v.path, node, ctx) : v;
  const op = resolveOperator(leaf.operator);
  return { ...leaf, factResult, valueResult, result: op ? op(factResult, valueResult) : false };
}

const show = (v: unknown) => {
  const s = JSON.stringify(v) ?? "undefined";
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
};

/** Indented text of an explained condition, one line per node. */
export function formatExplained(e: ExplainedCondition, indent = "  "): string[] {
  const mark = (r: boolean) => (r ? "✓" : "✗");
  if ("all" in e) return [`${indent}${mark(e.result)} all`, ...e.all.flatMap((c) => formatExplained(c, `${indent}  `))];
  if ("any" in e) return [`${indent}${mark(e.result)} any`, ...e.any.flatMap((c) => formatExplained(c, `${indent}  `))];
  if ("not" in e) return [`${indent}${mark(e.result)} not`, ...formatExplained(e.not, `${indent}  `)];
  const fact = `${e.fact}${e.path ? ` ${e.path}` : ""}`;
  return [`${indent}${mark(e.result)} ${fact} = ${show(e.factResult)}  ${e.operator}  ${show(e.valueResult)}`];
}
