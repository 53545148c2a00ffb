// When each part was last in use (the `idleTurns` fact): what predicts that an agent still needs an
// output is that it keeps working with its subject (scripts/quote-predictors.ts, docs/tuning.md).
// A part is in use on its own call, when a later tool call has an equal value in a field of the
// same name (the same file, command, URL, pattern...), when later text names one of its values'
// file names, and when a later assistant message quotes a line of its output. Generic: no tool
// names, only input fields, text and lines.
import type { PartNode } from "../graph/graph.js";

/** Lines shorter than this (trimmed) are too common to prove a quote (as sim/quotes.ts). */
const MIN_QUOTE_CHARS = 40;
/** Input values that can name a subject: short, one line (not a file's content). */
const MAX_SUBJECT_CHARS = 300;
/** Leading line-number prefixes that read-style outputs put before each line. */
const LINE_NUMBER_PREFIX = /^\s*\d+[:→\t]\s?/;
/** Path-like words in text: something with a dot or slash and word characters around it. */
const PATH_WORD = /[\w@~+-]*(?:[./][\w@~+-]+)+/g;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isSubject = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= MAX_SUBJECT_CHARS && !v.includes("\n");

/** The file name a value names, if it looks like a path (has a dot or a slash), else undefined. */
function fileName(v: string): string | undefined {
  if (!/[./]/.test(v) || /\s/.test(v)) return undefined;
  const base = v.replace(/[/\\]+$/, "").split(/[/\\]/).pop();
  return base && base.length >= 3 && /\w/.test(base) ? base : undefined;
}

export class UseTracker {
  /** field + "\0" + value → the last turn a tool call had it. */
  private readonly touched = new Map<string, number>();
  /** file name → the last turn text named it. */
  private readonly named = new Map<string, number>();
  /** node index → the last turn an assistant message quoted a line of its output. */
  private readonly quoted = new Map<number, number>();
  /** output line → the newest node whose output holds it. */
  private readonly lines = new Map<string, number>();

  /** Records one part, in history order (each node once). */
  see(n: PartNode): void {
    const p = n.part;
    const assistant = n.message.info?.role === "assistant";
    if (p.type === "tool") {
      const input = p.state?.input;
      if (isObject(input)) {
        for (const k of Object.keys(input)) {
          const v = input[k];
          if (isSubject(v)) this.touched.set(k + "\0" + v, n.turn);
        }
        if (assistant) this.quotes(input, n.turn);
      }
      const output = p.state?.status === "completed" ? p.state.output : undefined;
      if (typeof output === "string" && !p.state?.time?.compacted)
        for (const raw of output.split("\n")) {
          const line = raw.replace(LINE_NUMBER_PREFIX, "").trim();
          if (line.length >= MIN_QUOTE_CHARS) this.lines.set(line, n.index);
        }
    } else if (p.type === "text" && typeof p.text === "string" && !p.ignored) {
      for (const word of p.text.match(PATH_WORD) ?? []) {
        const name = fileName(word);
        if (name) this.named.set(name, n.turn);
      }
      if (assistant) this.quotes(p.text, n.turn);
    }
  }

  /** Lines an assistant writes (text or any string of a tool input) that earlier outputs hold. */
  private quotes(value: unknown, turn: number): void {
    if (typeof value === "string") {
      if (value.length < MIN_QUOTE_CHARS) return;
      for (const raw of value.split("\n")) {
        const line = raw.trim();
        if (line.length < MIN_QUOTE_CHARS) continue;
        const src = this.lines.get(line);
        if (src !== undefined) this.quoted.set(src, turn);
      }
    } else if (Array.isArray(value)) for (const v of value) this.quotes(v, turn);
    else if (isObject(value)) for (const k of Object.keys(value)) this.quotes(value[k], turn);
  }

  /** User turns since the part was last in use (0: in use this turn). */
  idleTurns(n: PartNode): number {
    let last = n.turn;
    const input = n.part.type === "tool" ? n.part.state?.input : undefined;
    if (isObject(input))
      for (const k of Object.keys(input)) {
        const v = input[k];
        if (!isSubject(v)) continue;
        const t = this.touched.get(k + "\0" + v);
        if (t !== undefined && t > last) last = t;
        const name = fileName(v);
        const named = name === undefined ? undefined : this.named.get(name);
        if (named !== undefined && named > last) last = named;
      }
    const q = this.quoted.get(n.index);
    if (q !== undefined && q > last) last = q;
    return Math.max(0, n.turn + n.ageTurns - last);
  }
}
