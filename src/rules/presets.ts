// Presets are explicit maps: every rule id → on | off | {with: {...}}. Resolving a preset
// and the user's overrides yields the effective rule list; unknown ids, unknown or invalid
// overrides are errors with a did-you-mean, located in the file that named them.
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { actionDecl } from "../lang/actions.js";
import { actionOptionIssues } from "./load.js";
import { packagePath } from "./paths.js";
import { didYouMean, type Problem } from "./problems.js";
import { schemaProblems } from "./schemas.js";
import { failedSource, parseYamlSource, readSource, type SourceDoc } from "./source.js";
import type { CommitPolicy, Preset, RuleSetting, RuleSpec } from "./types.js";

export const PRESET_NAMES = ["compact", "balanced", "verbose"] as const;
export const DEFAULT_COMMIT: CommitPolicy = { minTokens: 20000, pressureTokens: 0, breakEven: 0, cacheTtlMinutes: 5, regretLimit: 3, minTurnCalls: 3 };

/** Where a preset name was written (a config's `preset` key), to locate problems with it. */
export interface NamedAt {
  doc: SourceDoc;
  pointer: string;
}

const isBuiltin = (name: string) => (PRESET_NAMES as readonly string[]).includes(name);
const isPresetPath = (name: string) => name.includes("/") || /\.ya?ml$/.test(name);

/** Where a problem of settings given in code (createPruner's config, the CLI's options) is said to be: no file. */
export const INLINE_CONFIG = "<config>";

export function presetFile(nameOrPath: string): string {
  return isBuiltin(nameOrPath) ? packagePath("presets", `${nameOrPath}.yaml`) : nameOrPath;
}

/**
 * The file a preset name stands for: a built-in preset, or a path, read from the folder of the
 * config file that names it (as its ruleFiles are), else from the working folder (the CLI's
 * --preset, the API). An unknown name or a missing file is a problem located where the name was
 * written.
 */
export function presetSource(name: string, at?: NamedAt): { file?: string; problems: Problem[] } {
  if (isBuiltin(name)) return { file: presetFile(name), problems: [] };
  const problem = (message: string): Problem => ({
    file: at?.doc.file ?? INLINE_CONFIG,
    ...(at ? at.doc.locate(at.pointer) : { line: 1, col: 1 }),
    severity: "error",
    message,
    ruleId: "unknown-preset",
    ...(at ? { pointer: at.pointer } : {}),
  });
  if (!isPresetPath(name)) return { problems: [problem(`unknown preset "${name}"${didYouMean(name, PRESET_NAMES)} (known: ${PRESET_NAMES.join(", ")}, or a path to a preset file)`)] };
  const file = at && at.doc.file !== INLINE_CONFIG ? resolve(dirname(at.doc.file), name) : name;
  if (!existsSync(file)) return { problems: [problem(`preset file "${name}" not found (looked for ${resolve(file)})`)] };
  return { file, problems: [] };
}

export function loadPreset(nameOrPath: string, at?: NamedAt): { preset?: Preset; doc: SourceDoc; problems: Problem[] } {
  const source = presetSource(nameOrPath, at);
  if (!source.file) return { doc: failedSource(nameOrPath, source.problems), problems: source.problems };
  const file = source.file;
  const doc = readSource(file, parseYamlSource);
  const problems = [...doc.problems];
  if (doc.data === undefined) return { doc, problems };
  problems.push(...schemaProblems("preset", doc));
  if (problems.some((p) => p.severity === "error")) return { doc, problems };
  const d = doc.data as any;
  const name = isBuiltin(nameOrPath) ? nameOrPath : file;
  return { preset: { name, description: d.description, commit: { ...DEFAULT_COMMIT, ...d.commit }, rules: d.rules, source: file, ...(typeof d.tool === "boolean" ? { tool: d.tool } : {}) }, doc, problems };
}

/**
 * The preset that applies: the one `name` says (the value of the last layer that sets one, or the
 * API's), else, where that one does not load, the one an earlier layer names, else `fallback` (the
 * built-in default). A preset that does not load is skipped like any broken setting and reported
 * where it was named (lint reports each layer's too), so a typo such as "balancd" leaves what the
 * earlier layers chose instead of switching every built-in rule off.
 */
export function choosePreset(name: string, layers: readonly { doc: SourceDoc; data?: { preset?: unknown } }[] | undefined, fallback: string): { preset?: Preset; doc: SourceDoc; problems: Problem[] } {
  const setters = (layers ?? []).filter((l) => typeof l.data?.preset === "string").reverse();
  const named = setters[0]?.data!.preset === name;
  const tries: { name: string; at?: NamedAt }[] = [{ name, at: named ? { doc: setters[0].doc, pointer: "/preset" } : undefined }];
  if (named) for (const l of setters.slice(1)) tries.push({ name: l.data!.preset as string, at: { doc: l.doc, pointer: "/preset" } });
  tries.push({ name: fallback });
  const problems: Problem[] = [];
  let first: { doc: SourceDoc } | undefined;
  for (const t of tries) {
    const r = loadPreset(t.name, t.at);
    problems.push(...r.problems);
    if (r.preset) return { preset: r.preset, doc: r.doc, problems };
    first ??= r;
  }
  return { doc: first!.doc, problems };
}

