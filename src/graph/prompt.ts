// What the provider receives for one call, as an ordered list of units (docs/simulate.md, "What the provider receives",
// after OpenCode 1.18 `toModelMessages`). Each unit carries the id of the part it comes from, so that two
// prompts can be compared unit by unit for the reusable (cached) prefix.
import type { HostProfile } from "./host.js";
import type { Message, Part } from "./types.js";

export interface Unit {
  /** The part the unit renders; SYSTEM_UNIT_ID for the pruner's system-prompt text. */
  partId: string;
  text: string;
}

export const SYSTEM_UNIT_ID = "(system)";

/** The token estimate everywhere (prompts, facts, stats): ceil(chars / 4), chars as JavaScript string length (UTF-16 units). */
export const tokensOf = (chars: number): number => Math.ceil(chars / 4);

/** Tokens of one unit. */
export function unitTokens(text: string): number {
  return tokensOf(text.length);
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
export function renderPrompt(context: Message[], host: HostProfile, systemText = ""): Unit[] {
  const units: Unit[] = [];
  if (systemText) units.push({ partId: SYSTEM_UNIT_ID, text: systemText });
  const lastUser = lastUserIndex(context, host);
  // Providers that keep reasoning for the current turn only drop (or do not bill) the reasoning of
  // turns before the last user message (host.dropsAtNextTurn); others get it back every time.
  context.forEach((message, i) => renderMessage(message, i > lastUser, host, units));
  return units;
}

/** Appends the units of one message; `keepReasoning` is true only after the context's last user message. */
export function renderMessage(message: Message, keepReasoning: boolean, host: HostProfile, units: Unit[] = []): Unit[] {
  for (const part of message.parts) renderPart(part, message, keepReasoning, host, units);
  return units;
}

/** Appends the units of one part of `message` (none when the provider is not sent that part). */
export function renderPart(part: Part, message: Message, keepReasoning: boolean, host: HostProfile, units: Unit[] = []): Unit[] {
  const role = message.info.role;
  if (role === "user") renderUserPart(part, host, units);
  else if (role === "assistant" && !isSkippedAssistant(message, host)) renderAssistantPart(part, keepReasoning, host, units);
  return units;
}

/** Tokens of one part as the provider receives it (the sum over its units, as `promptTokens` counts them). */
export function partTokens(part: Part, message: Message, keepReasoning: boolean, host: HostProfile): number {
  return promptTokens(renderPart(part, message, keepReasoning, host));
}

/** An assistant message with an error other than an abort never reaches the provider. */
export function isSkippedAssistant(message: Message, host: HostProfile): boolean {
  const error = message.info.error;
  return !!error && error.name !== host.abortedError;
}

/** The last user message the provider receives, up to `end`: one left with nothing to send (notices of ignored parts only, empty text) is dropped. */
export function lastUserIndex(context: Message[], host: HostProfile, end = context.length - 1): number {
  for (let i = end; i >= 0; i--) if (context[i]?.info?.role === "user" && renderMessage(context[i], false, host).length > 0) return i;
  return -1;
}

function renderUserPart(part: Part, host: HostProfile, units: Unit[]): void {
  switch (part.type) {
    case "text":
      if (!part.ignored && typeof part.text === "string" && part.text !== "") {
        units.push({ partId: part.id, text: part.text });
      }
      return;
    case "file":
      units.push({ partId: part.id, text: host.attachedFile(part.mime ?? "", part.filename ?? "") });
      return;
    case "compaction":
      units.push({ partId: part.id, text: host.compactionPrompt });
      return;
    case "subtask":
      units.push({ partId: part.id, text: host.subtaskPrompt });
      return;
  }
}

function renderAssistantPart(part: Part, keepReasoning: boolean, host: HostProfile, units: Unit[]): void {
  switch (part.type) {
    // Empty text and reasoning are not sent (providers reject or drop empty blocks). This matters for
    // prefix breaks: dropping an earlier turn's empty reasoning must not count as a break.
    case "text":
      if (part.text) units.push({ partId: part.id, text: textOf(part.text) });
      return;
    case "reasoning":
      if ((keepReasoning || !host.dropsAtNextTurn(part)) && part.text) units.push({ partId: part.id, text: textOf(part.text) });
      return;
    case "tool":
      units.push({ partId: part.id, text: toolCallText(part) });
      units.push({ partId: part.id, text: toolResultText(part, host) });
      return;
  }
}

/** The call unit: tool name followed by the JSON of its input. */
export function toolCallText(part: Part): string {
  return `${part.tool ?? ""}${JSON.stringify(part.state?.input ?? {})}`;
}

/** The host cleared this tool output itself (state.time.compacted): the provider gets its placeholder, not the output. */
export const clearedByHost = (part: Part): boolean => Boolean(part.state?.time?.compacted);

/** The result unit, as toModelMessages sends it for each tool state. */
export function toolResultText(part: Part, host: HostProfile): string {
  const state = part.state ?? {};
  switch (state.status) {
    case "completed":
      return clearedByHost(part) ? host.clearedOutput : textOf(state.output);
    case "error":
      return textOf(state.error);
    default: // pending, running
      return host.interruptedOutput;
  }
}

/** A value as text: strings as they are, anything else as JSON ("" for none). */
export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
