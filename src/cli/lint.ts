// acp rules lint: rule files, presets and acp.jsonc through the same four layers the plugin
// uses (syntax, schema, semantics, location).
import { existsSync, readFileSync } from "node:fs";
import { extname, resolve } from "node:path";
import { configFiles, parseConfigDoc } from "../rules/config.js";
import { BUILTIN_RULES_DIR, loadRuleDoc, readSource, ruleFilesIn } from "../rules/load.js";
import { packagePath } from "../rules/paths.js";
import { applySettings, loadPreset, presetCompleteness, PRESET_NAMES } from "../rules/presets.js";
import { didYouMean, type Problem } from "../rules/problems.js";
import { parseJsoncSource, parseYamlSource } from "../rules/source.js";
import type { AcpConfig, Preset, RuleSpec } from "../rules/types.js";

type Kind = "rules" | "preset" | "config";

function kindOf(file: string): Kind {
  const ext = extname(file);
  if (ext === ".jsonc" || ext === ".json") return "config";
  try {
    const text = readFileSync(file, "utf8");
    if (/^(commit|description)\s*:/m.test(text) && !/^\s{4}phase\s*:/m.test(text)) return "preset";
  } catch {
    // unreadable: reported by the rules loader
  }
  return "rules";
}

export interface LintTargets {
  files: string[];
}

/** Default targets: built-in rules and presets, and the user's config files and rule folders. */
export function defaultTargets(projectDir: string): string[] {
  const out = [BUILTIN_RULES_DIR, ...PRESET_NAMES.map((n) => packagePath("presets", `${n}.yaml`))];
  for (const { file, ruleDir } of configFiles({ projectDir, configDir: process.env.OPENCODE_CONFIG_DIR, xdgConfigHome: process.env.XDG_CONFIG_HOME })) {
    if (existsSync(ruleDir)) out.push(ruleDir);
    if (existsSync(file)) out.push(file);
  }
  return out;
}

export function lint(paths: string[]): Problem[] {
  const files = ruleFilesIn(paths.map((p) => resolve(p)));
  // Rule ids known to presets and configs: the built-in rules plus every rule file linted.
  const ruleFiles = files.filter((f) => kindOf(f) === "rules");
  const seen = new Map<string, string>();
  const problems: Problem[] = [];
  const rules: RuleSpec[] = [];
  const allIds = new Set<string>();
  const builtin = ruleFilesIn([BUILTIN_RULES_DIR]);
  for (const f of [...new Set([...builtin, ...ruleFiles])]) {
    const r = loadRuleDoc(readSource(f, parseYamlSource), seen);
    if (ruleFiles.includes(f)) problems.push(...r.problems);
    rules.push(...r.rules);
    for (const id of seen.keys()) allIds.add(id);
  }
  const ruleMap = () => new Map(rules.map((spec) => [spec.id, { spec, on: false }]));
  for (const f of files) {
    const kind = kindOf(f);
    if (kind === "preset") {
      const { preset, doc, problems: pp } = loadPreset(f);
      problems.push(...pp);
      if (!preset) continue;
      problems.push(...applySettings(ruleMap(), preset.rules, doc, "/rules"));
      problems.push(...presetCompleteness(preset as Preset, doc, allIds));
    } else if (kind === "config") {
      const doc = readSource(f, parseJsoncSource);
      const { data, problems: cp } = parseConfigDoc(doc);
      problems.push(...cp);
      if (!data) continue;
      const cfg = data as Partial<AcpConfig>;
      if (cfg.rules) problems.push(...applySettings(ruleMap(), cfg.rules, doc, "/rules"));
      if (cfg.preset && !(PRESET_NAMES as readonly string[]).includes(cfg.preset) && !existsSync(resolve(cfg.preset)))
        problems.push({ file: f, ...doc.locate("/preset"), severity: "error", message: `unknown preset "${cfg.preset}"${didYouMean(cfg.preset, PRESET_NAMES)}`, ruleId: "unknown-preset", pointer: "/preset" });
    }
  }
  return problems;
}
