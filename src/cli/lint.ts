// acp rules lint: rule files, presets and acp.jsonc through the same four layers the plugin
// uses (syntax, schema, semantics, location), plus lint-only advice (lint-rules.ts).
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, extname, join, resolve } from "node:path";
import { actionByName } from "../engine/actions/index.js";
import { configFiles, parseConfigDoc } from "../rules/config.js";
import { actionOptionIssues, BUILTIN_RULES_DIR, loadRuleDoc, readSource, ruleFilesIn } from "../rules/load.js";
import { packagePath } from "../rules/paths.js";
import { applySettings, loadPreset, presetCompleteness, PRESET_NAMES } from "../rules/presets.js";
import { didYouMean, type Problem } from "../rules/problems.js";
import { parseJsoncSource, parseYamlSource, type SourceDoc } from "../rules/source.js";
import type { AcpConfig, Preset, RuleSetting, RuleSpec } from "../rules/types.js";
import { adviseRule } from "./lint-rules.js";

type Kind = "rules" | "preset" | "config";

/** A YAML file is a preset when it has a preset's top-level keys or rule settings instead of rules. */
function kindOf(file: string): Kind {
  const ext = extname(file);
  if (ext === ".jsonc" || ext === ".json") return "config";
  const data = readSource(file, parseYamlSource).data as Record<string, unknown> | undefined;
  if (!data || typeof data !== "object") return "rules";
  if ("commit" in data || "description" in data) return "preset";
  const rules = data.rules;
  const settings = rules && typeof rules === "object" ? Object.values(rules) : [];
  const isSetting = (s: unknown) => s === "on" || s === "off" || (s !== null && typeof s === "object" && "with" in s && !("phase" in s));
  return settings.length > 0 && settings.every(isSetting) ? "preset" : "rules";
}

/** Files and folders → files; a folder contributes its *.yaml / *.yml, except rule-test sessions. */
function expand(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const isDir = existsSync(p) && statSync(p).isDirectory();
    if (!isDir) out.push(p); // a missing file is reported as unreadable
    else out.push(...ruleFilesIn([p]).filter((f) => !/\.session(\.fixed)?\.ya?ml$/.test(f)));
  }
  return [...new Set(out)];
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

const isPresetPath = (p: string) => p.includes("/") || /\.ya?ml$/.test(p);

interface ConfigTarget {
  doc: SourceDoc;
  data?: Partial<AcpConfig>;
}

/** Parses configs; returns the rule files and preset files they bring in. */
function lintConfigs(files: string[], problems: Problem[]): { configs: ConfigTarget[]; ruleFiles: string[]; presets: string[] } {
  const configs: ConfigTarget[] = [];
  const ruleFiles: string[] = [];
  const presets: string[] = [];
  for (const f of files) {
    const doc = readSource(f, parseJsoncSource);
    const { data, problems: cp } = parseConfigDoc(doc);
    problems.push(...cp);
    configs.push({ doc, data });
    if (!data) continue;
    const report = (pointer: string, message: string, ruleId: string) => problems.push({ file: f, ...doc.locate(pointer), severity: "error", message, ruleId, pointer });
    // As the plugin does: ruleFiles relative to the config's folder, the acp/rules folder beside it.
    (data.ruleFiles ?? []).forEach((rf, i) => {
      const path = resolve(dirname(f), rf);
      if (existsSync(path)) ruleFiles.push(...expand([path]));
      else report(`/ruleFiles/${i}`, `rule file "${rf}" not found (looked for ${path})`, "missing-rule-file");
    });
    const ruleDir = join(dirname(f), "acp", "rules");
    if (existsSync(ruleDir)) ruleFiles.push(...expand([ruleDir]));
    const preset = data.preset;
    if (preset === undefined || (PRESET_NAMES as readonly string[]).includes(preset)) continue;
    // A preset path is read from the working folder, as the plugin reads it.
    if (!isPresetPath(preset)) report("/preset", `unknown preset "${preset}"${didYouMean(preset, PRESET_NAMES)} (known: ${PRESET_NAMES.join(", ")}, or a path to a preset file)`, "unknown-preset");
    else if (!existsSync(resolve(preset))) report("/preset", `preset file "${preset}" not found (looked for ${resolve(preset)})`, "unknown-preset");
    else presets.push(resolve(preset));
  }
  return { configs, ruleFiles, presets };
}