/**
 * Whether the model is offered context_prune (ids, instructions) when acp.jsonc does not say: the
 * preset's `tool`, else on. Problems with the preset are reported where it is resolved, not here.
 */
export function presetTool(nameOrPath: string, layers?: Parameters<typeof choosePreset>[1], fallback?: string): boolean {
  try {
    return (fallback === undefined ? loadPreset(nameOrPath) : choosePreset(nameOrPath, layers, fallback)).preset?.tool ?? true;
  } catch {
    return true;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
const an = (t: string) => `${/^[aeiou]/.test(t) ? "an" : "a"} ${t}`;

/**
 * Problems with one `{with: …}` override: a key that is neither a param of the rule nor an option
 * of its action (did-you-mean), `action`/`by`, a param of another type than its default, an
 * option value the action's schema rejects.
 */
function overrideProblems(spec: RuleSpec, overrides: Record<string, unknown>, doc: SourceDoc, ptr: string): Problem[] {
  const problems: Problem[] = [];
  const report = (p: string, message: string, ruleId: string, key = false) =>
    problems.push({ file: doc.file, ...doc.locate(p, key), severity: "error", message, ruleId, pointer: p });
  const action = actionDecl.get(spec.then.action);
  if (!action) return []; // a rule that failed to load: its own problems say why
  const params = spec.params ?? {};
  const options = Object.keys(action.options.properties).filter((o) => o !== "by");
  const overridden: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(overrides)) {
    const at = `${ptr}/with/${k}`;
    if (k === "action" || k === "by") report(at, `"${k}" cannot be overridden; edit the rule file instead`, "invalid-override", true);
    else if (k in params) {
      const want = jsonType(params[k]);
      if (jsonType(v) !== want) report(at, `rule "${spec.id}" param ${k} must be ${an(want)}, not ${an(jsonType(v))}`, "invalid-param");
    } else if (options.includes(k)) overridden[k] = v;
    else {
      const known = ` (params: ${Object.keys(params).join(", ") || "none"}; options of ${action.name}: ${options.join(", ") || "none"})`;
      report(at, `rule "${spec.id}" has no param or option "${k}"${didYouMean(k, [...Object.keys(params), ...options]) || known}`, "unknown-override", true);
    }
  }
  const { action: _a, ...ruleOptions } = spec.then;
  for (const o of actionOptionIssues(action.name, { ...ruleOptions, ...overridden })) {
    if (!(o.pointer.split("/")[1] in overridden)) continue; // the rule file's own problem
    report(`${ptr}/with${o.pointer}`, o.message, o.ruleId, o.key);
  }
  return problems.sort((a, b) => a.line - b.line || a.col - b.col);
}

/**
 * Applies one layer of settings (a preset or a config's `rules`) to the rule map, checking each
 * exactly as lint does. A setting with a problem is reported and skipped whole: the rule keeps
 * what earlier layers made of it. Settings of the wrong shape were reported by the schema.
 */
export function applySettings(
  rules: Map<string, { spec: RuleSpec; on: boolean }>,
  settings: unknown,
  doc: SourceDoc,
  base: string,
): Problem[] {
  const problems: Problem[] = [];
  if (!isObject(settings)) return problems;
  for (const [id, setting] of Object.entries(settings as Record<string, RuleSetting>)) {
    const ptr = `${base}/${id}`;
    const entry = rules.get(id);
    if (!entry) {
      problems.push({ file: doc.file, ...doc.locate(ptr, true), severity: "error", message: `unknown rule "${id}"${didYouMean(id, rules.keys())}`, ruleId: "unknown-rule", pointer: ptr });
      continue;
    }
    if (setting === "on" || setting === "off") {
      entry.on = setting === "on";
      continue;
    }
    if (!isObject(setting) || !isObject(setting.with)) continue;
    const bad = overrideProblems(entry.spec, setting.with, doc, ptr);
    problems.push(...bad);
    if (bad.length) continue;
    const spec = { ...entry.spec, params: { ...entry.spec.params }, then: { ...entry.spec.then } };
    for (const [k, v] of Object.entries(setting.with)) {
      if (k in spec.params) spec.params[k] = v;
      else spec.then[k] = v;
    }
    entry.on = true;
    entry.spec = spec;
  }
  return problems;
}

/** Problems for rule ids a preset does not list (presets must be complete maps). */
export function presetCompleteness(preset: Preset, doc: SourceDoc, ruleIds: Iterable<string>): Problem[] {
  const missing = [...ruleIds].filter((id) => !(id in preset.rules));
  return missing.map((id) => ({
    file: doc.file,
    ...doc.locate("/rules", true),
    severity: "warning" as const,
    message: `preset "${preset.name}" does not list rule "${id}" (list every rule as on, off or {with: …})`,
    ruleId: "preset-incomplete",
  }));
}
