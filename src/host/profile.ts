// OpenCode as the engine sees it (src/graph/host.ts): checked against opencode 1.18 (message-v2.ts
// toModelMessages; docs/simulate.md "What the provider receives").
import type { HostProfile } from "../graph/host.js";

export const OPENCODE: HostProfile = {
  clearedOutput: "[Old tool result content cleared]",
  interruptedOutput: "[Tool execution was interrupted]",
  compactionPrompt: "What did we do so far?",
  subtaskPrompt: "The following tool was executed by the user",
  attachedFile: (mime, filename) => `[Attached ${mime}: ${filename}]`,
  abortedError: "MessageAbortedError",
  // Anthropic and Bedrock `signature` / `redactedData`, Google `thoughtSignature`, OpenAI `reasoningEncryptedContent`
  signatureKey: /signature|encrypted|redacted/i,
  pruneTool: "context_prune",
  partIdPrefix: "prt_",
  idTag: { open: "[acp:", close: "]" },
};
