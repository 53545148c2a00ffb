// What the provider receives for one call, as an ordered list of units (docs/simulate.md, "What the provider receives",
// after OpenCode 1.18 `toModelMessages`). Each unit carries the id of the part it comes from, so that two
// prompts can be compared unit by unit for the reusable (cached) prefix.
import type { Message, Part } from "./types.js";

export interface Unit {
  /** The part the unit renders; SYSTEM_UNIT_ID for the pruner's system-prompt text. */
  partId: string;
  text: string;
}

export const SYSTEM_UNIT_ID = "(system)";
export const CLEARED_TEXT = "[Old tool result content cleared]";
export const INTERRUPTED_TEXT = "[Tool execution was interrupted]";
export const COMPACTION_TEXT = "What did we do so far?";
export const SUBTASK_TEXT = "The following tool was executed by the user";

/** Tokens of one unit: ceil(chars / 4), chars counted as JavaScript string length (UTF-16 units). */
export function unitTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function promptTokens(units: Unit[]): number {
  let sum = 0;
  for (const unit of units) sum += unitTokens(unit.text);
  return sum;
}

/**
 * Renders a call's context (already transformed by the pruner) plus the text the pruner adds to the
 * system prompt. The system text comes first, as the system prompt does; it is left out when empty.
 */
export function renderPrompt(context: Message[], systemText = ""): Unit[] {
  const units: Unit[] = [];
  if (systemText) units.push({ partId: SYSTEM_UNIT_ID, text: systemText });
  const lastUser = lastUserIndex(context);
  // Providers drop (or do not bill) the reasoning of turns before the last user message.
  context.forEach((message, i) => renderMessage(message, i > lastUser, units));
  return units;
}

/** Appends the units of one message; `keepReasoning` is true only after the context's last user message. */
export function renderMessage(message: Message, keepReasoning: boolean, units: Unit[] = []): Unit[] {
  for (const part of message.parts) renderPart(part, message, keepReasoning, units);
  return units;
}

/** Appends the units of one part of `message` (none when the provider is not sent that part). */
export function renderPart(part: Part, message: Message, keepReasoning: boolean, units: Unit[] = []): Unit[] {
  const role = message.info.role;
  if (role === "user") renderUserPart(part, units);
  else if (role === "assistant" && !isSkippedAssistant(message)) renderAssistantPart(part, keepReasoning, units);
  return units;
}

/** Tokens of one part as the provider receives it (the sum over its units, as `promptTokens` counts them). */
export function partTokens(part: Part, message: Message, keepReasoning: boolean): number {
  return promptTokens(renderPart(part, message, keepReasoning));
}

/** An assistant message with an error other than an abort never reaches the provider. */
export function isSkippedAssistant(message: Message): boolean {
  const error = message.info.error;
  return !!error && error.name !== "MessageAbortedError";
}

/** The last user message the provider receives: one left with nothing to send (notices of ignored parts only) is dropped. */
export function lastUserIndex(context: Message[]): number {
  for (let i = context.length - 1; i >= 0; i--) if (context[i].info.role === "user" && renderMessage(context[i], false).length > 0) return i;
  return -1;
}

function renderUserPart(part: Part, units: Unit[]): void {
  switch (part.type) {
    case "text":
      if (!part.ignored && typeof part.text === "string" && part.text !== "") {
        units.push({ partId: part.id, text: part.text });
      }
      return;
    case "file":
      units.push({ partId: part.id, text: `[Attached ${part.mime ?? ""}: ${part.filename ?? ""}]` });
      return;
    case "compaction":
      units.push({ partId: part.id, text: COMPACTION_TEXT });
      return;
    case "subtask":
      units.push({ partId: part.id, text: SUBTASK_TEXT });
      return;
  }
}

function renderAssistantPart(part: Part, keepReasoning: boolean, units: Unit[]): void {
  switch (part.type) {
    // Empty text and reasoning are not sent (providers reject or drop empty blocks). This matters for
    // prefix breaks: dropping an earlier turn's empty reasoning must not count as a break.
    case "text":
      if (part.text) units.push({ partId: part.id, text: asText(part.text) });
      return;
    case "reasoning":
      if (keepReasoning && part.text) units.push({ partId: part.id, text: asText(part.text) });
      return;
    case "tool":
      units.push({ partId: part.id, text: toolCallText(part) });
      units.push({ partId: part.id, text: toolResultText(part) });
      return;
  }
}

/** The call unit: tool name followed by the JSON of its input. */
export function toolCallText(part: Part): string {
  return `${part.tool ?? ""}${JSON.stringify(part.state?.input ?? {})}`;
}

/** The result unit, as toModelMessages sends it for each tool state. */
export function toolResultText(part: Part): string {
  const state = part.state ?? {};
  switch (state.status) {
    case "completed":
      return state.time?.compacted ? CLEARED_TEXT : asText(state.output);
    case "error":
      return asText(state.error);
    default: // pending, running
      return INTERRUPTED_TEXT;
  }
}

function asText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  return JSON.stringify(value);
}
