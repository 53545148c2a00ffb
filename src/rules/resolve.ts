// From configuration to the effective rule list: built-in rules + user rule files, the chosen
// preset, then per-rule overrides from acp.jsonc (later layers win).
import { isAbsolute, resolve as resolvePath, dirname } from "node:path";
import type { Problem } from "./problems.js";
import { BUILTIN_RULES_DIR, loadRuleFiles } from "./load.js";
import { applySettings, DEFAULT_COMMIT, loadPreset } from "./presets.js";
import type { ConfigLayer } from "./config.js";
import type { AcpConfig, CommitPolicy, RuleSpec } from "./types.js";

export interface ResolvedRules {
  rules: RuleSpec[];
  /** Every known rule (enabled or not), for listing and explain. */
  all: { spec: RuleSpec; on: boolean }[];
  commit: CommitPolicy;
  presetName: string;
  problems: Problem[];
}

export interface ResolveInput {
  config: AcpConfig;
  layers?: ConfigLayer[];
  ruleDirs?: string[];
  /** Overrides the built-in rules folder (tests). */
  builtinRules?: string[];
}

export function resolveRules(input: ResolveInput): ResolvedRules {
  const { config } = input;
  const layers = input.layers ?? [];
  // ruleFiles in a config file are relative to that file's folder.
  const base = layers.length ? dirname(layers[layers.length - 1].file) : process.cwd();
  const userFiles = config.ruleFiles.map((f) => (isAbsolute(f) ? f : resolvePath(base, f)));
  const loaded = loadRuleFiles([...(input.builtinRules ?? [BUILTIN_RULES_DIR]), ...(input.ruleDirs ?? []), ...userFiles]);
  const problems = [...loaded.problems];
  const map = new Map(loaded.rules.map((spec) => [spec.id, { spec, on: false }]));
  // Rules from user files are on unless a preset or the config turns them off.
  for (const spec of loaded.rules) if (!spec.source?.file.startsWith(BUILTIN_RULES_DIR)) map.get(spec.id)!.on = true;

  const { preset, doc, problems: presetProblems } = loadPreset(config.preset);
  problems.push(...presetProblems);
  let commit = { ...DEFAULT_COMMIT };
  if (preset) {
    problems.push(...applySettings(map, preset.rules, doc, "/rules"));
    commit = { ...preset.commit };
  }
  for (const layer of layers) {
    const data = layer.doc.data as Partial<AcpConfig> | undefined;
    if (data?.rules) problems.push(...applySettings(map, data.rules, layer.doc, "/rules"));
  }
  if (!layers.length && Object.keys(config.rules).length) {
    const inline = { file: "<config>", data: config, problems: [], locate: () => ({ line: 1, col: 1 }) };
    problems.push(...applySettings(map, config.rules, inline, "/rules"));
  }
  commit = { ...commit, ...config.commit };
  const all = [...map.values()];
  return { rules: all.filter((e) => e.on).map((e) => e.spec), all, commit, presetName: preset?.name ?? config.preset, problems };
}
