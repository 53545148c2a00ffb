// Quote events (docs/simulate.md): lines an assistant writes that it can only have taken from an earlier
// tool output. A quote event whose line the pruned prompt no longer shows is a quote-loss: the agent used
// a line the pruner had hidden.
import type { Message, Part } from "../graph/types.js";
import type { Unit } from "../graph/prompt.js";
import { forEachString, indexedLine, MIN_QUOTE_CHARS } from "../graph/quote-lines.js";

export { indexedLine, MIN_QUOTE_CHARS };

export interface QuoteEvent {
  /** The assistant message that wrote the line (the call it belongs to). */
  messageId: string;
  /** The trimmed line. */
  line: string;
  /** Completed tool parts, oldest first, whose output held the line before this message. */
  sourcePartIds: string[];
}

/** The lines (trimmed, ≥ MIN_QUOTE_CHARS, first occurrence only) an assistant message writes. */
export function writtenLines(message: Message): string[] {
  const lines = new Set<string>();
  const addText = (text: string) => {
    for (const raw of text.split("\n")) {
      const line = raw.trim();
      if (line.length >= MIN_QUOTE_CHARS) lines.add(line);
    }
  };
  for (const part of message.parts) {
    if (part.type === "text" && typeof part.text === "string") addText(part.text);
    if (part.type === "tool") forEachString(part.state?.input, addText);
  }
  return [...lines];
}

/**
 * Walks a session in message order and reports each assistant message's quote events. Feed every
 * message, in order, to `step`; an assistant message's events are computed against what came before it.
 */
export class QuoteTracker {
  /** Indexed line → ids of completed tool parts whose output contains it. */
  private readonly outputLines = new Map<string, string[]>();
  /** Every line any assistant message has written so far. */
  private readonly written = new Set<string>();

  /** Returns the quote events of `message` (none for non-assistant messages), then indexes it. */
  step(message: Message): QuoteEvent[] {
    const events: QuoteEvent[] = [];
    if (message.info.role === "assistant") {
      // A compaction summary restates the history on the host's behalf: it is not the agent using a line,
      // so it makes no quote events. What it writes still counts as written: a later assistant message
      // repeating that line may be quoting the summary, not the tool output.
      const quoting = !message.info.summary;
      for (const line of writtenLines(message)) {
        const sources = this.outputLines.get(line);
        if (quoting && sources && !this.written.has(line)) {
          events.push({ messageId: message.info.id, line, sourcePartIds: [...sources] });
        }
        this.written.add(line);
      }
    }
    for (const part of message.parts) this.indexToolOutput(part);
    return events;
  }

  private indexToolOutput(part: Part): void {
    if (part.type !== "tool" || part.state?.status !== "completed") return;
    const output = part.state.output;
    if (typeof output !== "string") return;
    for (const raw of output.split("\n")) {
      const line = indexedLine(raw);
      if (line.length < MIN_QUOTE_CHARS) continue;
      const sources = this.outputLines.get(line);
      if (!sources) this.outputLines.set(line, [part.id]);
      else if (sources[sources.length - 1] !== part.id) sources.push(part.id);
    }
  }
}

/**
 * "Appears in the rendered prompt" is tested as plain substring containment of the trimmed line in the
 * text of any unit (units are joined with "\n", which a line never contains, so no match spans units).
 * Containment, not line equality, so a line still shown with its line-number prefix, or inside a longer
 * line, counts as visible.
 */
export class PromptText {
  private joined: string | undefined;
  constructor(private readonly units: Unit[]) {}
  contains(line: string): boolean {
    this.joined ??= this.units.map((unit) => unit.text).join("\n");
    return this.joined.includes(line);
  }
}
