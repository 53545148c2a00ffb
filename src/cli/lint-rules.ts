// Advice for `acp rules lint` on rules that load but cannot do (all of) what they say: a test
// that is always false, a key that never has a value, an action the engine will not apply to
// the parts the rule targets. Warnings only: the plugin runs these rules as they are.
import { actionDecl } from "../lang/actions.js";
import { applyOperator } from "../lang/operators.js";
import { allowedValues, type ConditionNode, conjuncts, fold, type LeafNode, leaves } from "../lang/condition.js";
import type { KeyTemplate } from "../lang/key.js";
import { ruleAst } from "../rules/ast.js";
import { isCondition } from "../rules/load.js";
import { didYouMean, type Problem } from "../rules/problems.js";
import type { SourceDoc } from "../rules/source.js";
import type { RuleSpec } from "../rules/types.js";

/** Values OpenCode produces (the Part, ToolState and message unions of @opencode-ai/sdk). */
const KNOWN_VALUES: Record<string, string[]> = {
  partType: ["text", "reasoning", "file", "tool", "step-start", "step-finish", "snapshot", "patch", "agent", "retry", "compaction", "subtask"],
  role: ["user", "assistant"],
  status: ["pending", "running", "completed", "error"],
};

const NUMERIC = ["lessThan", "lessThanInclusive", "greaterThan", "greaterThanInclusive"];
const STRING_FILTERS = ["path", "squash", "head", "lower"];

/** True when the leaf can only hold for a fact that has a value (so it implies the fact's part types). */
function needsValue(leaf: LeafNode): boolean {
  if (leaf.negations % 2 === 1) return false;
  const { op } = leaf;
  if (op === "equal") return leaf.value !== null && leaf.value !== undefined && !leaf.ref;
  if (op === "in") return Array.isArray(leaf.value) ? !leaf.value.includes(null) : Boolean(leaf.ref);
  return ["regex", "glob", "contains", "doesNotContain", ...NUMERIC].includes(op ?? "");
}

/** What a condition implies about one dimension: all = intersection, any = union, not = no limit. */
function limit(cond: ConditionNode, ofLeaf: (leaf: LeafNode) => Set<string> | undefined): Set<string> | undefined {
  const combine = (sets: (Set<string> | undefined)[], all: boolean) => {
    const known = sets.filter((s): s is Set<string> => s !== undefined);
    if (all) return known.length ? known.reduce((a, b) => new Set([...a].filter((x) => b.has(x)))) : undefined;
    return known.length === sets.length && sets.length ? new Set(known.flatMap((s) => [...s])) : undefined;
  };
  return fold<Set<string> | undefined>(cond, { all: (_, c) => combine(c, true), any: (_, c) => combine(c, false), not: () => undefined, leaf: ofLeaf, invalid: () => undefined });
}

/** Part types a condition can match: from partType, and from facts that exist only on some parts. */
function partTypes(cond: ConditionNode, explicitOnly = false): Set<string> | undefined {
  return limit(cond, (leaf) => {
    const named = allowedValues(leaf, "partType");
    if (named || explicitOnly) return named;
    const only = leaf.fact?.def?.parts;
    if (!only || leaf.fact?.fact === "text" || (leaf.fact?.fact === "input" && !leaf.path?.text) || !needsValue(leaf)) return undefined;
    return new Set(only);
  });
}

/** Does the condition require a part older than the current turn (ageTurns ≥ 1, afterLastUser false)? */
function olderTurnsOnly(cond: ConditionNode, params: Record<string, unknown>): boolean {
  return conjuncts(cond).some((leaf) => {
    const ref = leaf.ref;
    const v = ref?.fact === "params" && ref.path?.text ? params[ref.path.text.replace(/^\$\./, "")] : leaf.value;
    const fact = leaf.fact?.fact;
    if (fact === "ageTurns" && typeof v === "number") return (leaf.operator === "greaterThanInclusive" && v >= 1) || (leaf.operator === "greaterThan" && v >= 0);
    return fact === "afterLastUser" && ((leaf.operator === "equal" && v === false) || (leaf.operator === "notEqual" && v === true));
  });
}

const list = (s: Set<string>) => [...s].join(", ");

