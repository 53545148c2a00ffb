// Actions that replace a tool result (or a text part) with something shorter.
import { resultText } from "../../graph/graph.js";
import { describeCall } from "./describe.js";
import type { ActionDef, Patch } from "./types.js";

/** Lets clear/truncate reach protected parts; the call itself stays readable. */
const OVERRIDE_PROTECTION = { type: "boolean", description: "may also cut protected outputs (e.g. old subagent results); the call and its inputs stay visible" } as const;

const rangeSchema = {
  type: "object",
  additionalProperties: false,
  properties: { offset: { type: "string", description: "input param holding the start" }, limit: { type: "string", description: "input param holding the length" } },
  required: ["offset", "limit"],
};

export const supersede: ActionDef = {
  name: "supersede",
  description: "Replace an output made redundant by a newer part with the same key with a breadcrumb naming the call",
  slot: "output",
  options: {
    type: "object",
    additionalProperties: false,
    properties: {
      by: { type: "object", description: "condition a newer part must meet to supersede (default: the rule's `when`)" },
      range: rangeSchema,
      show: { type: "array", items: { type: "string" }, description: "input params named in the breadcrumb" },
      overrideProtection: { type: "boolean", description: "may supersede protected parts (keeps only the newest state visible)" },
      keepNewest: { type: "boolean", description: "the newest part matching `when` in a group is superseded only by another `when` part, never by a `by`-only part (keeps the active edit context)" },
    },
  },
  apply(node, opts, ctx) {
    if (node.part.type !== "tool") return undefined;
    const by = ctx.by?.part;
    const why = by ? (by.tool === node.part.tool ? `a later ${by.tool}` : `a later ${by.tool ?? by.type}`) : "a later call";
    return { output: `${describeCall(node.part, opts.show)} → superseded by ${why}` };
  },
};

export const clear: ActionDef = {
  name: "clear",
  description: "Replace a tool result with a breadcrumb naming the call and the size removed",
  slot: "output",
  options: {
    type: "object",
    additionalProperties: false,
    properties: {
      show: { type: "array", items: { type: "string" } },
      message: { type: "string", description: "text after the call description (default: output cleared)" },
      text: { type: "string", minLength: 1, description: "the exact replacement text instead of a breadcrumb (e.g. OpenCode's own placeholder)" },
      allowGrowth: { type: "boolean", description: "also replace outputs shorter than the replacement (only to reproduce other pruners in comparisons)" },
      overrideProtection: OVERRIDE_PROTECTION,
    },
  },
  apply(node, opts) {
    if (node.part.type !== "tool") return undefined;
    if (typeof opts.text === "string") return { output: opts.text };
    const chars = node.outputChars;
    return { output: `${describeCall(node.part, opts.show)} → ${opts.message ?? "output cleared"} (${chars} chars)` };
  },
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

export const truncate: ActionDef = {
  name: "truncate",
  description: "Keep the first line, or the head and tail lines, of a tool result or text, with a count of what was removed",
  slot: "output",
  options: {
    type: "object",
    additionalProperties: false,
    properties: {
      mode: { enum: ["first-line", "head-tail"] },
      headLines: { type: "integer", minimum: 0 },
      tailLines: { type: "integer", minimum: 0 },
      maxChars: { type: "integer", minimum: 1 },
      maxLineChars: { type: "integer", minimum: 20 },
      overrideProtection: OVERRIDE_PROTECTION,
    },
  },
  apply(node, opts): Patch | undefined {
    if (node.part.type === "tool") {
      const t = truncateText(resultText(node), opts);
      return t === undefined ? undefined : { output: t };
    }
    if (typeof node.part.text === "string") {
      const t = truncateText(node.part.text, opts);
      return t === undefined ? undefined : { text: t };
    }
    return undefined;
  },
};

export const distill: ActionDef = {
  name: "distill",
  description: "Replace a tool result or text with a given summary",
  slot: "output",
  options: { type: "object", additionalProperties: false, properties: { summary: { type: "string", minLength: 1 } }, required: ["summary"] },
  apply(node, opts) {
    if (node.part.type === "tool") return { output: `${describeCall(node.part)} → distilled: ${opts.summary}` };
    if (typeof node.part.text === "string") return { text: opts.summary };
    return undefined;
  },
};
