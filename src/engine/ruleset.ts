// A rule set compiled for the hot path: conditions → generated functions, keys → getters, each rule's
// `when` split into a cached static part and a per-call dynamic part.
import { leaves, type ConditionNode } from "../lang/condition.js";
import { type RuleAst, ruleAst } from "../rules/ast.js";
import type { Condition, Phase, RuleSpec } from "../rules/types.js";
import { PHASES } from "../rules/types.js";
import { actionByName, type ActionDef } from "./actions/index.js";
import { compileCondition, type CompiledCondition, type Predicate } from "./compile.js";
import type { FactKind } from "./facts.js";
import { compileKey, type CompiledKey } from "./key.js";
import { wakeOf, type WakeFn } from "./wake.js";

export interface CompiledRule {
  index: number;
  id: string;
  spec: RuleSpec;
  /** The rule's conditions and key as parsed (explain reads the same trees). */
  ast: RuleAst;
  phase: Phase;
  action: ActionDef;
  options: Record<string, unknown>;
  /** Leaves that read only static/config facts: evaluated once per part and cached. */
  staticWhen: CompiledCondition;
  /** The rest, evaluated on every call for the parts that passed staticWhen. */
  dynamicWhen?: Predicate;
  /** When dynamicWhen, false on a call, can hold again (wake.ts); undefined when it reads no growing fact. */
  wake?: WakeFn;
  by?: CompiledCondition;
  /**
   * The `when` reads the `superseded` fact: the rule's decisions follow a supersede, and record the
   * superseding part as theirs (Decision.by; a revert that removes it lifts them, reverted.ts).
   */
  followsSupersede: boolean;
  key?: CompiledKey;
  range?: { offset: string; limit: string };
  overlap?: { older: string; newer: string };
  params: Record<string, unknown>;
}

export interface CompiledRuleSet {
  rules: CompiledRule[];
  byPhase: Record<Phase, CompiledRule[]>;
}

const STATIC_KINDS: FactKind[] = ["static", "config"];
const isStatic = (c: CompiledCondition) => [...c.kinds].every((k) => STATIC_KINDS.includes(k));

/** Splits a top-level `all` into static and dynamic leaves; other shapes stay whole. */
function split(when: ConditionNode): { staticWhen: CompiledCondition; dynamicWhen?: Predicate; wake?: WakeFn } {
  const whole = compileCondition(when);
  if (isStatic(whole)) return { staticWhen: whole };
  const all = (children: ConditionNode[]): ConditionNode => ({ kind: "all", pointer: when.pointer, children });
  if (when.kind !== "all") return { staticWhen: compileCondition(all([])), dynamicWhen: whole.test, wake: wakeOf(when) };
  const stat: ConditionNode[] = [];
  const dyn: ConditionNode[] = [];
  for (const c of when.children) (isStatic(compileCondition(c)) ? stat : dyn).push(c);
  const staticWhen = compileCondition(all(stat));
  staticWhen.tools = whole.tools;
  return { staticWhen, dynamicWhen: compileCondition(all(dyn)).test, wake: wakeOf(all(dyn)) };
}

export function compileRuleSet(specs: RuleSpec[]): CompiledRuleSet {
  const byPhase = Object.fromEntries(PHASES.map((p) => [p, [] as CompiledRule[]])) as Record<Phase, CompiledRule[]>;
  const rules: CompiledRule[] = [];
  for (const spec of specs) {
    const action = actionByName.get(spec.then.action);
    if (!action) throw new Error(`rule ${spec.id}: unknown action "${spec.then.action}"`);
    const { action: _a, ...options } = spec.then;
    const { by: _by, range, overlap, ...rest } = options as { by?: Condition; range?: { offset: string; limit: string }; overlap?: { older: string; newer: string } };
    const ast = ruleAst(spec);
    const rule: CompiledRule = {
      index: rules.length,
      id: spec.id,
      spec,
      ast,
      phase: spec.phase,
      action,
      options: rest,
      ...split(ast.when),
      by: ast.by ? compileCondition(ast.by) : undefined,
      followsSupersede: leaves(ast.when).some((l) => l.fact?.fact === "superseded"),
      key: ast.key ? compileKey(ast.key) : undefined,
      range,
      overlap,
      params: spec.params ?? {},
    };
    if (rule.phase === "supersede" && (rule.dynamicWhen || (rule.by && !isStatic(rule.by))))
      throw new Error(`rule ${spec.id}: supersede rules may only read static facts (their groups are built once per part)`);
    if (rule.phase === "supersede" && !rule.key) throw new Error(`rule ${spec.id}: a supersede rule needs a key`);
    rules.push(rule);
    byPhase[rule.phase].push(rule);
  }
  return { rules, byPhase };
}
