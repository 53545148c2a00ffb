// OpenCode MessageV2 shapes as they reach `experimental.chat.messages.transform`.
// Deliberately loose: the host's schema evolves and recorded sessions carry odd shapes,
// so every field the engine reads is optional and checked at use.

export interface ToolState {
  status?: "pending" | "running" | "completed" | "error" | string;
  input?: Record<string, unknown>;
  output?: unknown;
  error?: unknown;
  title?: string;
  metadata?: Record<string, unknown>;
  time?: { start?: number; end?: number; compacted?: number };
  attachments?: unknown[];
  [k: string]: unknown;
}

export interface Part {
  id: string;
  sessionID?: string;
  messageID?: string;
  type: string;
  text?: string;
  synthetic?: boolean;
  ignored?: boolean;
  tool?: string;
  callID?: string;
  state?: ToolState;
  mime?: string;
  filename?: string;
  url?: string;
  metadata?: Record<string, unknown>;
  [k: string]: unknown;
}

export interface MessageInfo {
  id: string;
  sessionID: string;
  role: "user" | "assistant" | string;
  parentID?: string;
  summary?: unknown;
  error?: { name?: string; [k: string]: unknown };
  agent?: string;
  mode?: string;
  [k: string]: unknown;
}

export interface Message {
  info: MessageInfo;
  parts: Part[];
}

export interface TransformOptions {
  /**
   * The copy OpenCode's compaction agent summarises: pruned like any request, but nothing meant
   * for the model is added (id tags would end up in the summary, naming parts no longer there).
   */
  compaction?: boolean;
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
}
