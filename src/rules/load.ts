// Loading rule files: YAML syntax → JSON Schema → semantic checks, each problem located at
// file:line:col. A rule with problems is left out; the rest still load.
import { readdirSync, statSync } from "node:fs";
import { extname, join, resolve } from "node:path";
import { Ajv } from "ajv";
import picomatch from "picomatch";
import { ACTION_NAMES, actionDecl } from "../lang/actions.js";
import { type ConditionNode, type FactRead, type LeafNode, leaves } from "../lang/condition.js";
import { FACT_NAMES } from "../lang/facts.js";
import { OPERATOR_NAMES } from "../lang/operators.js";
import { regexError } from "../lang/safe-regex.js";
import { ruleAst } from "./ast.js";
import { packagePath } from "./paths.js";
import { didYouMean, type Problem } from "./problems.js";
import { conditionValidator, schemaProblems } from "./schemas.js";
import { MAX_FILE_BYTES, MAX_TOTAL_BYTES } from "./read.js";
import { failedSource, parseYamlSource, readSource, type SourceDoc } from "./source.js";
import { PHASES, type RuleSpec } from "./types.js";

export interface LoadedRules {
  rules: RuleSpec[];
  problems: Problem[];
}

export const BUILTIN_RULES_DIR = packagePath("rules");

/** Rule files read from one folder; a repository may hold anything, and start-up must stay quick. */
export const MAX_FOLDER_FILES = 200;

/** Rule tests (`acp rules test`) may sit beside rules; they are sessions, not rule files. */
export const isRuleTest = (file: string) => /\.session(\.fixed)?\.ya?ml$/.test(file);

/**
 * Expands files and folders (their *.yaml / *.yml, sorted, without rule tests) into file paths.
 * A folder that cannot be listed is reported into `problems`; a path that cannot be read is left
 * for readSource.
 */
