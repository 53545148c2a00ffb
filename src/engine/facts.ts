// How each fact of the catalogue (lang/facts.ts) is read from a part of the graph.
import { type PartNode, TERMINAL, textOf } from "../graph/graph.js";
import { clearedByHost } from "../graph/prompt.js";
import { FACT_DECLS, type FactDecl, type FactName } from "../lang/facts.js";

export { FACT_NAMES, type FactKind } from "../lang/facts.js";

export interface FactContext {
  config: { protectedTools: string[]; protectedFiles: string[] };
  params: Record<string, unknown>;
  isProtected(node: PartNode): boolean;
  supersededRule(node: PartNode): string | undefined;
  decidedRule(node: PartNode): string | undefined;
  /** User turns since the part was last in use (engine/use.ts). */
  idleTurns(node: PartNode): number;
  /** Tool calls since the part was last in use (engine/use.ts). */
  idleCalls(node: PartNode): number;
  idleWorkCalls(node: PartNode): number;
  /** User turns since a message the user typed named the part's file; Infinity: never (engine/use.ts). */
  userNamedTurns(node: PartNode): number;
  /** User turns the part's subject was in use in so far (engine/use.ts). */
  useTurns(node: PartNode): number;
  /** User turns in which a call changed the part's subject so far (engine/use.ts). */
  changeTurns(node: PartNode): number;
  /** The host leaves the part out of the prompt once a later user message exists (HostProfile.dropsAtNextTurn). */
  hostDrops?(node: PartNode): boolean;
  /** Tokens of the whole prompt before pruning (the `promptTokens` fact); 0 when not given. */
  promptTokens?(): number;
}

export type FactGetter = (node: PartNode, ctx: FactContext) => unknown;

export interface FactDef extends FactDecl {
  get: FactGetter;
}

const isTool = (n: PartNode) => n.part.type === "tool";
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const lines = (s: string) => (s.length === 0 ? 0 : s.split("\n").length);

/** One getter per fact of the catalogue (a fact added there without one fails to compile). */
const GETTERS: Record<FactName, FactGetter> = {
  partType: (n) => n.part.type,
  role: (n) => n.message.info?.role,
  tool: (n) => (isTool(n) ? n.part.tool : undefined),
  status: (n) => n.part.state?.status,
  input: (n) => (isObject(n.part.state?.input) ? n.part.state!.input : {}),
  outputChars: (n) => n.outputChars,
  outputLines: (n) => (isTool(n) ? lines(textOf(n.part.state?.status === "completed" ? n.part.state.output : n.part.state?.error)) : 0),
  inputChars: (n) => (isTool(n) ? textOf(n.part.state?.input ?? {}).length : 0),
  textChars: (n) => (typeof n.part.text === "string" ? n.part.text.length : 0),
  text: (n) => n.part.text,
  synthetic: (n) => n.part.synthetic === true,
  ignored: (n) => n.part.ignored === true,
  fileMime: (n) => (n.part.type === "file" ? n.part.mime : undefined),
  fileName: (n) => (n.part.type === "file" ? n.part.filename : undefined),
  compacted: (n) => clearedByHost(n.part),
  messageError: (n) => Boolean(n.message.info?.error),
  terminal: (n) => TERMINAL.has(n.part.state?.status as string),
  ageTurns: (n) => n.ageTurns,
  ageCalls: (n) => n.ageCalls,
  afterLastUser: (n) => n.ageTurns === 0,
  idleTurns: (n, c) => c.idleTurns(n),
  idleCalls: (n, c) => c.idleCalls(n),
  idleWorkCalls: (n, c) => c.idleWorkCalls(n),
  userNamedTurns: (n, c) => c.userNamedTurns(n),
  useTurns: (n, c) => c.useTurns(n),
  changeTurns: (n, c) => c.changeTurns(n),
  hostDrops: (n, c) => c.hostDrops?.(n) ?? false,
  promptTokens: (_n, c) => c.promptTokens?.() ?? 0,
  toolTokensNewer: (n) => n.toolTokensNewer,
  protectedTools: (_n, c) => c.config.protectedTools,
  protectedFiles: (_n, c) => c.config.protectedFiles,
  params: (_n, c) => c.params,
  protected: (n, c) => c.isProtected(n),
  superseded: (n, c) => c.supersededRule(n) !== undefined,
  pruned: (n, c) => c.decidedRule(n) !== undefined,
};

/** The session's clocks: user turns, tool calls, tokens of completed tool output (graph.ts Clock). */
export type Clock = "turns" | "calls" | "tokens";

/**
 * Facts that never grow faster than their clock while the history only grows at its end: a part's
 * value on a later call is at most its value now plus the clock's growth since (wake.ts). The
 * getters above read them from the graph's clock and from when a part was last in use, which only
 * moves later (so idleTurns, idleCalls and idleWorkCalls may also drop).
 */
export const GROWTH: Partial<Record<string, Clock>> = { ageTurns: "turns", idleTurns: "turns", ageCalls: "calls", idleCalls: "calls", idleWorkCalls: "calls", userNamedTurns: "turns", toolTokensNewer: "tokens" };

export const FACTS: FactDef[] = FACT_DECLS.map((d) => ({ ...d, get: GETTERS[d.name as FactName] }));
export const factByName = new Map(FACTS.map((f) => [f.name, f]));
