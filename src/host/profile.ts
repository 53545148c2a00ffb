// OpenCode as the engine sees it (src/graph/host.ts): checked against opencode 1.18 (message-v2.ts
// toModelMessages; docs/simulate.md "What the provider receives").
import type { HostProfile } from "../graph/host.js";
import { metadataHasKey } from "../graph/metadata.js";

// Metadata by which a provider verifies a reasoning block: Anthropic's and Bedrock's `signature` /
// `redactedData`, Google's `thoughtSignature`, OpenAI's `reasoningEncryptedContent`.
const SIGNATURE = /signature|encrypted|redacted/i;
// Reasoning a provider keeps for the current turn only: signed, or an OpenAI Responses item
// (`itemId`). OpenAI-compatible reasoning (`reasoning_content`) carries none of these, and those
// providers cache it with the rest of the prefix.
const TURN_SCOPED_REASONING = new RegExp(`${SIGNATURE.source}|itemId`, "i");

export const OPENCODE: HostProfile = {
  clearedOutput: "[Old tool result content cleared]",
  interruptedOutput: "[Tool execution was interrupted]",
  compactionPrompt: "What did we do so far?",
  subtaskPrompt: "The following tool was executed by the user",
  attachedFile: (mime, filename) => `[Attached ${mime}: ${filename}]`,
  abortedError: "MessageAbortedError",
  signatureKey: SIGNATURE,
  dropsAtNextTurn: (part) => part.type === "reasoning" && metadataHasKey(part.metadata, TURN_SCOPED_REASONING),
  pruneTool: "context_prune",
  partIdPrefix: "prt_",
  idTag: { open: "[acp:", close: "]" },
};
