// What the engine, the graph and the measurement library know of the host, handed to them as a
// value (src/host/profile.ts holds OpenCode's): the texts its prompt carries in place of tool
// results, the error that still sends a message, the prune tool's name, how ids are tagged. A
// second host (OpenCode's next plugin API, a test host) is another value, not an edit across src.
import type { Part } from "./types.js";

export interface HostProfile {
  /** What the provider receives as the result of a tool call the host cleared (`state.time.compacted`). */
  clearedOutput: string;
  /** ... of a tool call that never finished (pending, running). */
  interruptedOutput: string;
  /** What it receives for a compaction part (the host's summary request). */
  compactionPrompt: string;
  /** ... for a subtask part. */
  subtaskPrompt: string;
  /** ... for an attached file of a user message. */
  attachedFile(mime: string, filename: string): string;
  /** The error name of an assistant message the user aborted: still sent (a message with any other error is not). */
  abortedError: string;
  /** Metadata keys by which the provider verifies a reasoning block (a signature, an encrypted copy). */
  signatureKey: RegExp;
  /**
   * Reasoning the provider drops once a later user message is sent (Anthropic's signed thinking,
   * OpenAI's reasoning items), so the cached prefix breaks at the previous turn's first such block;
   * other reasoning (OpenAI-compatible `reasoning_content`: DeepSeek, Kimi) is sent back with every
   * request and stays in the cached prefix.
   */
  dropsAtNextTurn(part: Part): boolean;
  /** The prune tool's name, as its instructions name it. */
  pruneTool: string;
  /** How the host's part ids begin (a prune request may name a part by its id). */
  partIdPrefix: string;
  /** The tag around a short id the model can cite: `${open}t1a${close}`. */
  idTag: { open: string; close: string };
}
