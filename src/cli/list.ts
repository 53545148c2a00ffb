// acp rules list / acp presets: what each rule does and which presets enable it.
import { resolve as resolvePath } from "node:path";
import { loadRuleFiles, BUILTIN_RULES_DIR } from "../rules/load.js";
import { loadConfig } from "../rules/config.js";
import { resolveRules } from "../rules/resolve.js";
import { DEFAULT_COMMIT, loadPreset, PRESET_NAMES } from "../rules/presets.js";
import { PHASES, type CommitPolicy, type RuleSetting } from "../rules/types.js";
import { FACT_DECLS } from "../lang/facts.js";
import { OPERATORS } from "../lang/operators.js";
import { ACTION_DECLS } from "../lang/actions.js";
import { KEY_FILTERS } from "../lang/key.js";
import { columns } from "./format.js";

const show = (s: RuleSetting | undefined) => (s === undefined ? "-" : typeof s === "string" ? s : `with ${JSON.stringify(s.with)}`);

/**
 * The rules the plugin would run in `projectDir`: built-in ones, the user rule folders
 * (~/.config/opencode/acp/rules/, .opencode/acp/rules/, …), the configs' ruleFiles and `extra`,
 * loaded and resolved as the plugin does (config.ts, resolve.ts). `on` is the effective setting
 * (preset, then acp.jsonc overrides).
 */
export function listRules(projectDir: string, extra: string[] = [], env: NodeJS.ProcessEnv = process.env): { text: string; problems: number } {
  const loaded = loadConfig({ projectDir }, env);
  const config = { ...loaded.config, ruleFiles: [...loaded.config.ruleFiles, ...extra.map((f) => resolvePath(f))] };
  const resolved = resolveRules({ config, layers: loaded.layers, ruleDirs: loaded.ruleDirs });
  const presets = PRESET_NAMES.map((n) => [n, loadPreset(n).preset?.rules ?? {}] as const);
  const rows = resolved.all.map(({ spec: r, on }) => [r.id, r.phase, r.then.action, presets.filter(([, m]) => m[r.id] !== undefined && m[r.id] !== "off").map(([n]) => n).join(",") || "-", on ? "on" : "off", r.description]);
  const head = ["rule", "phase", "action", "presets", "on", "description"];
  const lines = columns([head, ...rows], "left", false);
  const sources = [...loaded.ruleDirs, ...config.ruleFiles];
  if (sources.length) lines.push("", `user rules from: ${sources.join(", ")}`);
  const problems = [...loaded.problems, ...resolved.problems].filter((p) => p.severity === "error").length;
  return { text: lines.join("\n"), problems };
}

export function listPresets(): string {
  const presets = PRESET_NAMES.map((n) => [n, loadPreset(n).preset] as const);
  const { rules } = loadRuleFiles([BUILTIN_RULES_DIR]);
  const head = ["rule", ...PRESET_NAMES];
  const rows = rules.map((r) => [r.id, ...presets.map(([, p]) => show(p?.rules[r.id]))]);
  // the whole commit policy: the presets differ in more than its size threshold (breakEven, minTurnCalls)
  for (const k of Object.keys(DEFAULT_COMMIT) as (keyof CommitPolicy)[]) rows.push([`(commit ${k})`, ...presets.map(([, p]) => String(p?.commit[k] ?? "-"))]);
  const lines = columns([head, ...rows]).map((l) => l.trimEnd());
  return [...presets.map(([n, p]) => `${n}: ${p?.description ?? "(failed to load)"}`), "", ...lines].join("\n");
}

/** The vocabulary a rule may use: facts, operators, actions with their options, key filters. */
export function catalog(): string {
  const out: string[] = ["FACTS (when: {fact, operator, value, path?})"];
  for (const f of FACT_DECLS) out.push(`  ${f.name.padEnd(16)} ${f.type.padEnd(8)} ${f.kind.padEnd(8)} ${f.description}${f.availableFrom ? ` [from phase ${f.availableFrom}]` : ""}`);
  out.push("", "OPERATORS (prefix with not: to negate)");
  for (const o of OPERATORS) out.push(`  ${o.name.padEnd(22)} ${o.description}`);
  out.push("", "ACTIONS (then: {action, ...options})");
  for (const a of ACTION_DECLS) {
    out.push(`  ${a.name.padEnd(22)} ${a.description}`);
    for (const [k, v] of Object.entries(a.options.properties)) out.push(`      ${k}: ${(v as { description?: string; enum?: unknown[]; type?: string }).description ?? (v as any).enum?.join(" | ") ?? (v as any).type}`);
  }
  out.push("", "KEY FILTERS (key: \"prefix:{fact.path|filter}\", {x?} = optional)");
  for (const [k, v] of Object.entries(KEY_FILTERS)) out.push(`  ${k.padEnd(8)} ${v.description}`);
  out.push("", `PHASES (fixed order): ${PHASES.join(" → ")} → commit → render`);
  return out.join("\n");
}
