// Loading rule files: YAML syntax → JSON Schema → semantic checks, each problem located at
// file:line:col. A rule with problems is left out; the rest still load.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { Ajv } from "ajv";
import picomatch from "picomatch";
import { ACTIONS, actionByName } from "../engine/actions/index.js";
import { compileCondition, parsePath } from "../engine/compile.js";
import { FACT_NAMES, factByName } from "../engine/facts.js";
import { compileKey } from "../engine/key.js";
import { OPERATOR_NAMES, resolveOperator } from "../engine/operators.js";
import { regexError } from "../engine/safe-regex.js";
import { packagePath } from "./paths.js";
import { didYouMean, type Problem } from "./problems.js";
import { schemaProblems } from "./schemas.js";
import { parseYamlSource, type SourceDoc } from "./source.js";
import { PHASES, type Condition, type Leaf, type RuleSpec } from "./types.js";

export interface LoadedRules {
  rules: RuleSpec[];
  problems: Problem[];
}

export const BUILTIN_RULES_DIR = packagePath("rules");

/** Expands files and folders (their *.yaml / *.yml, sorted) into file paths. */
export function ruleFilesIn(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch {
      out.push(p); // reported as unreadable by loadRuleFile
      continue;
    }
    if (st.isDirectory())
      out.push(...readdirSync(p).filter((f) => [".yaml", ".yml"].includes(extname(f))).sort().map((f) => join(p, f)));
    else out.push(p);
  }
  return out;
}

const actionOptionValidators = new Map<string, ReturnType<Ajv["compile"]>>();
function optionValidator(action: string) {
  let v = actionOptionValidators.get(action);
  if (!v) {
    const def = actionByName.get(action)!;
    v = new Ajv({ allErrors: true, strict: false }).compile(def.options);
    actionOptionValidators.set(action, v);
  }
  return v;
}

const PHASE_RANK = Object.fromEntries(PHASES.map((p, i) => [p, i]));

function checkCondition(cond: Condition, pointer: string, rule: RuleSpec, report: (ptr: string, msg: string, id: string, key?: boolean) => void) {
  if ("all" in cond) return cond.all.forEach((c, i) => checkCondition(c, `${pointer}/all/${i}`, rule, report));
  if ("any" in cond) return cond.any.forEach((c, i) => checkCondition(c, `${pointer}/any/${i}`, rule, report));
  if ("not" in cond) return checkCondition(cond.not, `${pointer}/not`, rule, report);
  const leaf = cond as Leaf;
  const checkFact = (fact: string, ptr: string) => {
    const def = factByName.get(fact);
    if (!def) return report(ptr, `unknown fact "${fact}"${didYouMean(fact, FACT_NAMES)}`, "unknown-fact");
    if (def.availableFrom && PHASE_RANK[rule.phase] < PHASE_RANK[def.availableFrom])
      report(ptr, `fact "${fact}" has no value in phase "${rule.phase}" (available from "${def.availableFrom}")`, "fact-phase");
  };
  checkFact(leaf.fact, `${pointer}/fact`);
  if (!resolveOperator(leaf.operator)) report(`${pointer}/operator`, `unknown operator "${leaf.operator}"${didYouMean(leaf.operator.replace(/^not:/, ""), OPERATOR_NAMES)}`, "unknown-operator");
  const v = leaf.value as any;
  if (v && typeof v === "object" && !Array.isArray(v) && "fact" in v) checkFact(v.fact, `${pointer}/value/fact`);
  const op = leaf.operator.replace(/^not:/, "");
  if (op === "regex") {
    const err = typeof v === "string" ? regexError(v) : "value must be a string";
    if (err) report(`${pointer}/value`, `regex ${JSON.stringify(v)} is not accepted: ${err} (rules run on a linear-time engine: no backreferences or lookaround)`, "invalid-regex");
  }
  if (op === "glob") {
    for (const g of Array.isArray(v) ? v : typeof v === "string" ? [v] : []) {
      if (typeof g !== "string" || g.length > 500) report(`${pointer}/value`, `glob ${JSON.stringify(g)} is not a usable pattern`, "invalid-glob");
      else
        try {
          picomatch.makeRe(g);
        } catch (e) {
          report(`${pointer}/value`, `glob ${JSON.stringify(g)} does not compile: ${(e as Error).message}`, "invalid-glob");
        }
    }
  }
  if (leaf.path)
    try {
      parsePath(leaf.path);
    } catch (e) {
      report(`${pointer}/path`, (e as Error).message, "invalid-path");
    }
}

