// acp.jsonc, layered: defaults → ~/.config/opencode/acp.jsonc → $OPENCODE_CONFIG_DIR/acp.jsonc
// → <project>/.opencode/acp.jsonc. A broken layer is reported and skipped; defaults still apply.
import { existsSync, readFileSync, statSync } from "node:fs";
import { packagePath } from "./paths.js";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Problem } from "./problems.js";
import { presetTool } from "./presets.js";
import { notAFile } from "./read.js";
import { schemaProblems } from "./schemas.js";
import { parseJsoncSource, readSource, type SourceDoc } from "./source.js";
import type { AcpConfig } from "./types.js";

const DEFAULTS_FILE = packagePath("presets", "defaults.jsonc");
let defaults: Partial<AcpConfig> | undefined;

/** The shipped defaults (presets/defaults.jsonc): tool names are data, not code. */
export const defaultConfig = (): AcpConfig => {
  defaults ??= parseJsoncSource(DEFAULTS_FILE, readFileSync(DEFAULTS_FILE, "utf8")).data as Partial<AcpConfig>;
  const { $schema: _s, ...d } = defaults as Record<string, unknown>;
  // the settings defaults.jsonc does not list (the file holds every other default)
  return { rules: {}, ruleFiles: [], commit: {}, ...structuredClone(d) } as unknown as AcpConfig;
};

export interface ConfigLayer {
  file: string;
  doc: SourceDoc;
  ruleDir?: string;
  /** The layer's settings when it applies (no syntax or schema error); a broken layer is skipped whole. */
  data?: Partial<AcpConfig>;
}

export interface LoadedConfig {
  config: AcpConfig;
  problems: Problem[];
  layers: ConfigLayer[];
  /** User rule folders that exist (global, then project). */
  ruleDirs: string[];
}

export interface ConfigLocations {
  projectDir?: string;
  home?: string;
  configDir?: string; // $OPENCODE_CONFIG_DIR
  xdgConfigHome?: string;
}

export function configFiles(loc: ConfigLocations): { file: string; ruleDir: string }[] {
  const globalDir = join(loc.xdgConfigHome ?? join(loc.home ?? homedir(), ".config"), "opencode");
  const dirs = [globalDir, loc.configDir, loc.projectDir && join(loc.projectDir, ".opencode")].filter((d): d is string => Boolean(d));
  return [...new Set(dirs)].map((d) => ({ file: join(d, "acp.jsonc"), ruleDir: join(d, "acp", "rules") }));
}

/** Merges one parsed layer over the config: lists of protections add, everything else replaces. */
function merge(config: AcpConfig, layer: Partial<AcpConfig>): void {
  for (const [k, v] of Object.entries(layer)) {
    if (k === "$schema") continue;
    if (k === "protectedTools" || k === "protectedFiles") config[k] = [...new Set([...config[k], ...(v as string[])])];
    else if (k === "rules") config.rules = { ...config.rules, ...(v as object) };
    else if (k === "commit") config.commit = { ...config.commit, ...(v as object) };
    else if (k === "ruleFiles") config.ruleFiles = [...config.ruleFiles, ...(v as string[])];
    else (config as any)[k] = v;
  }
}

/**
 * A config's `ruleFiles`, read relative to the config's folder: the files and folders that exist,
 * and a problem at the entry for each that does not or is not a file or folder. Entries of the
 * wrong type were reported by the schema.
 */
export function layerRuleFiles(file: string, doc: SourceDoc, data: unknown): { files: string[]; problems: Problem[] } {
  const files: string[] = [];
  const problems: Problem[] = [];
  const list = data !== null && typeof data === "object" ? (data as { ruleFiles?: unknown }).ruleFiles : undefined;
  if (!Array.isArray(list)) return { files, problems };
  list.forEach((rf, i) => {
    if (typeof rf !== "string") return;
    const pointer = `/ruleFiles/${i}`;
    const report = (message: string, ruleId: string) => problems.push({ file, ...doc.locate(pointer), severity: "error", message, ruleId, pointer });
    const path = resolve(dirname(file), rf);
    let kind: string | undefined;
    try {
      const st = statSync(path);
      kind = st.isDirectory() ? undefined : notAFile(st);
    } catch {
      return report(`rule file "${rf}" not found (looked for ${path})`, "missing-rule-file");
    }
    if (kind) report(`rule file "${rf}" is ${kind}, not a file or folder; it is not read`, "unreadable");
    else files.push(path);
  });
  return { files, problems };
}

export function parseConfigDoc(doc: SourceDoc): { data?: Partial<AcpConfig>; problems: Problem[] } {
  const problems = [...doc.problems];
  if (doc.data === undefined) return { problems };
  problems.push(...schemaProblems("acp-config", doc));
  return problems.some((p) => p.severity === "error") ? { problems } : { data: doc.data as Partial<AcpConfig>, problems };
}

/** Whether a config layer sets `tool`; if none does, the preset decides (presetTool). */
export function layersSetTool(layers: ConfigLayer[] | undefined): boolean {
  return layers?.some((l) => l.data?.tool !== undefined) === true;
}

export function loadConfig(loc: ConfigLocations, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const config = defaultConfig();
  const problems: Problem[] = [];
  const layers: ConfigLayer[] = [];
  const ruleDirs: string[] = [];
  const locations = { configDir: env.OPENCODE_CONFIG_DIR, xdgConfigHome: env.XDG_CONFIG_HOME, ...loc };
  for (const { file, ruleDir } of configFiles(locations)) {
    if (existsSync(ruleDir)) ruleDirs.push(ruleDir);
    if (!existsSync(file)) continue;
    const doc = readSource(file, parseJsoncSource);
    const parsed = parseConfigDoc(doc);
    layers.push({ file, doc, ruleDir, data: parsed.data });
    problems.push(...parsed.problems);
    if (!parsed.data) continue;
    const ruleFiles = layerRuleFiles(file, doc, parsed.data);
    problems.push(...ruleFiles.problems);
    merge(config, { ...parsed.data, ruleFiles: ruleFiles.files });
  }
  if (!layersSetTool(layers)) config.tool = presetTool(config.preset, layers, defaultConfig().preset);
  return { config, problems, layers, ruleDirs };
}