export function ruleFilesIn(paths: string[], problems?: Problem[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch {
      out.push(p); // reported as unreadable by readSource
      continue;
    }
    if (!st.isDirectory()) {
      out.push(p);
      continue;
    }
    try {
      const files = readdirSync(p).filter((f) => [".yaml", ".yml"].includes(extname(f)) && !isRuleTest(f)).sort();
      if (files.length > MAX_FOLDER_FILES)
        problems?.push({ file: p, line: 1, col: 1, severity: "error", message: `holds ${files.length} rule files; only the first ${MAX_FOLDER_FILES} are read`, ruleId: "unreadable" });
      out.push(...files.slice(0, MAX_FOLDER_FILES).map((f) => join(p, f)));
    } catch (e) {
      problems?.push({ file: p, line: 1, col: 1, severity: "error", message: `cannot list folder (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, ruleId: "unreadable" });
    }
  }
  // A file named twice (a ruleFiles entry for a rules folder already read) is read once.
  return [...new Set(out.map((f) => resolve(f)))];
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
  const def = actionDecl.get(action);
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
function conditionProblems(by: unknown): { pointer: string; message: string; ruleId: string; key: boolean }[] {
  const validate = conditionValidator();
  if (validate(by)) return [];
  const errors = validate.errors ?? [];
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

/** Whether `v` is a condition the schema accepts (rules that pass the file schema may still carry a bad `then.by`). */
export const isCondition = (v: unknown): boolean => isObject(v) && conditionProblems(v).length === 0;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function globError(g: string): string | undefined {
  try {
    // debug: picomatch otherwise turns a pattern it cannot compile into one that matches nothing
    picomatch.makeRe(g, { debug: true, dot: true });
    return undefined;
  } catch (e) {
    return (e as Error).message.replace(/^Invalid regular expression: \/.*\/: /s, "");
  }
}

type Report = (ptr: string, msg: string, id: string, key?: boolean) => void;

/**
 * Semantic checks of a condition. It may have failed the schema: whatever has the right shape is
 * still checked (a node of the wrong shape was reported by the schema), so one run shows every
 * problem. `phase` is undefined when the rule's phase is not one.
 */
function checkCondition(cond: ConditionNode, phase: string | undefined, report: Report) {
  for (const leaf of leaves(cond)) checkLeaf(leaf, phase, report);
}

function checkLeaf(leaf: LeafNode, phase: string | undefined, report: Report) {
  const { pointer } = leaf;
  const checkFact = (read: FactRead | undefined, ptr: string) => {
    if (!read) return;
    const { fact, def } = read;
    if (!def) return report(ptr, `unknown fact "${fact}"${didYouMean(fact, FACT_NAMES)}`, "unknown-fact");
    if (phase && def.availableFrom && PHASE_RANK[phase] < PHASE_RANK[def.availableFrom])
      report(ptr, `fact "${fact}" has no value in phase "${phase}" (available from "${def.availableFrom}")`, "fact-phase");
  };
  checkFact(leaf.fact, `${pointer}/fact`);
  const { operator, op } = leaf;
  if (operator !== undefined && op !== undefined && !leaf.opDef) {
    const prefix = operator.slice(0, operator.length - op.length);
    report(`${pointer}/operator`, `unknown operator "${operator}"${didYouMean(op, OPERATOR_NAMES).replace(/"([^"]+)"\?\)$/, `"${prefix}$1"?)`)}`, "unknown-operator");
  }
  const { value: v, ref } = leaf;
  if (ref) {
    checkFact(ref, `${pointer}/value/fact`);
    if (ref.path?.error) report(`${pointer}/value/path`, ref.path.error, "invalid-path");
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
  if (leaf.path?.error) report(`${pointer}/path`, leaf.path.error, "invalid-path");
}

/** Leaves (and fact references) reading a dynamic or phase fact, by the pointer of their `fact`. */
function changingLeaves(cond: ConditionNode): { pointer: string; fact: string }[] {
  const changes = (read: FactRead | undefined): read is FactRead => read?.def?.kind === "dynamic" || read?.def?.kind === "phase";
  return leaves(cond).flatMap((leaf) => [
    ...(changes(leaf.fact) ? [{ pointer: `${leaf.pointer}/fact`, fact: leaf.fact.fact }] : []),
    ...(changes(leaf.ref) ? [{ pointer: `${leaf.pointer}/value/fact`, fact: leaf.ref.fact }] : []),
  ]);
}

/**
 * Semantic checks of one rule as written. The rule may have failed the schema: each check reads
 * only fields of the right shape, and checks that need the phase or the action skip a bad one.
 */
function checkRule(doc: SourceDoc, id: string, rule: Record<string, unknown>): Problem[] {
  const problems: Problem[] = [];
  const base = `/rules/${id}`;
  const report: Report = (ptr, message, ruleId, key = false) =>
    problems.push({ file: doc.file, ...doc.locate(`${base}${ptr}`, key), severity: "error", message, ruleId, pointer: `${base}${ptr}` });
  const phase = typeof rule.phase === "string" && rule.phase in PHASE_RANK ? rule.phase : undefined;
  const ast = ruleAst(rule as Pick<RuleSpec, "when" | "then" | "key">);
  checkCondition(ast.when, phase, report);
  const then = isObject(rule.then) ? rule.then : undefined;
  const actionName = typeof then?.action === "string" ? then.action : undefined;
  const action = actionName === undefined ? undefined : actionDecl.get(actionName);
  if (actionName !== undefined && !action) report("/then/action", `unknown action "${actionName}"${didYouMean(actionName, ACTION_NAMES)}`, "unknown-action");
  let byOk = false;
  const by = then?.by;
  if (action && then) {
    const { action: _a, ...options } = then;
    for (const o of actionOptionIssues(action.name, options)) report(`/then${o.pointer}`, o.message, o.ruleId, o.key);
    // `by` must be a condition; one that is not even an object was reported by the option schema.
    const byProblems = isObject(by) ? conditionProblems(by) : [];
    for (const p of byProblems) report(`/then/by${p.pointer}`, p.message, p.ruleId, p.key);
    byOk = isObject(by) && byProblems.length === 0;
    if (byOk && ast.by) checkCondition(ast.by, phase, report);
  }
  if (phase && action) {
    if (phase === "supersede" && action.name !== "supersede") report("/then/action", `phase "supersede" takes the supersede action, not "${action.name}"`, "action-phase");
    if (action.name === "supersede" && phase !== "supersede") report("/phase", `the supersede action runs in phase "supersede"`, "action-phase");
    if (action.name === "protect" && phase !== "protect") report("/phase", `the protect action runs in phase "protect"`, "action-phase");
    // The engine treats every protect-phase rule as protection, whatever its action says.
    if (phase === "protect" && action.name !== "protect") report("/then/action", `phase "protect" takes the protect action, not "${action.name}" (a protect-phase rule protects the parts it matches)`, "action-phase");
  }
  if (phase === "supersede" && rule.key === undefined) report("", `a supersede rule needs a "key" (what makes two parts the same thing)`, "missing-key", true);
  const [keyError] = ast.key?.errors ?? [];
  if (keyError) report("/key", keyError, "invalid-key");
  if (phase === "supersede") {
    const changing = [...changingLeaves(ast.when), ...(byOk && ast.by ? changingLeaves(ast.by) : [])];
    for (const { pointer, fact } of changing)
      report(pointer, `fact "${fact}" changes over time; supersede rules may only read facts that do not (groups are built once per part)`, "fact-phase");
  }
  return problems;
}

export interface LoadedRuleDoc extends LoadedRules {
  /** Rules that pass the schema, loaded or not (semantic errors, duplicates): lint's advice reads them. */
  checked: RuleSpec[];
}

/**
 * Checks every rule of a parsed rule file through schema and semantics, and loads those without
 * errors. `seen` maps every rule id defined so far (loaded or not) to where it was defined.
 */
export function loadRuleDoc(doc: SourceDoc, seen: Map<string, string>): LoadedRuleDoc {
  const problems = [...doc.problems];
  if (doc.data === undefined) return { rules: [], problems, checked: [] };
  // Rule ids that break the schema's propertyNames pattern are reported once each, at the id.
  const schema = schemaProblems("rules", doc).filter((p) => !(p.pointer === "/rules" && ["schema/pattern", "schema/propertyNames"].includes(p.ruleId)));
  const raw = (doc.data as any)?.rules;
  const rulesObj = (isObject(raw) ? raw : {}) as Record<string, unknown>;
  const idProblems = Object.keys(rulesObj)
    .filter((id) => !RULE_ID.test(id))
    .map((id): Problem => ({ file: doc.file, ...doc.locate(`/rules/${id}`, true), severity: "error", message: `rule id "${id}" must be lower-case words joined by "-" (${RULE_ID.source})`, ruleId: "schema/propertyNames", pointer: `/rules/${id}` }));
  problems.push(...schema, ...idProblems);
  const badIds = new Set([...schema, ...idProblems].map((p) => p.pointer?.split("/")[2]).filter(Boolean));
  const rules: RuleSpec[] = [];
  const checked: RuleSpec[] = [];
  for (const [id, raw] of Object.entries(rulesObj)) {
    const where = doc.locate(`/rules/${id}`, true);
    const prev = seen.get(id);
    if (prev) problems.push({ file: doc.file, ...where, severity: "error", message: `rule "${id}" is already defined at ${prev}`, ruleId: "duplicate-rule", pointer: `/rules/${id}` });
    else seen.set(id, `${doc.file}:${where.line}:${where.col}`);
    if (!isObject(raw)) continue; // the schema said what it should be
    const ruleProblems = checkRule(doc, id, raw);
    problems.push(...ruleProblems);
    if (badIds.has(id)) continue; // checked as far as it is readable; never loaded
    const rule = { id, params: {}, ...raw, source: { file: doc.file, ...where } } as RuleSpec;
    checked.push(rule);
    if (!prev && !ruleProblems.some((p) => p.severity === "error")) rules.push(rule);
  }
  // a path the schema's pattern refuses is reported once, by the check that says what to write instead
  const badPaths = new Set(problems.filter((p) => p.ruleId === "invalid-path").map((p) => p.pointer));
  return { rules, problems: badPaths.size > 0 ? problems.filter((p) => !(p.ruleId === "schema/pattern" && badPaths.has(p.pointer))) : problems, checked };
}

export interface LoadedRuleFiles extends LoadedRules {
  /** Every rule id defined, loaded or not, with where it was first defined. */
  defined: Map<string, string>;
}

/**
 * Reads rule files one after the other, at most MAX_TOTAL_BYTES in all: a file past the budget is
 * a problem, not read. The plugin and lint read through the same budget.
 */
export function ruleFileReader(): (file: string) => SourceDoc {
  let total = 0;
  return (file) => {
    let size = 0;
    try {
      const st = statSync(file);
      if (st.isFile() && st.size <= MAX_FILE_BYTES) size = st.size; // others are not read: readSource says why
    } catch {
      // readSource says why
    }
    if (total + size > MAX_TOTAL_BYTES)
      return failedSource(file, [{ file, line: 1, col: 1, severity: "error", message: `not read: rule files may total at most ${MAX_TOTAL_BYTES / 1024 / 1024} MiB, and those before it take ${Math.round(total / 1024)} KiB`, ruleId: "unreadable" }]);
    total += size;
    return readSource(file, parseYamlSource);
  };
}

export function loadRuleFiles(paths: string[]): LoadedRuleFiles {
  const seen = new Map<string, string>();
  const out: LoadedRuleFiles = { rules: [], problems: [], defined: seen };
  const read = ruleFileReader();
  for (const file of ruleFilesIn(paths, out.problems)) {
    const r = loadRuleDoc(read(file), seen);
    out.rules.push(...r.rules);
    out.problems.push(...r.problems);
  }
  return out;
}
