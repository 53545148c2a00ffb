// npx tsx scripts/claude-transcript.ts <in.jsonl|folder> <out-folder>: converts Claude Code
// transcripts (.jsonl) into the corpus's OpenCode shape, so that `acp simulate` can replay sessions
// the presets were not tuned on (docs/tuning.md, "Held-out check"). It reproduces the conversion of
// ../shared/corpus (same messages, tool parts and dropped branch entries; `acp simulate` figures
// within 0.03% on the 16 charming-with-claude sessions). Transcripts are data of their authors:
// keep them and their conversions out of this repository.
//
// The main chain is followed back from the last entry through `parentUuid` (and a compaction's
// `logicalParentUuid`); entries of other branches are dropped. One assistant message per API
// response (`message.id`); tool results are attached to their tool parts; a compaction becomes a
// user message with a `compaction` part and the summary as an assistant message, as OpenCode has it.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative, sep } from "node:path";

type Json = Record<string, any>;

const TOOL_NAMES: Record<string, string> = {
  Read: "read", Write: "write", Edit: "edit", MultiEdit: "edit", Bash: "bash", BashOutput: "bash", KillShell: "bash",
  Glob: "glob", Grep: "grep", WebFetch: "webfetch", WebSearch: "websearch", TodoWrite: "todowrite", Task: "task", Agent: "task", TaskOutput: "task",
};
const INPUT_KEYS: Record<string, string> = { file_path: "filePath", old_string: "oldString", new_string: "newString", replace_all: "replaceAll", notebook_path: "filePath" };
const NO_RESULT = "[no tool_result found in transcript]";

function mapInput(tool: string, input: unknown): Json {
  if (typeof input !== "object" || input === null) return {};
  const out: Json = {};
  for (const [k, v] of Object.entries(input)) out[INPUT_KEYS[k] ?? k] = v;
  const raw = input as Json;
  if (tool === "Grep" && typeof raw.glob === "string") out.include = raw.glob;
  if ((tool === "BashOutput" || tool === "KillShell") && out.command === undefined) out.command = `${tool} ${raw.bash_id ?? raw.shell_id ?? ""}`;
  return out;
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  // other blocks (tool references) as a one-line mark, images left out
  return content.filter((b) => b?.type === "text" || b?.type === "tool_reference").map((b) => (b.type === "text" ? b.text : `[tool_reference ${b.tool_name}]`)).join("\n");
}

const noTokens = () => ({ input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } });
const isTurn = (e: Json) => e.type === "user" || e.type === "assistant";
const isBoundary = (e: Json) => e.type === "system" && e.subtype === "compact_boundary";

