// Loading rule files: YAML syntax → JSON Schema → semantic checks, each problem located at
// file:line:col. A rule with problems is left out; the rest still load.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { Ajv } from "ajv";
import picomatch from "picomatch";
import { ACTIONS, actionByName } from "../engine/actions/index.js";
import { parsePath } from "../engine/compile.js";
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

export interface OptionIssue {
  /** JSON pointer below the rule's `then`, e.g. /mode. */
  pointer: string;
  message: string;
  ruleId: "unknown-option" | "invalid-option";
  /** Locate the key (unknown option) rather than the value. */
  key: boolean;
}

/** Checks the options beside `action` in a rule's `then` against the action's option schema. */
export function actionOptionIssues(action: string, options: Record<string, unknown>): OptionIssue[] {
  const def = actionByName.get(action);
  if (!def) return [];
  let v = actionOptionValidators.get(action);
  if (!v) actionOptionValidators.set(action, (v = new Ajv({ allErrors: true, strict: false }).compile(def.options)));
  if (v(options)) return [];
  return (v.errors ?? []).map((e): OptionIssue => {
    const p = e.params as Record<string, any>;
    const name = e.instancePath.slice(1).replace(/\//g, ".");
    if (e.keyword === "additionalProperties" && !e.instancePath)
      return { pointer: `/${p.additionalProperty}`, message: `action "${action}" has no option "${p.additionalProperty}"${didYouMean(p.additionalProperty, Object.keys(def.options.properties))}`, ruleId: "unknown-option", key: true };
    if (e.keyword === "required" && !e.instancePath) return { pointer: "", message: `action "${action}" needs option "${p.missingProperty}"`, ruleId: "invalid-option", key: false };
    const what = e.keyword === "enum" ? `must be one of ${(p.allowedValues as unknown[]).map((x) => JSON.stringify(x)).join(", ")}` : e.keyword === "additionalProperties" ? `has no property "${p.additionalProperty}"` : e.message;
    return { pointer: e.instancePath, message: `action "${action}" option ${name} ${what}`, ruleId: "invalid-option", key: e.keyword === "additionalProperties" };
  });
}

const RULE_ID = /^[a-z][a-z0-9-]*$/;
const PHASE_RANK = Object.fromEntries(PHASES.map((p, i) => [p, i]));

// `then.by` is a condition inside action options, which the file schema leaves open: validate it
// against the same condition definition before the semantic checks read it.
let conditionValidator: ReturnType<Ajv["compile"]> | undefined;
function conditionProblems(by: unknown): { pointer: string; message: string; ruleId: string; key: boolean }[] {
  if (!conditionValidator) {
    const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
    ajv.addSchema(JSON.parse(readFileSync(packagePath("schemas", "rules.schema.json"), "utf8")), "rules.schema.json");
    conditionValidator = ajv.getSchema("rules.schema.json#/definitions/condition")!;
  }
  if (conditionValidator(by)) return [];
  const errors = conditionValidator.errors ?? [];
  const specific = errors.filter((e) => !["if", "oneOf", "anyOf"].includes(e.keyword));
  return (specific.length ? specific : errors).map((e) => {
    const p = e.params as Record<string, any>;
    if (e.keyword === "additionalProperties") {
      const known = Object.keys((e.parentSchema as any)?.properties ?? {});
      return { pointer: `${e.instancePath}/${p.additionalProperty}`, message: `unknown property "${p.additionalProperty}" in condition${didYouMean(p.additionalProperty, known)}`, ruleId: "schema/additionalProperties", key: true };
    }
    if (e.keyword === "required") return { pointer: e.instancePath, message: `condition is missing required property "${p.missingProperty}"`, ruleId: "schema/required", key: false };
    return { pointer: e.instancePath, message: `condition${e.instancePath ? ` ${e.instancePath}` : ""} ${e.message}`, ruleId: `schema/${e.keyword}`, key: false };
  });
}

/** A `value` of the form {fact, path?} reads another fact (json-rules-engine's fact reference). */
const factRef = (v: unknown): { fact: string; path?: unknown } | undefined =>
  v && typeof v === "object" && !Array.isArray(v) && typeof (v as { fact?: unknown }).fact === "string" ? (v as { fact: string }) : undefined;

function globError(g: string): string | undefined {
  try {
    // debug: picomatch otherwise turns a pattern it cannot compile into one that matches nothing
    picomatch.makeRe(g, { debug: true, dot: true });
    return undefined;
  } catch (e) {
    return (e as Error).message.replace(/^Invalid regular expression: \/.*\/: /s, "");
  }
}

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
  const op = leaf.operator.replace(/^(not:)+/, "");
  if (!resolveOperator(leaf.operator)) {
    const prefix = leaf.operator.slice(0, leaf.operator.length - op.length);
    report(`${pointer}/operator`, `unknown operator "${leaf.operator}"${didYouMean(op, OPERATOR_NAMES).replace(/"([^"]+)"\?\)$/, `"${prefix}$1"?)`)}`, "unknown-operator");
  }
  const v = leaf.value as any;
  const ref = factRef(v);
  if (ref) {
    checkFact(ref.fact, `${pointer}/value/fact`);
    if (ref.path !== undefined)
      try {
        parsePath(String(ref.path));
      } catch (e) {
        report(`${pointer}/value/path`, (e as Error).message, "invalid-path");
      }
  }
  if (op === "regex") {
    const err = typeof v === "string" ? regexError(v) : "value must be a string";
    if (err) report(`${pointer}/value`, `regex ${JSON.stringify(v)} is not accepted: ${err} (rules run on a linear-time engine: no backreferences or lookaround)`, "invalid-regex");
  }
  if (op === "glob") {
    for (const g of Array.isArray(v) ? v : ref ? [] : [v]) {
      const err = typeof g !== "string" ? "not a string" : g.length === 0 ? "empty" : g.length > 500 ? "longer than 500 characters" : globError(g);
      if (err) report(`${pointer}/value`, `glob ${JSON.stringify(g)} does not compile (${err}); it would match nothing`, "invalid-glob");
    }
  }
  if (leaf.path)
    try {
      parsePath(leaf.path);
    } catch (e) {
      report(`${pointer}/path`, (e as Error).message, "invalid-path");
    }
}

