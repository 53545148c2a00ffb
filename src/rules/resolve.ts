// From configuration to the effective rule list: built-in rules + user rule files, the chosen
// preset, then per-rule overrides from acp.jsonc (later layers win). The plugin, the CLI and
// `acp rules lint` all check rules, presets and overrides through these functions.
import { resolve as resolvePath } from "node:path";
import type { Problem } from "./problems.js";
import { BUILTIN_RULES_DIR, loadRuleFiles } from "./load.js";
import { applySettings, choosePreset, DEFAULT_COMMIT, INLINE_CONFIG } from "./presets.js";
import { defaultConfig, type ConfigLayer } from "./config.js";
import type { AcpConfig, CommitPolicy, RuleSpec } from "./types.js";

export interface ResolvedRules {
  rules: RuleSpec[];
  /** Every known rule (enabled or not), for listing and explain. */
  all: { spec: RuleSpec; on: boolean }[];
  commit: CommitPolicy;
  presetName: string;
  /** The preset's `tool` (the default of the config's `tool` under it); undefined: not set. */
  presetTool?: boolean;
  problems: Problem[];
}

export interface ResolveInput {
  config: AcpConfig;
  /** Config layers as loadConfig found them; only those that apply (`data`) take part. */
  layers?: ConfigLayer[];
  ruleDirs?: string[];
  /** Overrides the built-in rules folder (tests). */
  builtinRules?: string[];
}

type RuleMap = Map<string, { spec: RuleSpec; on: boolean }>;

/**
 * The rule map settings apply to. A rule id that is defined but failed to load is still known
 * (a placeholder without an action), so a setting for it is not also an "unknown rule".
 */
export function ruleMap(rules: RuleSpec[], defined: Iterable<string>): RuleMap {
  const map: RuleMap = new Map(rules.map((spec) => [spec.id, { spec, on: false }]));
  for (const id of defined) if (!map.has(id)) map.set(id, { spec: { id, params: {}, then: { action: "" } } as unknown as RuleSpec, on: false });
  return map;
}

export function resolveRules(input: ResolveInput): ResolvedRules {
  const { config } = input;
  const layers = (input.layers ?? []).filter((l) => l.data);
  // Layers' ruleFiles are already absolute (loadConfig reads them relative to their config);
  // others (the API's `rules`, a config built in code) are read from the working folder.
  const userFiles = config.ruleFiles.map((f) => resolvePath(f));
  const loaded = loadRuleFiles([...(input.builtinRules ?? [BUILTIN_RULES_DIR]), ...(input.ruleDirs ?? []), ...userFiles]);
  const problems = [...loaded.problems];
  const loadedIds = new Set(loaded.rules.map((r) => r.id));
  const map = ruleMap(loaded.rules, loaded.defined.keys());
  // Rules from user files are on unless a preset or the config turns them off.
  for (const spec of loaded.rules) if (!spec.source?.file.startsWith(BUILTIN_RULES_DIR)) map.get(spec.id)!.on = true;

  // The preset is located at the `preset` key of the last layer that set it (none: defaults or the
  // API); one that does not load gives way to an earlier layer's, else the built-in default's.
  const { preset, doc, problems: presetProblems } = choosePreset(config.preset, layers, defaultConfig().preset);
  problems.push(...presetProblems);
  let commit = { ...DEFAULT_COMMIT };
  if (preset) {
    problems.push(...applySettings(map, preset.rules, doc, "/rules"));
    commit = { ...preset.commit };
  }
  for (const layer of layers) problems.push(...applySettings(map, layer.data!.rules, layer.doc, "/rules"));
  if (!layers.length && Object.keys(config.rules).length) {
    const inline = { file: INLINE_CONFIG, data: config, problems: [], locate: () => ({ line: 1, col: 1 }) };
    problems.push(...applySettings(map, config.rules, inline, "/rules"));
  }
  commit = { ...commit, ...config.commit };
  const all = [...map.values()].filter((e) => loadedIds.has(e.spec.id));
  return { rules: all.filter((e) => e.on).map((e) => e.spec), all, commit, presetName: preset?.name ?? config.preset, presetTool: preset?.tool, problems };
}
