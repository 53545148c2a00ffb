// A rule's parsed language: its conditions and key as one typed tree each (src/lang), read by the
// loader's checks, the compiler, explain and lint. Parsed once per condition object and template
// (copies of a rule made by presets share them), so every reader sees the same nodes.
import { type ConditionNode, parseCondition } from "../lang/condition.js";
import { type KeyTemplate, parseKey } from "../lang/key.js";
import type { RuleSpec } from "./types.js";

export interface RuleAst {
  when: ConditionNode;
  /** `then.by`, when the rule has one. */
  by?: ConditionNode;
  key?: KeyTemplate;
}

export function ruleAst(rule: Pick<RuleSpec, "when" | "then" | "key">): RuleAst {
  const by = (rule.then as { by?: unknown } | undefined)?.by;
  return {
    when: parseCondition(rule.when, "/when"),
    ...(by ? { by: parseCondition(by, "/then/by") } : {}),
    ...(typeof rule.key === "string" && rule.key ? { key: parseKey(rule.key) } : {}),
  };
}
