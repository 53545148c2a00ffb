// Explain mode: every leaf of a condition evaluated by code generated from the same tree and the
// same pieces as the compiled condition (compile.ts `leafCode`), so the verdict shown is the one
// computed by the code that ran. Returns json-rules-engine's RuleResult shape (`result`,
// `factResult`, `valueResult` on each leaf).
import type { PartNode } from "../graph/graph.js";
import { type ConditionNode, fold, isConditionNode, type LeafNode, parseCondition } from "../lang/condition.js";
import type { Condition, Leaf } from "../rules/types.js";
import { leafCode } from "./compile.js";
import { Emitter } from "./emit.js";
import type { FactContext } from "./facts.js";

export type ExplainedCondition =
  | { all: ExplainedCondition[]; result: boolean }
  | { any: ExplainedCondition[]; result: boolean }
  | { not: ExplainedCondition; result: boolean }
  | (Leaf & { factResult: unknown; valueResult: unknown; result: boolean });

type LeafEval = (n: PartNode, c: FactContext) => [fact: unknown, value: unknown, result: boolean];

const leafEvals = new WeakMap<LeafNode, LeafEval>();

/** The leaf's compiled code, returning the fact and value it read beside its result. */
function leafEval(leaf: LeafNode): LeafEval {
  let f = leafEvals.get(leaf);
  if (!f) {
    const e = new Emitter();
    const { steps, a, b, test, negations } = leafCode(e, leaf, new Set());
    leafEvals.set(leaf, (f = e.build<LeafEval>(`(${steps.join(", ")}, [${a}, ${b}, ${"!".repeat(negations)}(${test})])`)));
  }
  return f;
}

/** Every node of a condition (parsed, or as written: parsed at /when) evaluated on one part. */
export function explainCondition(cond: Condition | ConditionNode, node: PartNode, ctx: FactContext): ExplainedCondition {
  const tree = isConditionNode(cond) ? cond : parseCondition(cond);
  return fold<ExplainedCondition>(tree, {
    all: (_, all) => ({ all, result: all.every((c) => c.result) }),
    any: (_, any) => ({ any, result: any.length === 0 || any.some((c) => c.result) }),
    not: (_, not) => ({ not, result: !not.result }),
    leaf: (leaf) => {
      const [factResult, valueResult, result] = leafEval(leaf)(node, ctx);
      return { ...(leaf.raw as unknown as Leaf), factResult, valueResult, result };
    },
  });
}

/** A fact's or value's text, cut to `max` characters. */
export const show = (v: unknown, max = 80) => {
  // JSON has no Infinity or NaN (it writes null): a fact such as userNamedTurns is Infinity when it never happened
  const s = typeof v === "number" && !Number.isFinite(v) ? String(v) : (JSON.stringify(v) ?? "undefined");
  return s.length > max ? `${s.slice(0, max - 3)}…` : s;
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
