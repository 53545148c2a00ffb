// Package root: the programmatic API (Node and Bun). The OpenCode plugin entry is ./host/plugin.
export { createPruner, type PrunerOptions } from "./api.js";
export { OPENCODE } from "./host/profile.js";
export type { HostProfile } from "./graph/host.js";
export type { AcpPruner } from "./engine/pruner.js";
export type { Message, Part } from "./graph/types.js";
export type { Pruner, ExplainEntry } from "./engine/api.js";
export { loadConfig, defaultConfig } from "./rules/config.js";
export { loadRuleFiles } from "./rules/load.js";
export type { RuleSpec, Preset, AcpConfig, Condition } from "./rules/types.js";
