// The fact catalogue: everything a rule's `when` may read. Static facts depend only on the
// part and are cached by part id; dynamic facts change as the session grows and are
// re-read each call. Phase facts exist only once an earlier phase has run.
import { type PartNode, TERMINAL, textOf } from "../graph/graph.js";
import type { Phase } from "../rules/types.js";

export type FactKind = "static" | "dynamic" | "phase" | "config";

export interface FactContext {
  config: { protectedTools: string[]; protectedFiles: string[] };
  params: Record<string, unknown>;
  isProtected(node: PartNode): boolean;
  supersededRule(node: PartNode): string | undefined;
  decidedRule(node: PartNode): string | undefined;
  /** User turns since the part was last in use (engine/use.ts). */
  idleTurns(node: PartNode): number;
  /** Tool calls since the part was last in use (engine/use.ts). */
  idleCalls(node: PartNode): number;
  /** Tokens of the whole prompt before pruning (the `promptTokens` fact); 0 when not given. */
  promptTokens?(): number;
}

export interface FactDef {
  name: string;
  kind: FactKind;
  type: "string" | "number" | "boolean" | "object" | "array";
  description: string;
  /** First phase in which the fact has a value (phase facts only). */
  availableFrom?: Phase;
  get(node: PartNode, ctx: FactContext): unknown;
}

const isTool = (n: PartNode) => n.part.type === "tool";
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const lines = (s: string) => (s.length === 0 ? 0 : s.split("\n").length);

export const FACTS: FactDef[] = [
  { name: "partType", kind: "static", type: "string", description: "text | reasoning | file | tool | step-start | step-finish | patch | compaction | …", get: (n) => n.part.type },
  { name: "role", kind: "static", type: "string", description: "role of the message holding the part: user | assistant", get: (n) => n.message.info?.role },
  { name: "tool", kind: "static", type: "string", description: "tool name of a tool part", get: (n) => (isTool(n) ? n.part.tool : undefined) },
  { name: "status", kind: "static", type: "string", description: "tool state: pending | running | completed | error", get: (n) => n.part.state?.status },
  { name: "input", kind: "static", type: "object", description: "tool input params; use `path: $.filePath`", get: (n) => (isObject(n.part.state?.input) ? n.part.state!.input : {}) },
  { name: "outputChars", kind: "static", type: "number", description: "characters of the tool result as sent", get: (n) => n.outputChars },
  { name: "outputLines", kind: "static", type: "number", description: "lines of the tool result as sent", get: (n) => (isTool(n) ? lines(textOf(n.part.state?.status === "completed" ? n.part.state.output : n.part.state?.error)) : 0) },
  { name: "inputChars", kind: "static", type: "number", description: "characters of the JSON tool input (lazy)", get: (n) => (isTool(n) ? textOf(n.part.state?.input ?? {}).length : 0) },
  { name: "textChars", kind: "static", type: "number", description: "characters of a text or reasoning part", get: (n) => (typeof n.part.text === "string" ? n.part.text.length : 0) },
  { name: "text", kind: "static", type: "string", description: "text of a text or reasoning part", get: (n) => n.part.text },
  { name: "synthetic", kind: "static", type: "boolean", description: "text part added by the host, not typed by the user", get: (n) => n.part.synthetic === true },
  { name: "ignored", kind: "static", type: "boolean", description: "text part the host never sends", get: (n) => n.part.ignored === true },
  { name: "fileMime", kind: "static", type: "string", description: "mime type of a file part", get: (n) => (n.part.type === "file" ? n.part.mime : undefined) },
  { name: "fileName", kind: "static", type: "string", description: "file name of a file part", get: (n) => (n.part.type === "file" ? n.part.filename : undefined) },
  { name: "compacted", kind: "static", type: "boolean", description: "the host already cleared this output (state.time.compacted)", get: (n) => Boolean(n.part.state?.time?.compacted) },
  { name: "messageError", kind: "static", type: "boolean", description: "the assistant message carries an error", get: (n) => Boolean(n.message.info?.error) },
  { name: "terminal", kind: "static", type: "boolean", description: "tool part finished (completed or error)", get: (n) => TERMINAL.has(n.part.state?.status as string) },
  { name: "ageTurns", kind: "dynamic", type: "number", description: "user turns after this part (0 = current turn; user messages one after another are one turn)", get: (n) => n.ageTurns },
  { name: "ageCalls", kind: "dynamic", type: "number", description: "tool calls after this part", get: (n) => n.ageCalls },
  { name: "afterLastUser", kind: "dynamic", type: "boolean", description: "part belongs to the current turn", get: (n) => n.ageTurns === 0 },
  { name: "idleTurns", kind: "dynamic", type: "number", description: "user turns since the part was last in use: its own call, a later tool call with an equal value in a field of the same name (same file, command, URL...), later text naming one of its values' file names, or a later assistant message quoting a line of its output", get: (n, c) => c.idleTurns(n) },
  { name: "idleCalls", kind: "dynamic", type: "number", description: "tool calls since the part was last in use, by the same measure as idleTurns (its own call counts; 0: used by the newest call)", get: (n, c) => c.idleCalls(n) },
  { name: "promptTokens", kind: "dynamic", type: "number", description: "tokens (chars/4 per block) of the whole prompt as the provider receives it, before pruning; the same for every part of a call", get: (_n, c) => c.promptTokens?.() ?? 0 },
  { name: "toolTokensNewer", kind: "dynamic", type: "number", description: "tokens (chars/4) of completed tool output after this part", get: (n) => n.toolTokensNewer },
  { name: "protectedTools", kind: "config", type: "array", description: "configured protected tool names (use as `value: {fact: protectedTools}`)", get: (_n, c) => c.config.protectedTools },
  { name: "protectedFiles", kind: "config", type: "array", description: "configured protected file globs", get: (_n, c) => c.config.protectedFiles },
  { name: "params", kind: "config", type: "object", description: "the rule's own params (overridable per preset); use `path: $.turns`", get: (_n, c) => c.params },
  { name: "protected", kind: "phase", type: "boolean", availableFrom: "supersede", description: "a protect rule protected this part", get: (n, c) => c.isProtected(n) },
  { name: "superseded", kind: "phase", type: "boolean", availableFrom: "age", description: "a supersede rule superseded this part", get: (n, c) => c.supersededRule(n) !== undefined },
  { name: "pruned", kind: "phase", type: "boolean", availableFrom: "age", description: "an earlier phase already decided an action for this part's output", get: (n, c) => c.decidedRule(n) !== undefined },
];

export const FACT_NAMES = FACTS.map((f) => f.name);
export const factByName = new Map(FACTS.map((f) => [f.name, f]));
