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
