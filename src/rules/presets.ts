// Presets are explicit maps: every rule id → on | off | {with: {...}}. Resolving a preset
// and the user's overrides yields the effective rule list; unknown ids are errors with a
// did-you-mean, located in the file that named them.
import { existsSync } from "node:fs";
import { packagePath } from "./paths.js";
import { didYouMean, type Problem } from "./problems.js";
import { readSource } from "./load.js";
import { schemaProblems } from "./schemas.js";
import { parseYamlSource, type SourceDoc } from "./source.js";
import type { CommitPolicy, Preset, RuleSetting, RuleSpec } from "./types.js";

export const PRESET_NAMES = ["compact", "balanced", "verbose"] as const;
export const DEFAULT_COMMIT: CommitPolicy = { minTokens: 20000, pressureTokens: 0, breakEven: 0, cacheTtlMinutes: 5 };

export function presetFile(nameOrPath: string): string {
  return (PRESET_NAMES as readonly string[]).includes(nameOrPath) ? packagePath("presets", `${nameOrPath}.yaml`) : nameOrPath;
}

export function loadPreset(nameOrPath: string): { preset?: Preset; doc: SourceDoc; problems: Problem[] } {
  const file = presetFile(nameOrPath);
  if (!existsSync(file) && !nameOrPath.includes("/") && !nameOrPath.endsWith(".yaml")) {
    const problem: Problem = { file: "acp.jsonc", line: 1, col: 1, severity: "error", message: `unknown preset "${nameOrPath}"${didYouMean(nameOrPath, PRESET_NAMES)} (known: ${PRESET_NAMES.join(", ")}, or a path to a preset file)`, ruleId: "unknown-preset" };
    return { doc: { file, data: undefined, problems: [problem], locate: () => ({ line: 1, col: 1 }) }, problems: [problem] };
  }
  const doc = readSource(file, parseYamlSource);
  const problems = [...doc.problems];
  if (doc.data === undefined) return { doc, problems };
  problems.push(...schemaProblems("preset", doc));
  if (problems.some((p) => p.severity === "error")) return { doc, problems };
  const d = doc.data as any;
  const name = (PRESET_NAMES as readonly string[]).includes(nameOrPath) ? nameOrPath : file;
  return { preset: { name, description: d.description, commit: { ...DEFAULT_COMMIT, ...d.commit }, rules: d.rules, source: file }, doc, problems };
}

/** Applies one layer of settings (a preset or a config's `rules`) to the rule map. */
export function applySettings(
  rules: Map<string, { spec: RuleSpec; on: boolean }>,
  settings: Record<string, RuleSetting>,
  doc: SourceDoc,
  base: string,
): Problem[] {
  const problems: Problem[] = [];
  const report = (ptr: string, message: string, ruleId: string, key = false) =>
    problems.push({ file: doc.file, ...doc.locate(ptr, key), severity: "error", message, ruleId, pointer: ptr });
  for (const [id, setting] of Object.entries(settings)) {
    const ptr = `${base}/${id}`;
    const entry = rules.get(id);
    if (!entry) {
      report(ptr, `unknown rule "${id}"${didYouMean(id, rules.keys())}`, "unknown-rule", true);
      continue;
    }
    if (setting === "on" || setting === "off") {
      entry.on = setting === "on";
      continue;
    }
    entry.on = true;
    const spec = { ...entry.spec, params: { ...entry.spec.params }, then: { ...entry.spec.then } };
    for (const [k, v] of Object.entries(setting.with ?? {})) {
      if (k in spec.params) spec.params[k] = v;
      else if (k !== "action" && k !== "by") spec.then[k] = v;
      else report(`${ptr}/with/${k}`, `"${k}" cannot be overridden; edit the rule file instead`, "invalid-override", true);
    }
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