/** Semantic checks of one validated rule; returns its problems. */
function checkRule(doc: SourceDoc, rule: RuleSpec): Problem[] {
  const problems: Problem[] = [];
  const base = `/rules/${rule.id}`;
  const report = (ptr: string, message: string, ruleId: string, key = false) =>
    problems.push({ file: doc.file, ...doc.locate(`${base}${ptr}`, key), severity: "error", message, ruleId, pointer: `${base}${ptr}` });
  checkCondition(rule.when, "/when", rule, report);
  const action = actionByName.get(rule.then.action);
  if (!action) {
    report("/then/action", `unknown action "${rule.then.action}"${didYouMean(rule.then.action, ACTIONS.map((a) => a.name))}`, "unknown-action");
    return problems;
  }
  const { action: _a, ...options } = rule.then;
  const v = optionValidator(action.name);
  if (!v(options))
    for (const e of v.errors ?? []) {
      if (e.keyword === "additionalProperties") {
        const prop = (e.params as any).additionalProperty;
        report(`/then/${prop}`, `action "${action.name}" has no option "${prop}"${didYouMean(prop, Object.keys(action.options.properties))}`, "unknown-option", true);
      } else report(`/then${e.instancePath}`, `action "${action.name}" option ${e.instancePath.slice(1) || ""} ${e.message}`.replace(/\s+/g, " "), "invalid-option");
    }
  if ((options as any).by) checkCondition((options as any).by, "/then/by", rule, report);
  if (rule.phase === "supersede" && action.name !== "supersede") report("/then/action", `phase "supersede" takes the supersede action, not "${action.name}"`, "action-phase");
  if (action.name === "supersede" && rule.phase !== "supersede") report("/phase", `the supersede action runs in phase "supersede"`, "action-phase");
  if (action.name === "protect" && rule.phase !== "protect") report("/phase", `the protect action runs in phase "protect"`, "action-phase");
  if (rule.phase === "supersede" && !rule.key) report("", `a supersede rule needs a "key" (what makes two parts the same thing)`, "missing-key");
  if (rule.key)
    try {
      compileKey(rule.key);
    } catch (e) {
      report("/key", (e as Error).message, "invalid-key");
    }
  if (rule.phase === "supersede") {
    try {
      const by = (options as { by?: Condition }).by;
      const kinds = [...compileCondition(rule.when).kinds, ...(by ? compileCondition(by).kinds : [])];
      if (kinds.some((k) => k === "dynamic" || k === "phase")) report("/when", "supersede rules may only read facts that do not change over time (groups are built once per part)", "fact-phase");
    } catch {
      // unknown facts/operators were reported above
    }
  }
  return problems;
}

export function loadRuleDoc(doc: SourceDoc, seen: Map<string, string>): LoadedRules {
  const problems = [...doc.problems];
  if (doc.data === undefined) return { rules: [], problems };
  const schema = schemaProblems("rules", doc);
  problems.push(...schema);
  const rulesObj = ((doc.data as any)?.rules ?? {}) as Record<string, any>;
  const badIds = new Set(schema.map((p) => p.pointer?.split("/")[2]).filter(Boolean));
  const rules: RuleSpec[] = [];
  for (const [id, raw] of Object.entries(rulesObj)) {
    const where = doc.locate(`/rules/${id}`, true);
    const prev = seen.get(id);
    if (prev) {
      problems.push({ file: doc.file, ...where, severity: "error", message: `rule "${id}" is already defined at ${prev}`, ruleId: "duplicate-rule", pointer: `/rules/${id}` });
      continue;
    }
    seen.set(id, `${doc.file}:${where.line}:${where.col}`);
    if (badIds.has(id) || !raw || typeof raw !== "object") continue;
    const rule: RuleSpec = { id, params: {}, ...raw, source: { file: doc.file, ...where } };
    const ruleProblems = checkRule(doc, rule);
    problems.push(...ruleProblems);
    if (!ruleProblems.some((p) => p.severity === "error")) rules.push(rule);
  }
  return { rules, problems };
}

export function readSource(file: string, parse: (file: string, text: string) => SourceDoc): SourceDoc {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const msg = code === "ENOENT" ? "file not found" : code === "EISDIR" ? "is a folder, not a file" : `cannot read file (${code ?? (e as Error).message})`;
    return { file, data: undefined, problems: [{ file, line: 1, col: 1, severity: "error", message: msg, ruleId: "unreadable" }], locate: () => ({ line: 1, col: 1 }) };
  }
  return parse(file, text);
}

export function loadRuleFiles(paths: string[]): LoadedRules {
  const seen = new Map<string, string>();
  const out: LoadedRules = { rules: [], problems: [] };
  for (const file of ruleFilesIn(paths)) {
    const r = loadRuleDoc(readSource(file, parseYamlSource), seen);
    out.rules.push(...r.rules);
    out.problems.push(...r.problems);
  }
  return out;
}