export function convert(jsonl: string, source: Json = {}): Json {
  const entries: Json[] = [];
  let broken = 0;
  for (const line of jsonl.split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line));
    } catch {
      broken++;
    }
  }
  const byUuid = new Map<string, Json>();
  for (const e of entries) if (typeof e.uuid === "string") byUuid.set(e.uuid, e);
  // a subagent's own transcript (agent-*.jsonl) is all sidechain: take it whole
  const allSide = entries.every((e) => !isTurn(e) || e.isSidechain);
  const onMain = (e: Json) => allSide || !e.isSidechain;
  const turns = entries.filter((e) => isTurn(e) && onMain(e));
  const chain = new Set<string>();
  // (a chain that loops back on itself, as one through a compaction marker did, ends where it repeats)
  for (let cur: Json | undefined = turns[turns.length - 1]; cur && !chain.has(cur.uuid); ) {
    chain.add(cur.uuid);
    const parent: string | undefined = cur.parentUuid ?? cur.logicalParentUuid;
    cur = parent ? byUuid.get(parent) : undefined;
  }
  let kept = entries.filter((e) => chain.has(e.uuid) && (isTurn(e) || isBoundary(e)));
  // a chain that lost most of the session is a broken link, not a branch: keep the file order
  if (kept.filter(isTurn).length < turns.length / 2) kept = entries.filter((e) => (isTurn(e) || isBoundary(e)) && onMain(e));
  const dropped = turns.length - kept.filter(isTurn).length;

  const sid: string = entries.find((e) => e.sessionId)?.sessionId ?? "session";
  const time = (e: Json): number | undefined => Date.parse(e.timestamp ?? "") || undefined;
  const messages: Json[] = [];
  let parts = 0;
  const partId = () => `prt_${String(parts++).padStart(7, "0")}`;
  const messageId = () => `msg_${String(messages.length).padStart(6, "0")}`;
  const open = new Map<string, Json>(); // tool_use id -> its tool part, until its result comes
  const models = new Set<string>();
  let lastUser: string | undefined;
  let assistant: Json | undefined;
  let assistantKey: unknown;
  let boundary: Json | undefined;
  let compactions = 0;

  /** Completes the open tool part a `tool_result` block of entry `e` answers. */
  const answer = (b: Json, e: Json) => {
    const p = open.get(b.tool_use_id);
    if (!p) return;
    open.delete(b.tool_use_id);
    const text = resultText(b.content);
    const { input, metadata } = p.state;
    const span = { start: p.state.time.start, end: time(e) ?? p.state.time.start };
    p.state = b.is_error ? { status: "error", input, error: text, metadata, time: span } : { status: "completed", input, output: text, title: metadata.originalTool, metadata, time: span };
  };
  const closeAssistant = () => {
    if (!assistant) return;
    const finish = assistant.parts.some((p: Json) => p.type === "tool") ? "tool-calls" : "stop";
    assistant.info.finish = finish;
    assistant.parts.push({ id: partId(), sessionID: sid, messageID: assistant.info.id, type: "step-finish", reason: finish, cost: 0, tokens: assistant.info.tokens });
    assistant = undefined;
  };
  const userMessage = (e: Json, content: Json[]) => {
    closeAssistant();
    const id = messageId();
    messages.push({ info: { id, sessionID: sid, role: "user", time: { created: time(e) }, agent: "build" }, parts: content.map((p) => ({ id: partId(), sessionID: sid, messageID: id, ...p })) });
    lastUser = id;
  };

  for (const e of kept) {
    if (isBoundary(e)) {
      boundary = e;
      continue;
    }
    const msg: Json = e.message ?? {};
    if (e.type === "user") {
      if (e.isCompactSummary) {
        compactions++;
        const meta = boundary?.compactMetadata ?? {};
        userMessage(e, [{ type: "compaction", auto: meta.trigger !== "manual", preTokens: meta.preTokens }]);
        const id = messageId();
        messages.push({
          info: { id, sessionID: sid, role: "assistant", time: { created: time(e) }, summary: true, mode: "compaction", agent: "compaction", providerID: "anthropic", modelID: "unknown", parentID: lastUser, cost: 0, tokens: noTokens(), finish: "stop" },
          parts: [{ id: partId(), sessionID: sid, messageID: id, type: "text", text: resultText(msg.content) }],
        });
        boundary = undefined;
        continue;
      }
      boundary = undefined;
      if (typeof msg.content === "string") {
        userMessage(e, [{ type: "text", text: msg.content }]);
        continue;
      }
      if (!Array.isArray(msg.content)) continue;
      const texts: string[] = [];
      let results = false;
      for (const b of msg.content)
        if (b?.type === "text") texts.push(b.text);
        else if (b?.type === "tool_result") {
          results = true;
          answer(b, e);
        }
      // text beside tool results ("Tool loaded.") is the harness's, not a user turn
      if (texts.length > 0 && !results) userMessage(e, texts.map((text) => ({ type: "text", text })));
      continue;
    }
    const key = msg.id ?? e.requestId ?? e.uuid;
    if (!assistant || assistantKey !== key) {
      closeAssistant();
      const id = messageId();
      if (typeof msg.model === "string" && msg.model !== "<synthetic>") models.add(msg.model);
      assistant = {
        info: { id, sessionID: sid, role: "assistant", time: { created: time(e), completed: time(e) }, parentID: lastUser, providerID: "anthropic", modelID: msg.model ?? "unknown", mode: "build", agent: "build", path: { cwd: e.cwd ?? "", root: e.cwd ?? "" }, cost: 0, tokens: noTokens() },
        parts: [{ id: partId(), sessionID: sid, messageID: id, type: "step-start" }],
      };
      messages.push(assistant);
      assistantKey = key;
    }
    const at = time(e);
    assistant.info.time.completed = at ?? assistant.info.time.completed;
    const u = msg.usage;
    if (u) assistant.info.tokens = { input: u.input_tokens ?? 0, output: u.output_tokens ?? 0, reasoning: 0, cache: { read: u.cache_read_input_tokens ?? 0, write: u.cache_creation_input_tokens ?? 0 } };
    for (const b of Array.isArray(msg.content) ? msg.content : []) {
      const base = { id: partId(), sessionID: sid, messageID: assistant.info.id };
      if (b.type === "thinking" || b.type === "redacted_thinking")
        assistant.parts.push({ ...base, type: "reasoning", text: b.thinking ?? "", metadata: { anthropic: { signature: b.signature ?? b.data ?? "" } }, time: { start: at, end: at } });
      else if (b.type === "text") assistant.parts.push({ ...base, type: "text", text: b.text, time: { start: at, end: at } });
      else if (b.type === "tool_use") {
        const tool = String(b.name);
        const p = { ...base, type: "tool", callID: b.id, tool: TOOL_NAMES[tool] ?? tool.toLowerCase(), state: { status: "error", input: mapInput(tool, b.input), error: NO_RESULT, metadata: { originalTool: tool }, time: { start: at, end: at } } };
        assistant.parts.push(p);
        open.set(b.id, p);
      }
    }
  }
  closeAssistant();
  // a result whose entry sits off the main chain (a retried or forked branch) still answers its call
  for (const e of entries)
    if (e.type === "user" && onMain(e) && !chain.has(e.uuid) && Array.isArray(e.message?.content))
      for (const b of e.message.content) if (b?.type === "tool_result") answer(b, e);
  return { id: sid, source: { format: "claude-code-jsonl", ...source }, meta: { agent: "claude-code", models: [...models], compactions, brokenLines: broken, droppedBranchEntries: dropped }, messages };
}

/** The output file of `file` found under `input`: its path below `input`, so that transcripts of the same name in two folders stay apart. */
export function outName(input: string, file: string): string {
  const below = file === input ? basename(file) : relative(input, file);
  return below.replace(/\.jsonl$/, "").split(sep).join("__") + ".json";
}

function main() {
  const [input, outDir] = process.argv.slice(2);
  if (!input || !outDir) {
    console.error("usage: npx tsx scripts/claude-transcript.ts <in.jsonl|folder> <out-folder>");
    process.exit(2);
  }
  const files = statSync(input).isDirectory() ? readdirSync(input, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl")).map((f) => join(input, f)) : [input];
  mkdirSync(outDir, { recursive: true });
  for (const file of files) {
    const session = convert(readFileSync(file, "utf8"), { path: file });
    const tools = session.messages.reduce((n: number, m: Json) => n + m.parts.filter((p: Json) => p.type === "tool").length, 0);
    writeFileSync(join(outDir, outName(input, file)), JSON.stringify(session));
    console.log(`${basename(file)}: ${session.messages.length} messages, ${tools} tool parts, ${session.meta.droppedBranchEntries} dropped branch entries, ${session.meta.compactions} compactions`);
  }
}

if (process.argv[1]?.endsWith("claude-transcript.ts")) main();
