// OpenCode as the engine sees it (src/graph/host.ts): checked against opencode 1.18 (message-v2.ts
// toModelMessages; docs/simulate.md "What the provider receives").
import type { HostProfile } from "../graph/host.js";
import { metadataHasKey } from "../graph/metadata.js";

// Reasoning a provider keeps for the current turn only, known by the metadata OpenCode stores with
// it: Anthropic's and Bedrock's `signature` / `redactedData`, Google's `thoughtSignature`, OpenAI's
// Responses `itemId` / `reasoningEncryptedContent`. OpenAI-compatible reasoning (`reasoning_content`)
// carries none, and those providers cache it with the rest of the prefix.
const TURN_SCOPED_REASONING = /signature|encrypted|redacted|itemId/i;

export const OPENCODE: HostProfile = {
  clearedOutput: "[Old tool result content cleared]",
  interruptedOutput: "[Tool execution was interrupted]",
  compactionPrompt: "What did we do so far?",
  subtaskPrompt: "The following tool was executed by the user",
  attachedFile: (mime, filename) => `[Attached ${mime}: ${filename}]`,
  abortedError: "MessageAbortedError",
  // Anthropic and Bedrock `signature` / `redactedData`, Google `thoughtSignature`, OpenAI `reasoningEncryptedContent`
  signatureKey: /signature|encrypted|redacted/i,
  dropsAtNextTurn: (part) => part.type === "reasoning" && metadataHasKey(part.metadata, TURN_SCOPED_REASONING),
  pruneTool: "context_prune",
  partIdPrefix: "prt_",
  idTag: { open: "[acp:", close: "]" },
};
