// Actions that replace a tool result (or a text part) with something shorter.
import { resultText } from "../../graph/graph.js";
import { describeCall } from "./describe.js";
import type { ActionApply, Patch } from "./types.js";

export const supersede: ActionApply = (node, opts, ctx) => {
  if (node.part.type !== "tool") return undefined;
  const by = ctx.by?.part;
  const why = by ? (by.tool === node.part.tool ? `a later ${by.tool}` : `a later ${by.tool ?? by.type}`) : "a later call";
  return { output: `${describeCall(node.part, opts.show)} → superseded by ${why}` };
};

export const clear: ActionApply = (node, opts) => {
  if (node.part.type !== "tool") return undefined;
  if (typeof opts.text === "string") return { output: opts.text };
  const chars = node.outputChars;
  return { output: `${describeCall(node.part, opts.show)} → ${opts.message ?? "output cleared"} (${chars} chars)` };
};

function splitLines(s: string): string[] {
  return s.split("\n");
}

/** Head-tail or first-line truncation with a count of what was removed. */
export function truncateText(text: string, opts: Record<string, any>): string | undefined {
  const mode = opts.mode ?? "head-tail";
  const lines = splitLines(text);
  if (mode === "first-line") {
    if (lines.length <= 1 && text.length <= (opts.maxChars ?? 300)) return undefined;
    const first = lines.find((l) => l.trim().length > 0) ?? "";
    const head = first.length > (opts.maxChars ?? 300) ? `${first.slice(0, opts.maxChars ?? 300)}…` : first;
    return `${head}\n[… ${lines.length - 1} more lines, ${text.length - head.length} chars removed]`;
  }
  const headN = opts.headLines ?? 20;
  const tailN = opts.tailLines ?? 10;
  const maxLine = opts.maxLineChars ?? 400;
  if (lines.length <= headN + tailN + 2) return undefined;
  const clip = (l: string) => (l.length > maxLine ? `${l.slice(0, maxLine)}…` : l);
  const head = lines.slice(0, headN).map(clip);
  const tail = lines.slice(lines.length - tailN).map(clip);
  const removedLines = lines.length - headN - tailN;
  const kept = head.join("\n").length + tail.join("\n").length;
  return `${head.join("\n")}\n[… ${removedLines} lines, ${text.length - kept} chars removed …]\n${tail.join("\n")}`;
}

export const truncate: ActionApply = (node, opts): Patch | undefined => {
  if (node.part.type === "tool") {
    const t = truncateText(resultText(node), opts);
    return t === undefined ? undefined : { output: t };
  }
  if (typeof node.part.text === "string") {
    const t = truncateText(node.part.text, opts);
    return t === undefined ? undefined : { text: t };
  }
  return undefined;
};

export const distill: ActionApply = (node, opts) => {
  if (node.part.type === "tool") return { output: `${describeCall(node.part)} → distilled: ${opts.summary}` };
  if (typeof node.part.text === "string") return { text: opts.summary };
  return undefined;
};
