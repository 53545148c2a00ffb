// The programmatic face of the engine (createPruner returns an AcpPruner, which extends Pruner).
import type { Message } from "../graph/types.js";

export interface TransformOptions {
  /**
   * The copy OpenCode's compaction agent summarises: pruned like any request, but nothing meant
   * for the model is added (id tags would end up in the summary, naming parts no longer there).
   */
  compaction?: boolean;
  /**
   * Pending decisions apply at once when the prompt (estimated tokens, as `commit.pressureTokens`
   * counts them) reaches this, for this request: the host's estimate of where it would compact the
   * session otherwise. The smaller of this and `commit.pressureTokens` applies; 0 or absent: only
   * `commit.pressureTokens`.
   */
  pressureTokens?: number;
  /**
   * When this request is made (ms since the epoch; default: now). Replays pass the recorded time,
   * so the prompt-cache lifetime is judged as it was live.
   */
  now?: number;
  /**
   * false: the agent of this request has no prune tool (a subagent), so no ids, tags or note,
   * whatever the config says.
   */
  tool?: boolean;
}

/** The programmatic face of the engine; the plugin, the CLI and `acp simulate` all use it. */
export interface Pruner {
  /** Prunes `messages` in place (the array OpenCode hands to the transform hook). Never throws. */
  transform(messages: Message[], options?: TransformOptions): void;
  /** Text the plugin adds to the system prompt for this session, or "". */
  systemPrompt(sessionID: string): string;
  /** Every pruned part of the session: which rule, which action, how many tokens it saved. */
  explain(sessionID: string): ExplainEntry[];
}

export interface ExplainEntry {
  partId: string;
  messageId: string;
  rule: string;
  action: string;
  tokensSaved: number;
  tool?: string;
  /** What the decision replaces: the tool's output (or the part's text), or its input. */
  slot: "output" | "input";
}
