// The action catalogue: what a rule's `then` may name, with the JSON Schema of its options and the
// part types it can change. What each action does to a part is the engine's (engine/actions/).

/** Which part of a part an action changes; one decision per slot, the earliest phase wins. */
export type Slot = "protect" | "output" | "input";

/** JSON Schema of the options beside `action` in a rule's `then`. */
export interface OptionSchema {
  type: "object";
  properties: Record<string, unknown>;
  additionalProperties: false;
  required?: readonly string[];
}

export interface ActionDecl {
  name: string;
  description: string;
  slot: Slot;
  options: OptionSchema;
  /** Part types the action can change (it leaves others as they are); absent = any part. */
  parts?: readonly string[];
}

/** Lets clear/truncate reach protected parts; the call itself stays readable. */
const OVERRIDE_PROTECTION = { type: "boolean", description: "may also cut protected outputs (e.g. old subagent results); the call and its inputs stay visible" } as const;

const rangeSchema = {
  type: "object",
  additionalProperties: false,
  properties: { offset: { type: "string", description: "input param holding the start" }, limit: { type: "string", description: "input param holding the length" } },
  required: ["offset", "limit"],
};

const overlapSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    older: { type: "string", description: "input param of the older part (e.g. the text an edit wrote)" },
    newer: { type: "string", description: "input param of the newer part (e.g. the text an edit replaced)" },
  },
  required: ["older", "newer"],
};

const none = (): OptionSchema => ({ type: "object", additionalProperties: false, properties: {} });

const ACTION_LIST = [
  {
    name: "protect",
    description: "Mark the part protected: no later phase and no manual prune may change it",
    slot: "protect",
    options: none(),
  },
  {
    name: "supersede",
    description: "Replace an output made redundant by a newer part with the same key with a breadcrumb naming the call",
    slot: "output",
    parts: ["tool"],
    options: {
      type: "object",
      additionalProperties: false,
      properties: {
        by: { type: "object", description: "condition a newer part must meet to supersede (default: the rule's `when`)" },
        range: rangeSchema,
        overlap: { ...overlapSchema, description: "an older part is superseded only by a newer one whose `newer` param shares a line with the older's `older` param; a newer part without that param (a whole-file write) always supersedes" },
        show: { type: "array", items: { type: "string" }, description: "input params named in the breadcrumb" },
        overrideProtection: { type: "boolean", description: "may supersede protected parts (keeps only the newest state visible)" },
        keepNewest: { type: "boolean", description: "the newest part matching `when` in a group is superseded only by another `when` part, never by a `by`-only part (keeps the active edit context)" },
        views: { type: "boolean", description: "false: the outputs it supersedes are acknowledgements, not views of their subject (an edit's \"Edit applied successfully.\"), so a newer view may be pruned while they stay in full; by default an older view too small to prune is replaced beside its pruned newer view (never stale over fresh)" },
      },
    },
  },
  {
    name: "clear",
    description: "Replace a tool result with a breadcrumb naming the call and the size removed",
    slot: "output",
    parts: ["tool"],
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
  },
  {
    name: "truncate",
    description: "Keep the first line, or the head and tail lines, of a tool result or text, with a count of what was removed",
    slot: "output",
    parts: ["tool", "text", "reasoning"],
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
  },
  {
    name: "distill",
    description: "Replace a tool result or text with a given summary",
    slot: "output",
    parts: ["tool", "text", "reasoning"],
    options: { type: "object", additionalProperties: false, properties: { summary: { type: "string", minLength: 1 } }, required: ["summary"] },
  },
  {
    name: "strip-input",
    description: "Replace long string params of a tool call with a size note, keeping the named metadata keys",
    slot: "input",
    parts: ["tool"],
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
  },
  {
    name: "mask",
    description: "Replace a file attachment with a one-line note [File: name, NKB]",
    slot: "output",
    parts: ["file"],
    options: none(),
  },
  {
    name: "drop",
    description: "Remove the part from the request (for parts the provider never needs)",
    slot: "output",
    options: none(),
  },
  {
    name: "collapse-code-blocks",
    description: "Replace fenced code blocks of a text part with [Code block: lang, N lines]",
    slot: "output",
    parts: ["text", "reasoning"],
    options: { type: "object", additionalProperties: false, properties: { minLines: { type: "integer", minimum: 1 } } },
  },
] as const satisfies readonly ActionDecl[];

export type ActionName = (typeof ACTION_LIST)[number]["name"];
export const ACTION_DECLS: readonly ActionDecl[] = ACTION_LIST;
export const ACTION_NAMES: string[] = ACTION_DECLS.map((a) => a.name);
export const actionDecl: ReadonlyMap<string, ActionDecl> = new Map(ACTION_DECLS.map((a) => [a.name, a]));
