// What counts as a quoted line, shared by the engine's `idleTurns` fact (engine/use.ts) and the
// quote-loss measurement (sim/quotes.ts), so the fact sees the quotes the measurement counts.

/** Shortest line (after trimming) that counts: shorter lines are too common to prove a quote. */
export const MIN_QUOTE_CHARS = 40;

/** Leading line-number prefixes that read-style tools put before each line: `12: `, `12:`, `12→`, `12\t`. */
const LINE_NUMBER_PREFIX = /^\s*\d+[:→\t]\s?/;

/** A tool-output line as indexed: line-number prefix removed, then trimmed. */
export function indexedLine(raw: string): string {
  // the prefix starts with a space or a digit: an ASCII line starting with anything else has none
  const c = raw.charCodeAt(0);
  if (c < 128 && c > 32 && (c < 48 || c > 57)) return raw.trim();
  return raw.replace(LINE_NUMBER_PREFIX, "").trim();
}

/** Calls `visit` with every string in a JSON value (a tool input), depth first. */
export function forEachString(value: unknown, visit: (text: string) => void): void {
  if (typeof value === "string") visit(value);
  else if (Array.isArray(value)) for (const item of value) forEachString(item, visit);
  else if (value && typeof value === "object") for (const item of Object.values(value)) forEachString(item, visit);
}