/** `with` keys are params of the rule or options of its action; anything else is a typo. */
function checkOverrides(settings: Record<string, RuleSetting>, specs: Map<string, RuleSpec>, doc: SourceDoc): Problem[] {
  const problems: Problem[] = [];
  for (const [id, setting] of Object.entries(settings)) {
    const spec = specs.get(id);
    const action = spec && actionByName.get(spec.then.action);
    if (!spec || !action || typeof setting !== "object" || !setting.with) continue;
    const params = Object.keys(spec.params ?? {});
    const options = Object.keys(action.options.properties).filter((o) => o !== "by");
    const overridden: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(setting.with)) {
      if (params.includes(k) || k === "action" || k === "by") continue; // a param, or reported as invalid-override
      const pointer = `/rules/${id}/with/${k}`;
      if (options.includes(k)) overridden[k] = v;
      else {
        const known = ` (params: ${params.join(", ") || "none"}; options of ${action.name}: ${options.join(", ") || "none"})`;
        const message = `rule "${id}" has no param or option "${k}"${didYouMean(k, [...params, ...options]) || known}`;
        problems.push({ file: doc.file, ...doc.locate(pointer, true), severity: "error", message, ruleId: "unknown-override", pointer });
      }
    }
    const { action: _a, ...ruleOptions } = spec.then;
    for (const o of actionOptionIssues(action.name, { ...ruleOptions, ...overridden })) {
      const k = o.pointer.split("/")[1];
      if (!(k in overridden)) continue; // the rule file's own problem
      const pointer = `/rules/${id}/with${o.pointer}`;
      problems.push({ file: doc.file, ...doc.locate(pointer, o.key), severity: "error", message: o.message, ruleId: o.ruleId, pointer });
    }
  }
  return problems;
}

export function lint(paths: string[]): Problem[] {
  const targets = expand(paths.map((p) => resolve(p)));
  const kinds = new Map(targets.map((f) => [f, kindOf(f)]));
  const byKind = (k: Kind) => targets.filter((f) => kinds.get(f) === k);
  const problems: Problem[] = [];
  const fromConfigs = lintConfigs(byKind("config"), problems);
  const ruleFiles = [...new Set([...byKind("rules"), ...fromConfigs.ruleFiles])];

  // Rules: the built-in ones first (as the plugin loads them), then every rule file linted.
  const seen = new Map<string, string>();
  const specs = new Map<string, RuleSpec>();
  const builtin = ruleFilesIn([BUILTIN_RULES_DIR]);
  const builtinIds = new Set<string>();
  for (const f of [...new Set([...builtin, ...ruleFiles])]) {
    const doc = readSource(f, parseYamlSource);
    const r = loadRuleDoc(doc, seen);
    if (builtin.includes(f)) for (const id of seen.keys()) builtinIds.add(id);
    if (ruleFiles.includes(f)) problems.push(...r.problems, ...r.rules.flatMap((rule) => adviseRule(doc, rule)));
    for (const spec of r.rules) specs.set(spec.id, spec);
  }
  const ruleMap = () => knownMap(new Map([...specs.values()].map((spec) => [spec.id, { spec, on: false }])), seen);

  for (const f of [...new Set([...byKind("preset"), ...fromConfigs.presets])]) {
    const { preset, doc, problems: pp } = loadPreset(f);
    problems.push(...pp);
    if (!preset) continue;
    problems.push(...applySettings(ruleMap(), preset.rules, doc, "/rules"));
    // Presets list the built-in rules; user rules are on unless a preset or config says otherwise.
    problems.push(...presetCompleteness(preset as Preset, doc, builtinIds));
    problems.push(...checkOverrides(preset.rules, specs, doc));
  }
  for (const { doc, data } of fromConfigs.configs) {
    if (!data?.rules) continue;
    problems.push(...applySettings(ruleMap(), data.rules, doc, "/rules"));
    problems.push(...checkOverrides(data.rules, specs, doc));
  }
  // Files in the order given (then the rule files configs bring in), each sorted by position.
  const order = new Map<string, number>();
  for (const f of [...targets, ...ruleFiles]) if (!order.has(f)) order.set(f, order.size);
  const rank = (file: string) => order.get(file) ?? order.size;
  return problems.sort((a, b) => rank(a.file) - rank(b.file) || a.line - b.line || a.col - b.col);
}

/** The rule map for applySettings; a rule that failed to load is still a known id (a placeholder). */
function knownMap(map: Map<string, { spec: RuleSpec; on: boolean }>, seen: Map<string, string>) {
  for (const id of seen.keys()) if (!map.has(id)) map.set(id, { spec: { id, params: {}, then: { action: "" } } as unknown as RuleSpec, on: false });
  return map;
}
