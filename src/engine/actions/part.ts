// Actions on whole parts or tool inputs: protect, strip-input, mask, drop, collapse-code-blocks.
import { textOf } from "../../graph/graph.js";
import { kb } from "./describe.js";
import type { ActionApply } from "./types.js";

export const protect: ActionApply = () => ({});

export const stripInput: ActionApply = (node, opts) => {
  const input = node.part.state?.input;
  if (node.part.type !== "tool" || !input || typeof input !== "object") return undefined;
  const keep = new Set<string>(opts.keep ?? []);
  const min = opts.minChars ?? 200;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    const s = typeof v === "string" ? v : opts.structured === true && v !== null && typeof v === "object" ? textOf(v) : undefined;
    if (!keep.has(k) && s !== undefined && s.length >= min) {
      out[k] = `[stripped: ${s.split("\n").length} lines, ${s.length} chars]`;
      changed = true;
    } else out[k] = v;
  }
  return changed ? { input: out } : undefined;
};

export const mask: ActionApply = (node) => {
  const p = node.part;
  if (p.type !== "file") return undefined;
  const url = typeof p.url === "string" ? p.url : "";
  const size = url.startsWith("data:") ? Math.floor(((url.length - url.indexOf(",") - 1) * 3) / 4) : textOf((p.source as any)?.text?.value).length;
  return { asText: `[File: ${p.filename ?? "attachment"}, ${kb(size)}]` };
};

export const drop: ActionApply = () => ({ drop: true });

export const collapseCodeBlocks: ActionApply = (node, opts) => {
  const text = node.part.text;
  if (typeof text !== "string") return undefined;
  const min = opts.minLines ?? 8;
  let changed = false;
  const out = text.replace(/```([\w+-]*)\n([\s\S]*?)```/g, (whole, lang: string, body: string) => {
    const n = body.split("\n").length - (body.endsWith("\n") ? 1 : 0);
    if (n < min) return whole;
    changed = true;
    return `[Code block: ${lang || "text"}, ${n} lines]`;
  });
  return changed ? { text: out } : undefined;
};
