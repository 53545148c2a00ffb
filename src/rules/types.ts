// Rule, preset and config shapes as loaded from YAML / JSONC (after validation).

import type { Phase } from "../lang/phases.js";

export { PHASES, type Phase } from "../lang/phases.js";

export interface Leaf {
  fact: string;
  operator: string;
  value: unknown; // literal, or {fact, path?} as in json-rules-engine
  path?: string;
  params?: Record<string, unknown>;
}
export interface AllCondition { all: Condition[] }
export interface AnyCondition { any: Condition[] }
export interface NotCondition { not: Condition }
export type Condition = Leaf | AllCondition | AnyCondition | NotCondition;

export interface SourceLocation {
  file: string;
  line: number;
  col: number;
}

export interface ActionSpec {
  action: string;
  [option: string]: unknown;
}

export interface RuleSpec {
  id: string;
  phase: Phase;
  description: string;
  /** Grouping key template, e.g. "file:{input.filePath|path}". */
  key?: string;
  when: Condition;
  then: ActionSpec;
  /** Tunables a condition can read through `{fact: params, path: $.name}`. */
  params: Record<string, unknown>;
  /**
   * Deprecated, has no effect: decisions on the already-sent prefix commit when the cache breaks
   * anyway or when the batch pays off (engine/commit.ts), whatever the rule. Still accepted so older
   * rule files load; lint says it is ignored.
   */
  commit?: "batch" | "immediate";
  source?: SourceLocation;
}

export type RuleSetting = "on" | "off" | { with: Record<string, unknown> };

export interface CommitPolicy {
  /** Minimum tokens freed before decisions on the already-sent prefix are applied together. */
  minTokens: number;
  /** Apply pending decisions at once when the prompt exceeds this many tokens (0 = never). */
  pressureTokens: number;
  /**
   * Cache break-even factor (0 = off). Pruning D tokens at a point with T tokens after it costs a
   * one-off re-cache of T and saves D on every later call; on Anthropic prices it pays after about
   * 11.5·T/D calls. Pending prunes apply when D × (calls since the cache was last written whole: the
   * session's start or its last expiry, as the estimate of calls to come before the next expiry, when
   * they would apply for free) ≥ breakEven × T.
   */
  breakEven: number;
  /**
   * A break-even batch (above) waits until the current turn has made this many calls: its first
   * calls say nothing of how many are to come, and a session often ends a call or two into a turn,
   * before the re-cache is repaid. minTokens, pressureTokens and a call where the cache breaks anyway
   * (the batch then re-caches only up to that break; later it would run to the prompt's end) do not
   * wait. 0: off.
   */
  minTurnCalls?: number;
  /**
   * The provider's prompt-cache lifetime in minutes (Anthropic: 5 by default, 60 with the 1-hour
   * cache). A request more than this after the previous one finds nothing cached, so every pending
   * decision applies on it for free. 0: never assume the cache expired.
   */
  cacheTtlMinutes: number;
  /**
   * A plain batch, for comparison baselines that reproduce pruners which know nothing of the cache:
   * every decision (on unsent parts too) waits until the pending ones prune outputs of minTokens
   * tokens together (their size, not what they free) or the prompt passes pressureTokens; nothing is
   * pulled in where the cache breaks anyway (dropped reasoning, or past cacheTtlMinutes), and
   * breakEven is not consulted.
   */
  plainBatch?: boolean;
  /**
   * Back-off: a rule with this many regret events in a session (a part it pruned restored by the
   * agent or the user, or its call re-run while hidden; engine/regret.ts) decides no new parts in
   * that session. What it decided before stays. 0: never back off.
   */
  regretLimit?: number;
}

export interface Preset {
  name: string;
  description: string;
  commit: CommitPolicy;
  rules: Record<string, RuleSetting>;
  source?: string;
  /** The default of the config's `tool` under this preset (acp.jsonc wins); absent: on. */
  tool?: boolean;
}

export interface AcpConfig {
  enabled: boolean;
  preset: string;
  rules: Record<string, RuleSetting>;
  ruleFiles: string[];
  protectedTools: string[];
  protectedFiles: string[];
  commit: Partial<CommitPolicy>;
  subagents: boolean;
  debug: boolean;
  /** Ignored chat message after a turn that pruned something (never sent to the model). */
  pruneNotification: "off" | "minimal" | "detailed";
  tool: boolean;
  /**
   * What the provider does with the reasoning of turns before the last user message: `dropped`
   * (a new user message breaks the cached prefix there), `sent` (cached with the rest), `auto` (the
   * host profile tells it per block: HostProfile.dropsAtNextTurn).
   */
  earlierReasoning: "auto" | "dropped" | "sent";
  /**
   * History size (tokens: the text of messages, reasoning and tool outputs, chars/4, before
   * pruning; not the system prompt or tool inputs) from which outputs get ids and the tool's
   * instructions appear, as a message in the unsent tail; 0 puts the instructions in the system
   * prompt from the first call.
   */
  idsFromTokens: number;
  /** Reminder to keep the todo list current; counts model calls (see src/host/reminders.ts). */
  todoReminder?: Partial<TodoReminderConfig>;
  /** Periodic reflection prompt once the user has written "automata". */
  automata?: Partial<AutomataConfig>;
  /** Context window size for /acp budget; overrides the model list when set. */
  contextLimit?: number;
  [k: string]: unknown;
}

export interface TodoReminderConfig {
  enabled: boolean;
  /** Model calls without a todo update before the first reminder. */
  initialTurns: number;
  /** Model calls between later reminders. */
  repeatTurns: number;
  /** Model calls a task may stay in_progress before the reminder flags it. */
  stuckTaskTurns: number;
}

export interface AutomataConfig {
  enabled: boolean;
  /** Model calls after the user's last message before each reflection. */
  initialTurns: number;
}
