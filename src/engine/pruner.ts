// createPruner: the programmatic API shared by the plugin, the CLI and external measurement.
import { buildGraph, tokensOf, type Graph } from "../graph/graph.js";
import type { ExplainEntry, Message, Pruner } from "../graph/types.js";
import { defaultConfig, type ConfigLayer } from "../rules/config.js";
import type { Problem } from "../rules/problems.js";
import { resolveRules, type ResolvedRules } from "../rules/resolve.js";
import type { AcpConfig } from "../rules/types.js";
import { runPhases, type CallResult } from "./phases.js";
import { render } from "./render.js";
import { compileRuleSet, type CompiledRuleSet } from "./ruleset.js";
import { SessionRuntime } from "./session.js";
import { loadState, newState, saveState, type SessionState } from "./state.js";

export interface PrunerOptions {
  /** compact | balanced | verbose, or a preset file path. Overrides config.preset. */
  preset?: string;
  /** Parsed configuration (acp.jsonc shape); missing keys take defaults. */
  config?: Partial<AcpConfig>;
  /** Extra rule files or folders. */
  rules?: string[];
  /** Folder for per-session state files; without it state lives in memory only. */
  stateDir?: string;
  /** Config layers and user rule folders as found by loadConfig (plugin use). */
  layers?: ConfigLayer[];
  ruleDirs?: string[];
  /** Called with every error the pruner swallowed (it never throws from transform). */
  onError?: (error: unknown, where: string) => void;
}

export interface AcpPruner extends Pruner {
  readonly resolved: ResolvedRules;
  readonly problems: Problem[];
  readonly config: AcpConfig;
  /** Result of the last transform per session (for notifications and stats). */
  lastCall(sessionID: string): (CallResult & { sessionID: string }) | undefined;
  /** Session state (decisions), loading it from disk if needed. */
  state(sessionID: string): SessionState;
  /** Removes a committed decision so the part renders in full again from the next call. */
  restore(sessionID: string, partId: string): boolean;
}

export function createPruner(options: PrunerOptions = {}): AcpPruner {
  const config: AcpConfig = { ...defaultConfig(), ...options.config };
  if (options.preset) config.preset = options.preset;
  if (options.rules) config.ruleFiles = [...config.ruleFiles, ...options.rules];
  const resolved = resolveRules({ config, layers: options.layers, ruleDirs: options.ruleDirs });
  const problems = [...resolved.problems];
  let ruleSet: CompiledRuleSet;
  try {
    ruleSet = compileRuleSet(resolved.rules);
  } catch (e) {
    problems.push({ file: "<rules>", line: 1, col: 1, severity: "error", message: (e as Error).message, ruleId: "compile" });
    ruleSet = compileRuleSet([]);
  }
  const configFacts = { protectedTools: config.protectedTools, protectedFiles: config.protectedFiles };
  const sessions = new Map<string, SessionRuntime>();
  const last = new Map<string, CallResult & { sessionID: string }>();
  const onError = options.onError ?? (() => {});

  function runtime(sessionID: string): SessionRuntime {
    let rt = sessions.get(sessionID);
    if (!rt) {
      const state = options.stateDir ? loadState(options.stateDir, sessionID, (m) => onError(new Error(m), "state")) : newState(sessionID);
      rt = new SessionRuntime(ruleSet, configFacts, state);
      sessions.set(sessionID, rt);
    }
    return rt;
  }

  function promptTokens(g: Graph): number {
    let chars = 0;
    for (const n of g.nodes) chars += n.outputChars + (typeof n.part.text === "string" ? n.part.text.length : 0);
    return tokensOf(chars);
  }

  function transform(messages: Message[]): void {
    if (!config.enabled || !Array.isArray(messages) || messages.length === 0) return;
    try {
      const graph = buildGraph(messages);
      if (!graph.sessionID) return;
      const rt = runtime(graph.sessionID);
      const rebuilt = rt.update(graph);
      const tokens = resolved.commit.pressureTokens > 0 ? promptTokens(graph) : 0;
      const result = runPhases(rt, resolved.commit, tokens);
      render(graph, rt.state.decisions);
      const state = rt.state;
      state.calls++;
      state.sentUpTo = messages[messages.length - 1]?.info?.id;
      last.set(graph.sessionID, { ...result, rebuilt, sessionID: graph.sessionID });
      if (options.stateDir) saveState(options.stateDir, state);
    } catch (e) {
      // Fail open: the request goes out unpruned rather than failing the user's turn.
      onError(e, "transform");
    }
  }

  return {
    resolved,
    problems,
    config,
    transform,
    systemPrompt: () => "",
    explain(sessionID: string): ExplainEntry[] {
      const rt = sessions.get(sessionID);
      if (!rt) return [];
      const out: ExplainEntry[] = [];
      for (const [partId, slots] of Object.entries(rt.state.decisions)) {
        const node = rt.graph?.byId.get(partId);
        for (const d of [slots.output, slots.input]) {
          if (d) out.push({ partId, messageId: node?.message.info.id ?? "", rule: d.rule, action: d.action, tokensSaved: d.tokens, tool: node?.part.tool });
        }
      }
      return out;
    },
    lastCall: (id) => last.get(id),
    state: (id) => runtime(id).state,
    restore(sessionID, partId) {
      const rt = runtime(sessionID);
      if (!rt.state.decisions[partId]) return false;
      delete rt.state.decisions[partId];
      (rt.state.pinned ??= {})[partId] = true;
      if (options.stateDir) saveState(options.stateDir, rt.state);
      return true;
    },
  };
}
