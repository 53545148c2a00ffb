// Actions on whole parts or tool inputs: protect, strip-input, mask, drop, collapse-code-blocks.
import { textOf } from "../../graph/graph.js";
import { kb } from "./describe.js";
import type { ActionDef } from "./types.js";

export const protect: ActionDef = {
  name: "protect",
  description: "Mark the part protected: no later phase and no manual prune may change it",
  slot: "protect",
  options: { type: "object", additionalProperties: false, properties: {} },
  apply: () => ({}),
};

export const stripInput: ActionDef = {
  name: "strip-input",
  description: "Replace long string params of a tool call with a size note, keeping the named metadata keys",
  slot: "input",
  options: {
    type: "object",
    additionalProperties: false,
    properties: {
      keep: { type: "array", items: { type: "string" }, description: "params kept verbatim (e.g. filePath)" },
      minChars: { type: "integer", minimum: 0, description: "strings shorter than this stay" },
      overrideProtection: { type: "boolean", description: "may strip protected calls (e.g. superseded writes)" },
      structured: { type: "boolean", description: "also strip array and object params whose JSON is minChars or longer (e.g. old todo lists)" },
    },
  },
  apply(node, opts) {
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
  },
};

export const mask: ActionDef = {
  name: "mask",
  description: "Replace a file attachment with a one-line note [File: name, NKB]",
  slot: "output",
  options: { type: "object", additionalProperties: false, properties: {} },
  apply(node) {
    const p = node.part;
    if (p.type !== "file") return undefined;
    const url = typeof p.url === "string" ? p.url : "";
    const size = url.startsWith("data:") ? Math.floor(((url.length - url.indexOf(",") - 1) * 3) / 4) : textOf((p.source as any)?.text?.value).length;
    return { asText: `[File: ${p.filename ?? "attachment"}, ${kb(size)}]` };
  },
};

export const drop: ActionDef = {
  name: "drop",
  description: "Remove the part from the request (for parts the provider never needs)",
  slot: "output",
  options: { type: "object", additionalProperties: false, properties: {} },
  apply: () => ({ drop: true }),
};

export const collapseCodeBlocks: ActionDef = {
  name: "collapse-code-blocks",
  description: "Replace fenced code blocks of a text part with [Code block: lang, N lines]",
  slot: "output",
  options: { type: "object", additionalProperties: false, properties: { minLines: { type: "integer", minimum: 1 } } },
  apply(node, opts) {
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
  },
};