export function adviseRule(doc: SourceDoc, rule: RuleSpec): Problem[] {
  const problems: Problem[] = [];
  const base = `/rules/${rule.id}`;
  const warn = (ptr: string, message: string, ruleId: string, key = false) =>
    problems.push({ file: doc.file, ...doc.locate(`${base}${ptr}`, key), severity: "warning", message, ruleId, pointer: `${base}${ptr}` });
  // Advice also reads rules with semantic errors; a `by` that is not a condition was reported.
  const ast = ruleAst(rule);
  const when = ast.when;
  const by = isCondition(rule.then.by) ? ast.by : undefined;
  for (const leaf of [...leaves(when), ...(by ? leaves(by) : [])]) adviseLeaf(leaf, rule, warn);

  const action = rule.then.action;
  const matched = partTypes(when);
  const targets = actionDecl.get(action)?.parts;
  if (matched && matched.size > 0 && targets && !targets.some((t) => matched.has(t)))
    warn("/then/action", `action "${action}" changes only ${targets.join(" and ")} parts, but this rule matches only ${list(matched)} parts: it never applies`, "action-target");

  // The engine's invariants (src/engine/in-full.ts `untouchable`): rules cannot switch them off.
  const conj = conjuncts(when);
  const userLeaf = conj.find((leaf) => allowedValues(leaf, "role")?.has("user"));
  const hostText = conj.some((leaf) => leaf.fact?.fact === "synthetic" && leaf.operator === "equal" && leaf.value === true);
  if (userLeaf && (!matched || matched.has("text")) && !hostText && ["truncate", "distill", "drop"].includes(action))
    warn(`${userLeaf.pointer}/value`, `the engine never changes text the user typed (only collapse-code-blocks may), so "${action}" will not apply to user text`, "untouchable");
  const reasoning = partTypes(when, true);
  const reasoningLeaf = conj.find((leaf) => allowedValues(leaf, "partType")?.has("reasoning"));
  if (reasoning?.has("reasoning") && ["truncate", "distill", "drop", "collapse-code-blocks"].includes(action) && !olderTurnsOnly(when, rule.params ?? {}))
    warn(reasoningLeaf ? `${reasoningLeaf.pointer}/value` : "/when", `the engine never changes reasoning of the current turn, so "${action}" applies only to earlier turns (add { fact: ageTurns, operator: greaterThanInclusive, value: 1 })`, "untouchable");

  // reasoning the host leaves out once its turn is over: a prune there changes nothing the provider
  // receives and saves nothing (it is free: the engine applies it at once, call.ts unseen)
  const hostDropsFalse = conj.some((leaf) => leaf.fact?.fact === "hostDrops" && ((leaf.operator === "equal" && leaf.value === false) || (leaf.operator === "notEqual" && leaf.value === true)));
  if (reasoning?.has("reasoning") && ["truncate", "distill", "drop"].includes(action) && !hostDropsFalse)
    warn(reasoningLeaf ? `${reasoningLeaf.pointer}/value` : "/when", `reasoning the host drops itself once its turn is over (signed: Anthropic's thinking, OpenAI's and Google's reasoning) is not sent to the provider then, so "${action}" saves nothing on it (add { fact: hostDrops, operator: equal, value: false } for the reasoning the provider gets back and bills)`, "host-drops");

  if (rule.commit !== undefined)
    warn("/commit", `"commit" is ignored: a change to the already-sent prefix applies where the cache breaks anyway (dropped reasoning, an expired cache) or when the preset's batch repays the re-cache (docs/rules.md, "Commit"); remove it`, "deprecated-commit", true);
  if (rule.phase === "manual") warn("/phase", `phase "manual" holds the model's own context_prune requests; rules in it never run`, "manual-phase");
  if (rule.key && rule.phase !== "supersede") warn("/key", `"key" is used only by supersede rules; it has no effect in phase "${rule.phase}"`, "unused-key", true);
  if (ast.key && rule.phase === "supersede") adviseKey(ast.key, keyParts(when, by), warn);
  return problems;
}

/** Parts that get a key: `when` members and `by` parts (by defaults to when). */
function keyParts(when: ConditionNode, by: ConditionNode | undefined): Set<string> | undefined {
  const a = partTypes(when);
  const b = by ? partTypes(by) : a;
  return a && b ? new Set([...a, ...b]) : undefined;
}

type Warn = (ptr: string, message: string, ruleId: string, key?: boolean) => void;

