// acp rules lint: rule files, presets and acp.jsonc through the same loading, checking and
// resolving code the plugin uses (src/rules), plus lint-only advice (lint-rules.ts). Unlike the
// plugin, which skips a broken layer whole, lint goes on checking whatever in it is readable, so
// one run reports every problem.
import { existsSync, statSync } from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";
import { configFiles, layerRuleFiles, parseConfigDoc } from "../rules/config.js";
import { BUILTIN_RULES_DIR, loadRuleDoc, ruleFileReader, ruleFilesIn } from "../rules/load.js";
import { packagePath } from "../rules/paths.js";
import { applySettings, loadPreset, presetCompleteness, presetSource, PRESET_NAMES } from "../rules/presets.js";
import type { Problem } from "../rules/problems.js";
import { ruleMap } from "../rules/resolve.js";
import { parseJsoncSource, parseYamlSource, readSource, type SourceDoc } from "../rules/source.js";
import type { Preset, RuleSpec } from "../rules/types.js";
import { adviseRule } from "./lint-rules.js";

type Kind = "rules" | "preset" | "config";

/**
 * A YAML file is a preset when it has a preset's top-level keys or rule settings instead of rules;
 * in a rule folder of a config location (`…/acp/rules/`) the plugin reads every file as rules.
 */
function kindOf(file: string): Kind {
  const ext = extname(file);
  if (ext === ".jsonc" || ext === ".json") return "config";
  if (basename(dirname(file)) === "rules" && basename(dirname(dirname(file))) === "acp") return "rules";
  const data = readSource(file, parseYamlSource).data as Record<string, unknown> | undefined;
  if (!data || typeof data !== "object") return "rules";
  if ("commit" in data || "description" in data) return "preset";
  const rules = data.rules;
  const settings = rules && typeof rules === "object" ? Object.values(rules) : [];
  const isSetting = (s: unknown) => s === "on" || s === "off" || (s !== null && typeof s === "object" && "with" in s && !("phase" in s));
  return settings.length > 0 && settings.every(isSetting) ? "preset" : "rules";
}

/** Files and folders → files; a folder contributes its *.yaml / *.yml, except rule-test sessions. */
function expand(paths: string[], problems: Problem[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    let isDir = false;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      // reported as unreadable when read
    }
    // A config path is a file, even when a folder sits there (reported as such, as by the plugin).
    if (!isDir || /\.jsonc?$/.test(p)) out.push(p);
    else out.push(...ruleFilesIn([p], problems));
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

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

interface ConfigTarget {
  doc: SourceDoc;
  /** What is readable of it, even when it fails the schema. */
  data?: Record<string, unknown>;
}

/** Checks configs; returns them with the rule files and preset files they bring in. */
function lintConfigs(files: string[], problems: Problem[]): { configs: ConfigTarget[]; ruleFiles: string[]; presets: string[] } {
  const configs: ConfigTarget[] = [];
  const ruleFiles: string[] = [];
  const presets: string[] = [];
  for (const f of files) {
    const doc = readSource(f, parseJsoncSource);
    problems.push(...parseConfigDoc(doc).problems);
    const data = isObject(doc.data) ? doc.data : undefined;
    configs.push({ doc, data });
    if (!data) continue;
    // As the plugin does: ruleFiles relative to the config's folder, the acp/rules folder beside it.
    const listed = layerRuleFiles(f, doc, data);
    problems.push(...listed.problems);
    ruleFiles.push(...expand(listed.files, problems));
    const ruleDir = join(dirname(f), "acp", "rules");
    if (existsSync(ruleDir)) ruleFiles.push(...expand([ruleDir], problems));
    const preset = data.preset;
    if (typeof preset !== "string" || (PRESET_NAMES as readonly string[]).includes(preset)) continue;
    const source = presetSource(preset, { doc, pointer: "/preset" });
    problems.push(...source.problems);
    if (source.file) presets.push(resolve(source.file));
  }
  return { configs, ruleFiles, presets };
}

export function lint(paths: string[]): Problem[] {
  const problems: Problem[] = [];
  const targets = expand(paths.map((p) => resolve(p)), problems);
  const kinds = new Map(targets.map((f) => [f, kindOf(f)]));
  const byKind = (k: Kind) => targets.filter((f) => kinds.get(f) === k);
  const fromConfigs = lintConfigs(byKind("config"), problems);
  const ruleFiles = [...new Set([...byKind("rules"), ...fromConfigs.ruleFiles])];
  // A file a config names in ruleFiles is a rule file, whatever its content looks like.
  const presetFiles = [...new Set([...byKind("preset"), ...fromConfigs.presets])].filter((f) => !fromConfigs.ruleFiles.includes(f));

  // Rules: the built-in ones first (as the plugin loads them), then every rule file linted.
  // Advice reads every rule that passes the schema, errors or not.
  const seen = new Map<string, string>();
  const specs = new Map<string, RuleSpec>();
  const builtin = ruleFilesIn([BUILTIN_RULES_DIR]);
  const builtinIds = new Set<string>();
  const read = ruleFileReader();
  for (const f of [...new Set([...builtin, ...ruleFiles])]) {
    const doc = read(f);
    const r = loadRuleDoc(doc, seen);
    if (builtin.includes(f)) for (const id of seen.keys()) builtinIds.add(id);
    if (ruleFiles.includes(f)) problems.push(...r.problems, ...r.checked.flatMap((rule) => adviseRule(doc, rule)));
    for (const spec of r.rules) specs.set(spec.id, spec);
  }
  const rules = () => ruleMap([...specs.values()], seen.keys());

  for (const f of presetFiles) {
    const { preset, doc, problems: pp } = loadPreset(f);
    problems.push(...pp);
    // A preset that fails the schema still has its readable settings checked.
    problems.push(...applySettings(rules(), preset?.rules ?? (isObject(doc.data) ? doc.data.rules : undefined), doc, "/rules"));
    // Presets list the built-in rules; user rules are on unless a preset or config says otherwise.
    if (preset) problems.push(...presetCompleteness(preset as Preset, doc, builtinIds));
  }
  for (const { doc, data } of fromConfigs.configs) problems.push(...applySettings(rules(), data?.rules, doc, "/rules"));
  // Files in the order given (then the rule files configs bring in), each sorted by position.
  const order = new Map<string, number>();
  for (const f of [...targets, ...ruleFiles]) if (!order.has(f)) order.set(f, order.size);
  const rank = (file: string) => order.get(file) ?? order.size;
  return problems.sort((a, b) => rank(a.file) - rank(b.file) || a.line - b.line || a.col - b.col);
}
