// acp.jsonc, layered: defaults → ~/.config/opencode/acp.jsonc → $OPENCODE_CONFIG_DIR/acp.jsonc
// → <project>/.opencode/acp.jsonc. A broken layer is reported and skipped; defaults still apply.
import { existsSync, readFileSync } from "node:fs";
import { packagePath } from "./paths.js";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Problem } from "./problems.js";
import { readSource } from "./load.js";
import { schemaProblems } from "./schemas.js";
import { parseJsoncSource, type SourceDoc } from "./source.js";
import type { AcpConfig } from "./types.js";

const DEFAULTS_FILE = packagePath("presets", "defaults.jsonc");
let defaults: Partial<AcpConfig> | undefined;

/** The shipped defaults (presets/defaults.jsonc): tool names are data, not code. */
export const defaultConfig = (): AcpConfig => {
  defaults ??= parseJsoncSource(DEFAULTS_FILE, readFileSync(DEFAULTS_FILE, "utf8")).data as Partial<AcpConfig>;
  const { $schema: _s, ...d } = defaults as Record<string, unknown>;
  return {
    enabled: true,
    preset: "balanced",
    rules: {},
    ruleFiles: [],
    protectedTools: [],
    protectedFiles: [],
    commit: {},
    subagents: false,
    debug: false,
    pruneNotification: "minimal",
    tool: true,
    idsFromTokens: 20000,
    ...structuredClone(d),
  } as AcpConfig;
};

export interface ConfigLayer {
  file: string;
  doc: SourceDoc;
  ruleDir?: string;
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

export function parseConfigDoc(doc: SourceDoc): { data?: Partial<AcpConfig>; problems: Problem[] } {
  const problems = [...doc.problems];
  if (doc.data === undefined) return { problems };
  problems.push(...schemaProblems("acp-config", doc));
  return problems.some((p) => p.severity === "error") ? { problems } : { data: doc.data as Partial<AcpConfig>, problems };
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
    layers.push({ file, doc, ruleDir });
    const parsed = parseConfigDoc(doc);
    problems.push(...parsed.problems);
    if (parsed.data) merge(config, parsed.data);
  }
  return { config, problems, layers, ruleDirs };
}