function adviseKey(key: KeyTemplate, parts: Set<string> | undefined, warn: Warn) {
  for (const p of key.segments) {
    if (typeof p === "string" || p.optional) continue; // optional: an empty value is fine
    const { fact, def, path, filters } = p;
    if (!def) continue; // reported as invalid-key
    const why = (reason: string) => warn("/key", `key placeholder "${p.source}" never has a value (${reason}), so no part gets a key and the rule never applies`, "key-undefined");
    const only = fact === "input" && path.length === 0 ? undefined : def.parts;
    if (path.length && def.type !== "object" && def.type !== "array") why(`fact "${fact}" is a ${def.type}, not an object`);
    else if (!path.length && STRING_FILTERS.includes(filters[0]) && def.type !== "string") why(`filter "${filters[0]}" takes a string and fact "${fact}" is ${def.type === "object" || def.type === "array" ? "an" : "a"} ${def.type}`);
    else if (only && parts && parts.size > 0 && !only.some((t) => parts.has(t))) why(`"${fact}" is set only on ${only.join(" and ")} parts and this rule matches ${list(parts)} parts`);
  }
}

function adviseLeaf(leaf: LeafNode, rule: RuleSpec, warn: Warn) {
  const { pointer, ref } = leaf;
  const fact = leaf.fact?.fact;
  const path = leaf.path?.text;
  // params: a name the rule does not declare can never be set (presets override declared ones only).
  const params = rule.params ?? {};
  for (const [p, where] of [
    [fact === "params" ? path : undefined, `${pointer}/path`],
    [ref?.fact === "params" ? ref.path?.text : undefined, `${pointer}/value/path`],
  ] as const) {
    const name = typeof p === "string" ? p.replace(/^\$\.?/, "").split(/[.[]/)[0] : undefined;
    if (name && !(name in params)) warn(where, `param "${name}" is not declared in this rule's params${didYouMean(name, Object.keys(params))}, so it is always undefined`, "unknown-param");
  }
  const def = leaf.fact?.def;
  if (!def || fact === undefined || leaf.op === undefined) return;
  const op = leaf.op;
  const negated = leaf.negations % 2 === 1;
  const dead = (at: string, reason: string, result: boolean) => warn(`${pointer}/${at}`, `${reason}: this test is always ${result !== negated}`, "dead-condition");
  if (path && def.type !== "object" && def.type !== "array") {
    if (leaf.opDef && !ref) dead("path", `fact "${fact}" is a ${def.type}, so path "${path}" reads nothing`, applyOperator(leaf.opDef, undefined, leaf.value));
    return;
  }
  const type = path ? undefined : def.type;
  const refType = ref ? (ref.path?.text ? undefined : ref.def?.type) : undefined;
  const an = (t: string) => `${/^[aeiou]/.test(t) ? "an" : "a"} ${t}`;
  if (type && ["contains", "doesNotContain"].includes(op) && type !== "array") dead("operator", `operator "${op}" needs an array fact, but "${fact}" is ${an(type)}`, false);
  else if (type && NUMERIC.includes(op) && type !== "number") dead("operator", `operator "${op}" compares numbers, but "${fact}" is ${an(type)}`, false);
  else if (type && ["regex", "glob"].includes(op) && type !== "string") dead("operator", `operator "${op}" needs a string fact, but "${fact}" is ${an(type)}`, false);
  else if (["in", "notIn"].includes(op) && (ref ? refType !== undefined && refType !== "array" : !Array.isArray(leaf.value))) dead("value", `operator "${op}" needs a list value`, false);
  else if (type && ["equal", "notEqual"].includes(op) && ["string", "number", "boolean"].includes(type) && !ref && ["string", "number", "boolean"].includes(typeof leaf.value) && typeof leaf.value !== type)
    dead("value", `"${fact}" is ${an(type)}, so it never equals the ${typeof leaf.value} ${JSON.stringify(leaf.value)}`, op === "notEqual");

  const known = KNOWN_VALUES[fact];
  if (known && !path && ["equal", "notEqual", "in", "notIn"].includes(op)) {
    const values = Array.isArray(leaf.value) ? leaf.value.map((x, i) => [x, `${pointer}/value/${i}`] as const) : [[leaf.value, `${pointer}/value`] as const];
    for (const [x, where] of values)
      if (typeof x === "string" && !known.includes(x)) warn(where, `${fact} "${x}" never occurs${didYouMean(x, known) || ` (known: ${known.join(", ")})`}`, "unknown-value");
  }
}
