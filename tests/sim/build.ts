import { fileURLToPath } from "node:url";
// Tiny hand-built sessions for the measurement tests: every part id is given by the test, so that
// expectations can name exactly which unit is which.
import type { Message, MessageInfo, Part } from "../../src/graph/types.js";
import type { Session } from "../../src/sim/load.js";

export const SESSION_ID = "ses_sim";

/** The development corpus (54 sessions); the corpus tests are skipped where it is absent. */
// ../shared sits beside the repository (as on CI); ACP_CORPUS overrides.
export const CORPUS = process.env.ACP_CORPUS ?? fileURLToPath(new URL("../../../shared/corpus/sessions", import.meta.url));
/** The 17 multi-turn sessions the presets were not tuned on; ACP_CORPUS_MULTITURN overrides. */
export const MULTITURN = process.env.ACP_CORPUS_MULTITURN ?? fileURLToPath(new URL("../../../shared/corpus/sessions-multiturn", import.meta.url));

export function msg(id: string, role: "user" | "assistant", parts: Omit<Part, "messageID" | "sessionID">[], info: Partial<MessageInfo> = {}): Message {
  return {
    info: { id, sessionID: SESSION_ID, role, ...info },
    parts: parts.map((p) => ({ sessionID: SESSION_ID, messageID: id, ...p }) as Part),
  };
}

export const text = (id: string, value: string, extra: Partial<Part> = {}) => ({ id, type: "text", text: value, ...extra });
/** Anthropic's signed thinking: dropped by the provider once a later user message is sent. */
export const reasoning = (id: string, value: string) => ({ id, type: "reasoning", text: value, metadata: { anthropic: { signature: "sig" } } });

export function tool(id: string, name: string, input: Record<string, unknown>, output: string, extra: Record<string, unknown> = {}) {
  return { id, type: "tool", tool: name, callID: `call_${id}`, state: { status: "completed", input, output, title: "", metadata: {}, time: { start: 1, end: 2, ...extra } } };
}

export function erroredTool(id: string, name: string, input: Record<string, unknown>, error: string) {
  return { id, type: "tool", tool: name, callID: `call_${id}`, state: { status: "error", input, error, time: { start: 1, end: 2 } } };
}

export function session(messages: Message[]): Session {
  return { id: SESSION_ID, file: "test.json", messages };
}

/** A tool output of `n` numbered lines, `prefix` naming them (each line is well over 40 chars). */
export function numberedLines(prefix: string, n: number): string {
  return Array.from({ length: n }, (_, i) => `${i + 1}: ${prefix} line ${i + 1} of a long enough file body here`).join("\n");
}
