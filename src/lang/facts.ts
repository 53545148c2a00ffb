// The fact catalogue: everything a rule's `when` may read, by name, with its kind and type. Static
// facts depend only on the part and are cached by part id; dynamic facts change as the session grows
// and are re-read each call. Phase facts exist only once an earlier phase has run. How each fact is
// read from a part is the engine's (engine/facts.ts); this is what rules, lint and the schema see.
import type { Phase } from "./phases.js";

export type FactKind = "static" | "dynamic" | "phase" | "config";

export interface FactDecl {
  name: string;
  kind: FactKind;
  type: "string" | "number" | "boolean" | "object" | "array";
  description: string;
  /** First phase in which the fact has a value (phase facts only). */
  availableFrom?: Phase;
  /** Part types on which the fact has a value (undefined elsewhere); absent = every part. */
  parts?: readonly string[];
}

const FACT_LIST = [
  { name: "partType", kind: "static", type: "string", description: "text | reasoning | file | tool | step-start | step-finish | patch | compaction | …" },
  { name: "role", kind: "static", type: "string", description: "role of the message holding the part: user | assistant" },
  { name: "tool", kind: "static", type: "string", parts: ["tool"], description: "tool name of a tool part" },
  { name: "status", kind: "static", type: "string", parts: ["tool"], description: "tool state: pending | running | completed | error" },
  { name: "input", kind: "static", type: "object", parts: ["tool"], description: "tool input params; use `path: $.filePath`" },
  { name: "outputChars", kind: "static", type: "number", description: "characters of the tool result as sent" },
  { name: "outputLines", kind: "static", type: "number", description: "lines of the tool result as sent" },
  { name: "inputChars", kind: "static", type: "number", description: "characters of the JSON tool input (lazy)" },
  { name: "textChars", kind: "static", type: "number", description: "characters of a text or reasoning part" },
  { name: "text", kind: "static", type: "string", parts: ["text", "reasoning"], description: "text of a text or reasoning part" },
  { name: "synthetic", kind: "static", type: "boolean", description: "text part added by the host, not typed by the user" },
  { name: "ignored", kind: "static", type: "boolean", description: "text part the host never sends" },
  { name: "fileMime", kind: "static", type: "string", parts: ["file"], description: "mime type of a file part" },
  { name: "fileName", kind: "static", type: "string", parts: ["file"], description: "file name of a file part" },
  { name: "hostDrops", kind: "static", type: "boolean", description: "the host itself leaves the part out of the prompt once a later user message exists (reasoning its provider checks and needs only within its turn; acp.jsonc `earlierReasoning` says otherwise): pruning it there changes nothing the provider receives" },
  { name: "compacted", kind: "static", type: "boolean", description: "the host already cleared this output (state.time.compacted)" },
  { name: "messageError", kind: "static", type: "boolean", description: "the assistant message carries an error" },
  { name: "terminal", kind: "static", type: "boolean", description: "tool part finished (completed or error)" },
  { name: "ageTurns", kind: "dynamic", type: "number", description: "user turns after this part (0 = current turn; user messages one after another are one turn)" },
  { name: "ageCalls", kind: "dynamic", type: "number", description: "tool calls after this part" },
  { name: "afterLastUser", kind: "dynamic", type: "boolean", description: "part belongs to the current turn" },
  { name: "idleTurns", kind: "dynamic", type: "number", description: "user turns since the part was last in use: its own call, a later tool call with an equal value in a field of the same name (same file, command, URL...), later text naming one of its values' file names, or a later assistant message quoting a line of its output" },
  { name: "idleCalls", kind: "dynamic", type: "number", description: "tool calls since the part was last in use, by the measure of idleTurns except that a later call on the same subject counts only if its input carries content, as an edit or a write does, or it returns under 500 chars (a call that returns a view of its own takes the use over; its own call counts; 0: used by the newest call)" },
  { name: "idleWorkCalls", kind: "dynamic", type: "number", description: "idleCalls, counting only the calls that brought something: a call that names no file, carries no content and returns under 100 chars (mkdir, git add, a task update) adds nothing the agent reads, so it moves no output out of use" },
  { name: "userNamedTurns", kind: "dynamic", type: "number", description: "user turns since a message the user typed last named the part's file: by its name, case aside, or, written without an extension, by its stem (docs/project-plan names PROJECT_PLAN.md); a name followed by / is a folder (Infinity: never named)" },
  { name: "useTurns", kind: "dynamic", type: "number", description: "user turns so far in which the part's subject was in use (its own call's turn included): a tool call with an equal value in a field of the same name, or text naming its file; files count by name, so a read of src/a.ts and text naming a.ts are one subject" },
  { name: "changeTurns", kind: "dynamic", type: "number", description: "user turns so far in which a tool call changed the part's subject: a call with an equal value in a field of the same name (files by name, as useTurns) whose input carries content, as an edit or a write does, or that returns under 500 chars, and that did not fail; 0: never changed (an agent edits its own files again turns later, and quotes their earlier reads)" },
  { name: "promptTokens", kind: "dynamic", type: "number", description: "tokens (chars/4 per block) of the whole prompt as the provider receives it, before pruning; the same for every part of a call" },
  { name: "toolTokensNewer", kind: "dynamic", type: "number", description: "tokens (chars/4) of completed tool output after this part" },
  { name: "protectedTools", kind: "config", type: "array", description: "configured protected tool names (use as `value: {fact: protectedTools}`)" },
  { name: "protectedFiles", kind: "config", type: "array", description: "configured protected file globs" },
  { name: "params", kind: "config", type: "object", description: "the rule's own params (overridable per preset); use `path: $.turns`" },
  { name: "protected", kind: "phase", type: "boolean", availableFrom: "supersede", description: "a protect rule protected this part" },
  { name: "superseded", kind: "phase", type: "boolean", availableFrom: "age", description: "a supersede rule superseded this part" },
  { name: "pruned", kind: "phase", type: "boolean", availableFrom: "age", description: "an earlier phase already decided an action for this part's output" },
] as const satisfies readonly FactDecl[];

export type FactName = (typeof FACT_LIST)[number]["name"];
export const FACT_DECLS: readonly FactDecl[] = FACT_LIST;
export const FACT_NAMES: string[] = FACT_DECLS.map((f) => f.name);
export const factDecl: ReadonlyMap<string, FactDecl> = new Map(FACT_DECLS.map((f) => [f.name, f]));