/** Leaves (and fact references) reading a dynamic or phase fact, by the pointer of their `fact`. */
function changingLeaves(cond: Condition, pointer: string): { pointer: string; fact: string }[] {
  if ("all" in cond) return cond.all.flatMap((c, i) => changingLeaves(c, `${pointer}/all/${i}`));
  if ("any" in cond) return cond.any.flatMap((c, i) => changingLeaves(c, `${pointer}/any/${i}`));
  if ("not" in cond) return changingLeaves(cond.not, `${pointer}/not`);
  const leaf = cond as Leaf;
  const changes = (f: string) => ["dynamic", "phase"].includes(factByName.get(f)?.kind ?? "");
  const ref = factRef(leaf.value);
  return [
    ...(changes(leaf.fact) ? [{ pointer: `${pointer}/fact`, fact: leaf.fact }] : []),
    ...(ref && changes(ref.fact) ? [{ pointer: `${pointer}/value/fact`, fact: ref.fact }] : []),
  ];
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
  for (const o of actionOptionIssues(action.name, options)) report(`/then${o.pointer}`, o.message, o.ruleId, o.key);
  // `by` must be a condition; one that is not even an object was reported by the option schema.
  const by = (options as { by?: unknown }).by;
  const byIsObject = by !== null && typeof by === "object" && !Array.isArray(by);
  const byProblems = byIsObject ? conditionProblems(by) : [];
  for (const p of byProblems) report(`/then/by${p.pointer}`, p.message, p.ruleId, p.key);
  const byOk = byIsObject && byProblems.length === 0;
  if (byOk) checkCondition(by as Condition, "/then/by", rule, report);
  if (rule.phase === "supersede" && action.name !== "supersede") report("/then/action", `phase "supersede" takes the supersede action, not "${action.name}"`, "action-phase");
  if (action.name === "supersede" && rule.phase !== "supersede") report("/phase", `the supersede action runs in phase "supersede"`, "action-phase");
  if (action.name === "protect" && rule.phase !== "protect") report("/phase", `the protect action runs in phase "protect"`, "action-phase");
  // The engine treats every protect-phase rule as protection, whatever its action says.
  if (rule.phase === "protect" && action.name !== "protect") report("/then/action", `phase "protect" takes the protect action, not "${action.name}" (a protect-phase rule protects the parts it matches)`, "action-phase");
  if (rule.phase === "supersede" && !rule.key) report("", `a supersede rule needs a "key" (what makes two parts the same thing)`, "missing-key", true);
  if (rule.key)
    try {
      compileKey(rule.key);
    } catch (e) {
      report("/key", (e as Error).message, "invalid-key");
    }
  if (rule.phase === "supersede") {
    const changing = [...changingLeaves(rule.when, "/when"), ...(byOk ? changingLeaves(by as Condition, "/then/by") : [])];
    for (const { pointer, fact } of changing)
      report(pointer, `fact "${fact}" changes over time; supersede rules may only read facts that do not (groups are built once per part)`, "fact-phase");
  }
  return problems;
}

export function loadRuleDoc(doc: SourceDoc, seen: Map<string, string>): LoadedRules {
  const problems = [...doc.problems];
  if (doc.data === undefined) return { rules: [], problems };
  // Rule ids that break the schema's propertyNames pattern are reported once each, at the id.
  const schema = schemaProblems("rules", doc).filter((p) => !(p.pointer === "/rules" && ["schema/pattern", "schema/propertyNames"].includes(p.ruleId)));
  const raw = (doc.data as any)?.rules;
  const rulesObj = (raw && typeof raw === "object" && !Array.isArray(raw) ? raw : {}) as Record<string, any>;
  const idProblems = Object.keys(rulesObj)
    .filter((id) => !RULE_ID.test(id))
    .map((id): Problem => ({ file: doc.file, ...doc.locate(`/rules/${id}`, true), severity: "error", message: `rule id "${id}" must be lower-case words joined by "-" (${RULE_ID.source})`, ruleId: "schema/propertyNames", pointer: `/rules/${id}` }));
  problems.push(...schema, ...idProblems);
  const badIds = new Set([...schema, ...idProblems].map((p) => p.pointer?.split("/")[2]).filter(Boolean));
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
