// acp rules list / acp presets: what each rule does and which presets enable it.
import { loadRuleFiles, BUILTIN_RULES_DIR } from "../rules/load.js";
import { loadPreset, PRESET_NAMES } from "../rules/presets.js";
import type { RuleSetting } from "../rules/types.js";

const show = (s: RuleSetting | undefined) => (s === undefined ? "-" : typeof s === "string" ? s : `with ${JSON.stringify(s.with)}`);

export function listRules(extra: string[] = []): string {
  const { rules } = loadRuleFiles([BUILTIN_RULES_DIR, ...extra]);
  const presets = PRESET_NAMES.map((n) => [n, loadPreset(n).preset?.rules ?? {}] as const);
  const rows = rules.map((r) => [r.id, r.phase, r.then.action, presets.filter(([, m]) => m[r.id] !== undefined && m[r.id] !== "off").map(([n]) => n).join(",") || "-", r.description]);
  const head = ["rule", "phase", "action", "presets", "description"];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [head, ...rows].map((r) => r.map((c, i) => (i < 4 ? c.padEnd(w[i]) : c)).join("  ")).join("\n");
}

export function listPresets(): string {
  const presets = PRESET_NAMES.map((n) => [n, loadPreset(n).preset] as const);
  const { rules } = loadRuleFiles([BUILTIN_RULES_DIR]);
  const head = ["rule", ...PRESET_NAMES];
  const rows = rules.map((r) => [r.id, ...presets.map(([, p]) => show(p?.rules[r.id]))]);
  rows.push(["(commit minTokens)", ...presets.map(([, p]) => String(p?.commit.minTokens ?? "-"))]);
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const lines = [head, ...rows].map((r) => r.map((c, i) => c.padEnd(w[i])).join("  ").trimEnd());
  return [...presets.map(([n, p]) => `${n}: ${p?.description ?? "(failed to load)"}`), "", ...lines].join("\n");
}
