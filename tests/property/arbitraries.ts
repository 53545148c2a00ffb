// fast-check arbitraries for the property tests: OpenCode sessions in the MessageV2 shape
// (/work/shared/docs/opencode-host.md §2) with every part type, every tool state and the odd
// shapes recorded sessions and live hosts produce, call schedules (restart, repeat, restore,
// compaction, revert), and random rule sets drawn from the fact / operator / action catalogues.
//
// Arbitraries generate *specs* (small records fast-check can shrink); builders turn them into
// messages deterministically, so a shrunk counterexample is still a readable session.
import fc from "fast-check";
import { stringify } from "yaml";
import { ACTIONS } from "../../src/engine/actions/index.js";
import { FACTS, type FactDef } from "../../src/engine/facts.js";
import { OPERATORS } from "../../src/lang/operators.js";
import type { Message, Part } from "../../src/graph/types.js";
import type { Condition, Phase } from "../../src/rules/types.js";

// ---------------------------------------------------------------------------------------------
// Pools. Small on purpose: repeated paths, commands and queries make supersede rules fire.

/** Tool names seen in the development corpus (/work/shared/corpus). */
export const CORPUS_TOOLS = ["bash", "read", "edit", "apply_patch", "todowrite", "write", "glob", "webfetch", "websearch", "task", "grep", "skill", "askuserquestion", "list", "enterplanmode", "exitplanmode", "context7_resolve-library-id"];
/** Other names the presets and defaults know (protected tools, snapshot tools, the prune tool). */
export const KNOWN_TOOLS = ["todoread", "browser_snapshot", "context_prune", "batch", "context_info", "plan_enter", "plan_exit"];
const TOOLS = [...CORPUS_TOOLS, ...KNOWN_TOOLS];
const COMMON_TOOLS = ["read", "bash", "grep", "edit", "write", "glob", "webfetch", "websearch", "todowrite", "browser_snapshot"];

const FILES = ["src/a.ts", "./src/a.ts", "src//a.ts", "src/b.ts", "src/dir/", "lib/ü/ñ.py", ".env", "config/.env.local", "package.json", "keys/server.pem", "C:\\work\\x.ts", ""];
const COMMANDS = ["ls -la", "ls", "  ls   -la ", "git status", "git log --oneline -5", "pwd", "npm test", "pytest -q", "tree src", "find . -name '*.ts'", "echo 😀", ""];
const PATTERNS = ["TODO", "handler", "import .* from", "**/*.ts", "*.md", "fetch\\("];
const URLS = ["https://docs.example.com/a", "https://docs.example.com/b", "http://x/ü?q=1"];
const QUERIES = ["vitest config", "Vitest  Config", "picomatch dot", "中文 查询"];
const PART_TYPES = ["text", "reasoning", "file", "tool", "step-start", "step-finish", "snapshot", "patch", "agent", "retry", "compaction", "subtask"];
const STATUSES = ["pending", "running", "completed", "error"];
const MIMES = ["text/plain", "image/png", "application/pdf", "application/x-directory"];
const FILE_NAMES = ["notes.txt", "shot.png", "spec.pdf", "ü.md"];

/** Short texts: code fences (for the opt-in collapse), unicode of every kind, echoed id tags, blanks. */
export const SNIPPETS = [
  "",
  " ",
  "\n\t \n",
  "ok",
  "Task: continue",
  "Please fix this:\n```ts\n" + "const value = compute(input);\n".repeat(12) + "```\nthanks",
  "```\n" + "a\n".repeat(9) + "```",
  "before\n```py\nprint(1)\n```\nafter",
  "😀🎉 emoji and 𝄞 astral",
  "e\u0301 combining, \u200b zero width, \ufeff bom",
  "שלום עולם RTL and العربية",
  "中文文本，日本語のテキスト",
  "lone \ud800 surrogate \udfff",
  "nul \u0000 byte and \u001b[31m escape",
  "crlf\r\nline\r\n",
  "see [acp:t1] and [acp:t2] above",
  "[acp:t1]",
  "Thinking about the next step.",
  "echoes of every kind: [acp:mabc] [acp:r1x2]\n[acp:t9zz]",
];

// ---------------------------------------------------------------------------------------------
// Text blobs: line-based content built from a few numbers, so sizes stay bounded and shrink.

export interface Blob {
  lines: number;
  width: number;
  flavor: number;
  seed: number;
}

const FLAVORS: ((i: number, w: number, seed: number) => string)[] = [
  (i, w, s) => `${String(i + 1 + s).padStart(5)}\t${"export const value = compute(input); // filler ".repeat(6).slice(0, w)}`,
  (_i, w) => "😀 é 中文 שלום 𝄞 ".repeat(12).slice(0, w), // slicing may split a surrogate pair: a lone surrogate
  (_i, w) => "x".repeat(w * 40), // very long lines (few of them, see blobText)
  (i, w) => (i % 3 === 0 ? "" : " ".repeat(w % 5)),
  (i, w, s) => `line ${i} [acp:t${(s + i) % 5}] ${"y".repeat(w)}`,
  (i, w) => `row ${i} ${"z".repeat(w % 30)}\r`,
];

export function blobText(b: Blob): string {
  const flavor = FLAVORS[b.flavor % FLAVORS.length];
  const lines = b.flavor % FLAVORS.length === 2 ? Math.min(b.lines, 3) : b.lines;
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(flavor(i, b.width, b.seed));
  return out.join("\n");
}

const lineCount = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 12 }) }, { weight: 3, arbitrary: fc.integer({ min: 13, max: 70 }) }, { weight: 1, arbitrary: fc.integer({ min: 71, max: 220 }) });
export const blobArb: fc.Arbitrary<Blob> = fc.record({ lines: lineCount, width: fc.integer({ min: 0, max: 100 }), flavor: fc.nat(FLAVORS.length - 1), seed: fc.nat(9) });

export type TextSpec = { snippet: number } | { raw: string } | { blob: Blob };
const textArb: fc.Arbitrary<TextSpec> = fc.oneof(
  { weight: 5, arbitrary: fc.nat(SNIPPETS.length - 1).map((snippet) => ({ snippet })) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 24 }).map((raw) => ({ raw })) },
  { weight: 2, arbitrary: blobArb.map((blob) => ({ blob })) },
);
export const textOf = (t: TextSpec): string => ("snippet" in t ? SNIPPETS[t.snippet] : "raw" in t ? t.raw : blobText(t.blob));

// ---------------------------------------------------------------------------------------------
// Tool parts: every state, plus the odd shapes.

export interface InputSpec {
  /** 0–7: the tool's usual parameters (supersede keys collide); 8–9: any mix of parameters. */
  shape: number;
  /** Bits of `mix`: which parameters a mixed input has. */
  mix: number;
  filePath: number;
  range?: { offset: number | string; limit: number };
  command: number;
  pattern: number;
  path?: number;
  include?: string;
  url: number;
  query: number;
  content: Blob;
  oldString: Blob;
  newString: Blob;
  todos: string;
  extra?: unknown;
}

/** Pool indexes skewed to the first entries, so the same file or command comes back often. */
const hot = (n: number) => fc.oneof({ weight: 3, arbitrary: fc.nat(Math.min(2, n - 1)) }, { weight: 1, arbitrary: fc.nat(n - 1) });

const inputArb: fc.Arbitrary<InputSpec> = fc.record(
  {
    shape: fc.nat(9),
    mix: fc.nat(),
    filePath: hot(FILES.length),
    range: fc.record({ offset: fc.oneof(fc.constantFrom(0, 100), fc.nat(300), fc.constant("10")), limit: fc.constantFrom(0, 100, 200, 2000) }),
    command: hot(COMMANDS.length),
    pattern: hot(PATTERNS.length),
    path: hot(FILES.length),
    include: fc.constantFrom("*.ts", "*.md"),
    url: hot(URLS.length),
    query: hot(QUERIES.length),
    content: blobArb,
    oldString: blobArb,
    newString: blobArb,
    todos: fc.constantFrom("pending", "completed"),
    extra: fc.oneof(fc.integer(), fc.constant(null), fc.constant([1, "two"]), fc.constant({ nested: { deep: true } })),
  },
  { requiredKeys: ["shape", "mix", "filePath", "command", "pattern", "url", "query", "content", "oldString", "newString", "todos"] },
);

const PARAMS = ["filePath", "range", "command", "description", "pattern", "path", "include", "url", "query", "content", "oldString", "newString", "todos", "extra"] as const;

function buildInput(s: InputSpec, tool: string): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const put: Record<(typeof PARAMS)[number], () => void> = {
    filePath: () => (o.filePath = FILES[s.filePath]),
    range: () => s.range && Object.assign(o, s.range),
    command: () => (o.command = COMMANDS[s.command]),
    description: () => (o.description = "run"),
    pattern: () => (o.pattern = PATTERNS[s.pattern]),
    path: () => s.path !== undefined && (o.path = FILES[s.path]),
    include: () => s.include !== undefined && (o.include = s.include),
    url: () => (o.url = URLS[s.url]),
    query: () => (o.query = QUERIES[s.query]),
    content: () => (o.content = blobText(s.content)),
    oldString: () => (o.oldString = blobText(s.oldString)),
    newString: () => (o.newString = blobText(s.newString)),
    todos: () => (o.todos = [{ content: "step", status: s.todos }]),
    extra: () => s.extra !== undefined && (o.extra = s.extra),
  };
  const USUAL: Record<string, (typeof PARAMS)[number][]> = {
    read: ["filePath", "range"],
    write: ["filePath", "content"],
    edit: ["filePath", "oldString", "newString"],
    bash: ["command", "description"],
    grep: ["pattern", "path", "include"],
    glob: ["pattern", "path"],
    list: ["path"],
    webfetch: ["url"],
    websearch: ["query"],
    todowrite: ["todos"],
    task: ["description", "content"],
  };
  const usual = s.shape < 8 && Object.hasOwn(USUAL, tool) ? USUAL[tool] : undefined; // tool names are data ("toString")
  if (usual) for (const k of usual) put[k]();
  else PARAMS.forEach((k, i) => (s.mix >>> i) & 1 && put[k]());
  return o;
}

export type OutputSpec = { blob: Blob } | { value: unknown } | { snippet: number };
const NON_STRING_OUTPUTS: unknown[] = [42, null, true, ["a", "b"], { text: "json output", n: 1 }, 0, ""];
const outputArb: fc.Arbitrary<OutputSpec> = fc.oneof(
  { weight: 12, arbitrary: blobArb.map((blob) => ({ blob })) },
  { weight: 1, arbitrary: fc.nat(NON_STRING_OUTPUTS.length - 1).map((i) => ({ value: NON_STRING_OUTPUTS[i] })) },
  { weight: 1, arbitrary: fc.nat(SNIPPETS.length - 1).map((snippet) => ({ snippet })) },
);
const outputOf = (o: OutputSpec): unknown => ("blob" in o ? blobText(o.blob) : "value" in o ? o.value : SNIPPETS[o.snippet]);

export type ToolOdd = "none" | "noState" | "stateNull" | "noStatus" | "unknownStatus" | "noInput" | "inputString" | "inputNull" | "inputArray" | "inputNumber" | "outputMissing" | "noTool" | "noCallID";
const TOOL_ODD: ToolOdd[] = ["noState", "stateNull", "noStatus", "unknownStatus", "noInput", "inputString", "inputNull", "inputArray", "inputNumber", "outputMissing", "noTool", "noCallID"];

export interface ToolSpec {
  tool: string;
  input: InputSpec;
  status: "pending" | "running" | "completed" | "error";
  output: OutputSpec;
  error: OutputSpec;
  compacted: boolean;
  attachments: boolean;
  interrupted: boolean;
  odd: ToolOdd;
}

export interface GenFlags {
  /** Probability weight (0 = never) of the odd shapes. */
  odd: number;
  /** Duplicate part ids, duplicate message ids, messages out of order. */
  dupPartIds: boolean;
  dupMsgIds: boolean;
  outOfOrder: boolean;
  /** Random tool names besides the catalogue. */
  randomTools: boolean;
  /** Larger sessions (more turns and steps). */
  maxTurns: number;
}

export const DEFAULT_FLAGS: GenFlags = { odd: 1, dupPartIds: true, dupMsgIds: true, outOfOrder: true, randomTools: true, maxTurns: 7 };

/**
 * Findings still open (each pinned by a failing test in tests/property/regressions.test.ts): the
 * default runs leave these shapes and checks out, so the properties keep finding new failures.
 * Remove a key here once its regression test passes. ACP_FUZZ_STRICT=1 runs everything;
 * ACP_FUZZ_SKIP=a,b adds keys (odd, dup-part-ids, dup-msg-ids, out-of-order, random-tools, …).
 */
export const KNOWN_OPEN: string[] = [];
export const SKIP = new Set([...(process.env.ACP_FUZZ_STRICT === "1" ? [] : KNOWN_OPEN), ...(process.env.ACP_FUZZ_SKIP ?? "").split(",").map((s) => s.trim()).filter(Boolean)]);

/** The generator flags with the SKIP keys applied. */
export function flagsFromEnv(base: GenFlags = DEFAULT_FLAGS): GenFlags {
  return { ...base, odd: SKIP.has("odd") ? 0 : base.odd, dupPartIds: base.dupPartIds && !SKIP.has("dup-part-ids"), dupMsgIds: base.dupMsgIds && !SKIP.has("dup-msg-ids"), outOfOrder: base.outOfOrder && !SKIP.has("out-of-order"), randomTools: base.randomTools && !SKIP.has("random-tools") };
}

function toolArb(flags: GenFlags): fc.Arbitrary<ToolSpec> {
  const names = flags.randomTools
    ? fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...COMMON_TOOLS) }, { weight: 4, arbitrary: fc.constantFrom(...TOOLS) }, { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 10 }) })
    : fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...COMMON_TOOLS) }, { weight: 1, arbitrary: fc.constantFrom(...TOOLS) });
  const odd = flags.odd > 0 ? fc.oneof({ weight: 30, arbitrary: fc.constant<ToolOdd>("none") }, { weight: flags.odd, arbitrary: fc.constantFrom(...TOOL_ODD) }) : fc.constant<ToolOdd>("none");
  return fc.record({
    tool: names,
    input: inputArb,
    status: fc.oneof({ weight: 14, arbitrary: fc.constant("completed" as const) }, { weight: 2, arbitrary: fc.constant("error" as const) }, { weight: 1, arbitrary: fc.constantFrom("pending" as const, "running" as const) }),
    output: outputArb,
    error: outputArb,
    compacted: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    attachments: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    interrupted: fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    odd,
  });
}

// ---------------------------------------------------------------------------------------------
// Messages and sessions.

export type PartSpec =
  | { k: "text"; text: TextSpec; synthetic?: boolean; ignored?: boolean }
  | { k: "reasoning"; text: TextSpec }
  | { k: "file"; mime: number; name?: number; data: boolean; blob: Blob; source: boolean }
  | { k: "tool"; tool: ToolSpec }
  | { k: "marker"; type: "step-start" | "step-finish" | "snapshot" | "patch" | "agent" | "retry" | "compaction" | "subtask" }
  | { k: "unknown"; type: string; text?: TextSpec }
  | { k: "noid"; text: TextSpec };

export interface StepSpec {
  markers: boolean;
  reasoning?: TextSpec;
  text?: TextSpec;
  tools: ToolSpec[];
  extras: PartSpec[];
  error?: string;
  summary?: boolean;
  shuffle?: number;
}

export interface TurnSpec {
  user: PartSpec[];
  steps: StepSpec[];
}

export interface OddSpec {
  dupParts: [number, number][];
  dupMsgs: [number, number][];
  swaps: number[];
  empties: number[];
  foreignSession?: number;
  noSessionOnFirst?: boolean;
  noticeAt?: number;
}

export interface SessionSpec {
  sid: number;
  turns: TurnSpec[];
  odd: OddSpec;
}

/** Session ids: most are safe file names; a few are not (state is then kept in memory only). */
export const WEIRD_SIDS = ["../escape", "ses with space", "ŝéšš😀", ".hidden", "a".repeat(230), "ses/../../x"];

const fileArb = fc.record({ mime: fc.nat(MIMES.length - 1), name: fc.option(fc.nat(FILE_NAMES.length - 1), { nil: undefined }), data: fc.boolean(), blob: blobArb, source: fc.boolean() });

function oddPartArb(): fc.Arbitrary<PartSpec> {
  return fc.oneof(
    fc.constantFrom("step-start", "step-finish", "snapshot", "patch", "agent", "retry", "compaction", "subtask").map((type) => ({ k: "marker" as const, type: type as any })),
    fc.record({ type: fc.oneof(fc.constantFrom("custom-part", "", "TOOL", "text ", "image"), fc.string({ maxLength: 8 })), text: fc.option(textArb, { nil: undefined }) }).map((r) => ({ k: "unknown" as const, ...r })),
    fileArb.map((f) => ({ k: "file" as const, ...f })),
  );
}

function userPartsArb(flags: GenFlags): fc.Arbitrary<PartSpec[]> {
  const extra = fc.oneof(
    { weight: 3, arbitrary: textArb.map((text) => ({ k: "text" as const, text, synthetic: true })) },
    { weight: 2, arbitrary: textArb.map((text) => ({ k: "text" as const, text })) },
    { weight: 1, arbitrary: textArb.map((text) => ({ k: "text" as const, text, ignored: true })) },
    { weight: 2, arbitrary: fileArb.map((f) => ({ k: "file" as const, ...f })) },
    { weight: 1, arbitrary: fc.constantFrom("agent", "subtask", "compaction").map((type) => ({ k: "marker" as const, type: type as any })) },
    { weight: flags.odd, arbitrary: oddPartArb() },
    { weight: flags.odd, arbitrary: textArb.map((text) => ({ k: "noid" as const, text })) },
  );
  return fc.tuple(textArb, fc.array(extra, { maxLength: 3 })).map(([t, rest]) => [{ k: "text" as const, text: t }, ...rest]);
}

function stepArb(flags: GenFlags): fc.Arbitrary<StepSpec> {
  const oddOn = flags.odd > 0;
  return fc.record(
    {
      markers: fc.oneof({ weight: 8, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      reasoning: textArb,
      text: textArb,
      tools: fc.array(toolArb(flags), { maxLength: 4 }),
      extras: oddOn ? fc.array(oddPartArb(), { maxLength: 2 }) : fc.constant<PartSpec[]>([]),
      error: fc.constantFrom("APIError", "MessageAbortedError"),
      summary: fc.constant(true),
      shuffle: fc.nat(1000),
    },
    { requiredKeys: ["markers", "tools", "extras"] },
  ).map((s) => (oddOn ? s : { ...s, error: undefined, summary: undefined, shuffle: undefined }));
}

function oddArb(flags: GenFlags): fc.Arbitrary<OddSpec> {
  const none: OddSpec = { dupParts: [], dupMsgs: [], swaps: [], empties: [] };
  if (flags.odd === 0 && !flags.dupPartIds && !flags.dupMsgIds && !flags.outOfOrder) return fc.constant(none);
  const pair = fc.tuple(fc.nat(400), fc.nat(400));
  const some = fc.record({
    dupParts: flags.dupPartIds ? fc.array(pair, { maxLength: 2 }) : fc.constant<[number, number][]>([]),
    dupMsgs: flags.dupMsgIds ? fc.array(pair, { maxLength: 1 }) : fc.constant<[number, number][]>([]),
    swaps: flags.outOfOrder ? fc.array(fc.nat(200), { maxLength: 2 }) : fc.constant<number[]>([]),
    empties: flags.odd > 0 ? fc.array(fc.nat(200), { maxLength: 2 }) : fc.constant<number[]>([]),
    foreignSession: flags.odd > 0 ? fc.option(fc.nat(200), { nil: undefined }) : fc.constant<number | undefined>(undefined),
    noSessionOnFirst: flags.odd > 0 ? fc.boolean() : fc.constant(false),
    noticeAt: flags.odd > 0 ? fc.option(fc.nat(200), { nil: undefined }) : fc.constant<number | undefined>(undefined),
  });
  return fc.oneof({ weight: 3, arbitrary: fc.constant(none) }, { weight: 1, arbitrary: some });
}

export function sessionSpecArb(flags: GenFlags = DEFAULT_FLAGS): fc.Arbitrary<SessionSpec> {
  const turn = fc.record({ user: userPartsArb(flags), steps: fc.array(stepArb(flags), { minLength: 0, maxLength: 4 }) });
  const sid = flags.odd > 0 ? fc.oneof({ weight: 20, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat(WEIRD_SIDS.length - 1) }) : fc.constant(-1);
  return fc.record({ sid, turns: fc.array(turn, { minLength: 1, maxLength: flags.maxTurns }), odd: oddArb(flags) });
}

let sessionCounter = 0;

/** Builds the messages of a spec; `tag` makes the session id unique (state files are per session). */
export function buildSession(spec: SessionSpec, tag = `${process.pid}x${++sessionCounter}`): Message[] {
  const sessionID = spec.sid >= 0 ? `${WEIRD_SIDS[spec.sid % WEIRD_SIDS.length]}${tag}` : `ses_fz${tag}`;
  let n = 0;
  let t = 1_700_000_000_000;
  const nextId = (p: string) => `${p}_${String(++n).padStart(6, "0")}`;
  const messages: Message[] = [];
  const newMsg = (role: string, extra: Record<string, unknown> = {}): Message => {
    const id = nextId("msg");
    const m: Message = { info: { id, sessionID, role, time: { created: (t += 1000) }, ...extra }, parts: [] };
    messages.push(m);
    return m;
  };
  const add = (m: Message, p: Record<string, unknown>): void => void m.parts.push({ id: nextId("prt"), sessionID, messageID: m.info.id, ...p } as Part);

  function addSpec(m: Message, s: PartSpec): void {
    switch (s.k) {
      case "text":
        return add(m, { type: "text", text: textOf(s.text), ...(s.synthetic ? { synthetic: true } : {}), ...(s.ignored ? { ignored: true } : {}), time: { start: t, end: t } });
      case "reasoning": {
        // half signed (Anthropic's thinking: dropped at the next user message), half not
        // (OpenAI-compatible reasoning_content: sent back and cached with the rest)
        const text = textOf(s.text);
        return add(m, { type: "reasoning", text, time: { start: t, end: t }, ...(text.length % 2 === 0 ? { metadata: { anthropic: { signature: `sig${text.length}` } } } : {}) });
      }
      case "file": {
        const mime = MIMES[s.mime];
        const body = blobText(s.blob);
        const url = s.data ? `data:${mime};base64,${Buffer.from(body).toString("base64")}` : `file:///work/${FILE_NAMES[s.name ?? 0]}`;
        return add(m, { type: "file", mime, ...(s.name !== undefined ? { filename: FILE_NAMES[s.name] } : {}), url, ...(s.source ? { source: { type: "file", path: FILE_NAMES[s.name ?? 0], text: { value: body, start: 0, end: body.length } } } : {}) });
      }
      case "tool":
        return add(m, toolPart(s.tool, m));
      case "marker":
        return add(m, markerPart(s.type));
      case "unknown":
        return add(m, { type: s.type, ...(s.text ? { text: textOf(s.text) } : {}) });
      case "noid":
        m.parts.push({ id: 7 as unknown as string, sessionID, messageID: m.info.id, type: "text", text: textOf(s.text) });
        return;
    }
  }

  function toolPart(s: ToolSpec, m: Message): Record<string, unknown> {
    const start = (t += 10);
    let input: unknown = buildInput(s.input, s.tool);
    if (s.odd === "inputString") input = "src/a.ts";
    if (s.odd === "inputNull") input = null;
    if (s.odd === "inputArray") input = [];
    if (s.odd === "inputNumber") input = 42;
    let state: Record<string, unknown> | null | undefined;
    switch (s.status) {
      case "pending":
        state = { status: "pending", input, raw: "" };
        break;
      case "running":
        state = { status: "running", input, title: s.tool, metadata: {}, time: { start } };
        break;
      case "completed":
        state = { status: "completed", input, output: outputOf(s.output), title: s.tool, metadata: { truncated: false }, time: { start, end: start + 5, ...(s.compacted ? { compacted: start + 9 } : {}) } };
        if (s.attachments) state.attachments = [{ id: nextId("prt"), sessionID, messageID: m.info.id, type: "file", mime: "image/png", url: `data:image/png;base64,${"iVBORw0KGgo".repeat(40)}` }];
        break;
      case "error":
        state = { status: "error", input, error: outputOf(s.error), time: { start, end: start + 5 }, ...(s.interrupted ? { metadata: { interrupted: true, output: "partial output" } } : {}) };
        break;
    }
    if (s.odd === "noInput") delete state!.input;
    if (s.odd === "outputMissing") delete state!.output;
    if (s.odd === "noStatus") delete state!.status;
    if (s.odd === "unknownStatus") state!.status = "cancelled";
    if (s.odd === "noState") state = undefined;
    if (s.odd === "stateNull") state = null;
    const part: Record<string, unknown> = { type: "tool", callID: `call_${n}`, tool: s.tool };
    if (s.odd === "noTool") delete part.tool;
    if (s.odd === "noCallID") delete part.callID;
    if (state !== undefined) part.state = state;
    return part;
  }

  function markerPart(type: string): Record<string, unknown> {
    switch (type) {
      case "step-start":
        return { type, snapshot: "abc123" };
      case "step-finish":
        return { type, reason: "tool-calls", cost: 0, tokens: { input: 1, output: 1, reasoning: 0, cache: { read: 0, write: 0 } } };
      case "snapshot":
        return { type, snapshot: "def456" };
      case "patch":
        return { type, hash: "0123abcd", files: ["src/a.ts"] };
      case "agent":
        return { type, name: "build" };
      case "retry":
        return { type, attempt: 1, error: { name: "APIError", data: { message: "overloaded" } }, time: { created: t } };
      case "compaction":
        return { type, auto: true };
      default:
        return { type, prompt: "do the sub task", description: "sub", agent: "general" };
    }
  }

  for (const turn of spec.turns) {
    const u = newMsg("user", { agent: "build", model: { providerID: "fake", modelID: "m" } });
    for (const p of turn.user) addSpec(u, p);
    for (const step of turn.steps) {
      const a = newMsg("assistant", { parentID: u.info.id, providerID: "fake", modelID: "m", mode: "build", ...(step.error ? { error: { name: step.error, data: {} } } : {}), ...(step.summary ? { summary: true } : {}) });
      if (step.markers) add(a, markerPart("step-start"));
      if (step.reasoning) addSpec(a, { k: "reasoning", text: step.reasoning });
      if (step.text) addSpec(a, { k: "text", text: step.text });
      for (const tool of step.tools) addSpec(a, { k: "tool", tool });
      for (const e of step.extras) addSpec(a, e);
      if (step.markers) add(a, markerPart("step-finish"));
      if (step.shuffle !== undefined && step.shuffle % 7 === 0 && a.parts.length > 1) {
        const k = step.shuffle % a.parts.length;
        a.parts.push(...a.parts.splice(0, k)); // rotate: parts out of order within the message
      }
    }
  }

  // Odd shapes over the built session.
  const o = spec.odd;
  const allParts = messages.flatMap((m) => m.parts);
  for (const [i, j] of o.dupParts) if (allParts.length > 1) allParts[i % allParts.length].id = allParts[j % allParts.length].id;
  for (const [i, j] of o.dupMsgs) messages[i % messages.length].info.id = messages[j % messages.length].info.id;
  for (const k of o.empties) messages.splice(k % (messages.length + 1), 0, { info: { id: nextId("msg"), sessionID, role: k % 2 ? "assistant" : "user", time: { created: (t += 1) } }, parts: [] });
  if (o.noticeAt !== undefined) {
    // A plugin notice: an ignored-only user message (never sent, not a turn).
    const m: Message = { info: { id: nextId("msg"), sessionID, role: "user", time: { created: (t += 1) } }, parts: [] };
    m.parts.push({ id: nextId("prt"), sessionID, messageID: m.info.id, type: "text", text: "acp: pruned 3 outputs", ignored: true });
    messages.splice(o.noticeAt % (messages.length + 1), 0, m);
  }
  for (const k of o.swaps) {
    const i = k % messages.length;
    if (i + 1 < messages.length) [messages[i], messages[i + 1]] = [messages[i + 1], messages[i]];
  }
  if (o.foreignSession !== undefined) messages[o.foreignSession % messages.length].info.sessionID = `ses_other${tag}`;
  if (o.noSessionOnFirst && messages.length > 1) delete (messages[0].info as Partial<Message["info"]>).sessionID;
  return messages;
}

// ---------------------------------------------------------------------------------------------
// Call schedules: how the host calls transform over the session's life.

export interface ScheduleSpec {
  /** Before this call (mod calls) a second pruner is started from the first one's state on disk. */
  restartAt?: number;
  /** Bit k: after call k the same pruner transforms its own output again. */
  repeatMask: number;
  /** After call `at`, restore the `pick`-th decided part. */
  restores: { at: number; pick: number }[];
  /** From call `at` on, the host cuts the history before message `cut` (compaction). */
  compact?: { at: number; cut: number };
  /** After call `at`, the last `back` turns are reverted: later calls skip them (see buildCalls). */
  revert?: { at: number; back: number };
}

export const scheduleArb: fc.Arbitrary<ScheduleSpec> = fc.record(
  {
    restartAt: fc.nat(60),
    repeatMask: fc.nat(),
    restores: fc.array(fc.record({ at: fc.nat(60), pick: fc.nat(50) }), { maxLength: 3 }),
    compact: fc.record({ at: fc.nat(60), cut: fc.nat(60) }),
    revert: fc.record({ at: fc.nat(60), back: fc.integer({ min: 1, max: 6 }) }),
  },
  { requiredKeys: ["repeatMask", "restores"] },
);

export interface Call {
  /** Message index ranges [start, end) of the raw session, concatenated. */
  ranges: [number, number][];
}

export const callMessages = (raw: Message[], c: Call): Message[] => c.ranges.flatMap(([s, e]) => raw.slice(s, e));
export const callLabel = (c: Call) => c.ranges.map(([s, e]) => `[${s},${e})`).join("+");

/**
 * The calls of a replay: one per assistant message (its context is everything before it), then
 * the whole session. A revert removes the turns after a user message from every later call, as
 * OpenCode does once the next prompt is sent (the later calls continue at the next user message);
 * a compaction cuts the history before a message from some call on.
 */
export function buildCalls(messages: Message[], s: ScheduleSpec): Call[] {
  const ends: number[] = [];
  messages.forEach((m, i) => i > 0 && m.info?.role === "assistant" && ends.push(i));
  ends.push(messages.length);
  let calls: Call[] = ends.map((end) => ({ ranges: [[0, end]] }));
  // turns start at user messages the provider receives (not ignored-only notices, not empty ones)
  const users: number[] = [];
  messages.forEach((m, i) => m.info?.role === "user" && m.parts.some((p) => p && !(p.type === "text" && p.ignored)) && users.push(i));
  if (s.revert && users.length) {
    const r = s.revert.at % calls.length;
    const endR = ends[r];
    const before = users.filter((u) => u < endR);
    const u = before[Math.max(0, before.length - s.revert.back)];
    const next = users.find((x) => x >= endR);
    if (u !== undefined) {
      const later = next === undefined ? [] : ends.filter((e) => e > next).map((e): Call => ({ ranges: [[0, u], [next, e]] }));
      calls = [...calls.slice(0, r + 1), ...later];
    }
  }
  if (s.compact) {
    const from = s.compact.at % calls.length;
    const cut = s.compact.cut % Math.max(1, calls[from].ranges[0][1]);
    for (let k = from; k < calls.length; k++) {
      const [first, ...rest] = calls[k].ranges;
      const start = Math.min(cut, Math.max(first[0], first[1] - (rest.length ? 0 : 1)));
      calls[k] = { ranges: [[start, first[1]], ...rest] };
    }
  }
  return calls;
}

// ---------------------------------------------------------------------------------------------
// Random rule sets drawn from the catalogues (facts.ts FACTS, operators.ts OPERATORS,
// actions/index.ts ACTIONS), written as a YAML rule file.

const STRING_VALUES: Record<string, string[]> = {
  partType: PART_TYPES,
  role: ["user", "assistant"],
  tool: TOOLS,
  status: STATUSES,
  text: ["ok", "Task: continue", "[acp:t1]", ""],
  fileMime: MIMES,
  fileName: FILE_NAMES,
};
const GLOBS = ["**/*.ts", "src/**", "**/.env", "*.md", "src/a.ts", "{src,lib}/**/*.{ts,py}", "**/package.json", "**"];
const REGEXES = ["^\\s*(ls|git\\s+status)", "snapshot", "^src/", "\\.ts$", "[0-9]+", "(?i)READ", "^$", "é|😀", "^(bash|read)$", "x{3,}"];
const INPUT_PATHS: [string, fc.Arbitrary<unknown>][] = [
  ["$.filePath", fc.constantFrom(...FILES)],
  ["$.command", fc.constantFrom(...COMMANDS)],
  ["$.offset", fc.nat(300)],
  ["$.limit", fc.nat(400)],
  ["$.pattern", fc.constantFrom(...PATTERNS)],
  ["$.path", fc.constantFrom(...FILES)],
  ["$.url", fc.constantFrom(...URLS)],
  ["$.query", fc.constantFrom(...QUERIES)],
  ["$.todos[0].status", fc.constantFrom("pending", "completed")],
  ["$.content", fc.constantFrom("x", "")],
];
const PARAM_NAMES = ["turns", "minChars", "keepTokens", "keepCalls"];
const NUMBER_RANGE: Record<string, number> = { outputChars: 12000, outputLines: 300, inputChars: 4000, textChars: 2000, ageTurns: 6, ageCalls: 20, toolTokensNewer: 30000, promptTokens: 30000 };
const NUMBER_OPS = ["lessThan", "lessThanInclusive", "greaterThan", "greaterThanInclusive", "equal", "notEqual"];
const OPERATOR_NAMES = OPERATORS.map((o) => o.name);

type Leaf = { fact: string; operator: string; value: unknown; path?: string };
const negate = (op: fc.Arbitrary<string>) => fc.tuple(op, fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })).map(([o, not]) => (not ? `not:${o}` : o));
const paramRef = fc.constantFrom(...PARAM_NAMES).map((p) => ({ fact: "params", path: `$.${p}` }));

function valueForString(fact: string): fc.Arbitrary<{ operator: string; value: unknown }> {
  const pool = STRING_VALUES[fact] ?? ["x"];
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ operator: negate(fc.constantFrom("equal", "notEqual")), value: fc.constantFrom(...pool) }) },
    { weight: 3, arbitrary: fc.record({ operator: negate(fc.constantFrom("in", "notIn")), value: fc.subarray(pool, { minLength: 1 }) }) },
    { weight: 1, arbitrary: fc.record({ operator: negate(fc.constant("glob")), value: fc.oneof(fc.constantFrom(...GLOBS), fc.subarray(GLOBS, { minLength: 1 })) }) },
    { weight: 1, arbitrary: fc.record({ operator: negate(fc.constant("regex")), value: fc.constantFrom(...REGEXES) }) },
    ...(fact === "tool" ? [{ weight: 1, arbitrary: fc.record({ operator: negate(fc.constantFrom("in", "notIn")), value: fc.constant({ fact: "protectedTools" }) }) }] : []),
  );
}

function leafArb(facts: FactDef[]): fc.Arbitrary<Leaf> {
  const typed = fc.constantFrom(...facts).chain((f): fc.Arbitrary<Leaf> => {
    switch (f.type) {
      case "string":
        return valueForString(f.name).map((v) => ({ fact: f.name, ...v }));
      case "number":
        return fc.record({
          operator: negate(fc.constantFrom(...NUMBER_OPS)),
          value: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: NUMBER_RANGE[f.name] ?? 100 }) }, { weight: 1, arbitrary: paramRef }),
        }).map((v) => ({ fact: f.name, ...v }));
      case "boolean":
        return fc.record({ operator: negate(fc.constantFrom("equal", "notEqual")), value: fc.boolean() }).map((v) => ({ fact: f.name, ...v }));
      case "array":
        return fc.record({ operator: negate(fc.constantFrom("contains", "doesNotContain")), value: fc.constantFrom(...TOOLS.slice(0, 8), ...GLOBS) }).map((v) => ({ fact: f.name, ...v }));
      default:
        if (f.name === "params")
          return fc.record({ p: fc.constantFrom(...PARAM_NAMES), operator: negate(fc.constantFrom(...NUMBER_OPS)), value: fc.nat(20) }).map(({ p, ...v }) => ({ fact: "params", path: `$.${p}`, ...v }));
        return fc.constantFrom(...INPUT_PATHS).chain(([path, values]) =>
          fc.oneof(
            { weight: 3, arbitrary: fc.record({ operator: negate(fc.constantFrom("equal", "notEqual", "greaterThan", "lessThanInclusive")), value: values }) },
            { weight: 1, arbitrary: fc.record({ operator: negate(fc.constant("glob")), value: fc.oneof(fc.constantFrom(...GLOBS), fc.constant({ fact: "protectedFiles" })) }) },
            { weight: 1, arbitrary: fc.record({ operator: negate(fc.constant("regex")), value: fc.constantFrom(...REGEXES) }) },
          ).map((v) => ({ fact: "input", path, ...v })),
        );
    }
  });
  // Anything goes: any operator on any fact, with a value of any type (semantics must not throw).
  const chaos = fc.record({
    fact: fc.constantFrom(...facts.map((f) => f.name)),
    operator: negate(fc.constantFrom(...OPERATOR_NAMES)),
    value: fc.oneof(fc.constantFrom(1, 0, -1, "tool", "", true, false, null, [], ["read", 2]), fc.constantFrom(...REGEXES.slice(0, 4))),
  }).map((l) => (l.operator.endsWith("regex") ? { ...l, value: typeof l.value === "string" ? l.value : "x" } : l.operator.endsWith("glob") ? { ...l, value: "**/*.ts" } : l));
  return fc.oneof({ weight: 8, arbitrary: typed }, { weight: 1, arbitrary: chaos });
}

function conditionArb(facts: FactDef[], depth: number): fc.Arbitrary<Condition> {
  const leaf = leafArb(facts) as fc.Arbitrary<Condition>;
  if (depth === 0) return leaf;
  const sub = conditionArb(facts, depth - 1);
  return fc.oneof(
    { weight: 5, arbitrary: leaf },
    { weight: 3, arbitrary: fc.array(sub, { minLength: 1, maxLength: 3 }).map((all) => ({ all })) },
    { weight: 2, arbitrary: fc.array(sub, { minLength: 1, maxLength: 3 }).map((any) => ({ any })) },
    { weight: 1, arbitrary: sub.map((not) => ({ not })) },
  );
}

/** A top-level `when`: usually anchored on a part type or tool so the rule matches something. */
function whenArb(facts: FactDef[]): fc.Arbitrary<Condition> {
  const anchor = fc.oneof(
    fc.constantFrom(...TOOLS.slice(0, 10)).map((t) => ({ fact: "tool", operator: "equal", value: t })),
    fc.subarray(TOOLS.slice(0, 10), { minLength: 1, maxLength: 3 }).map((ts) => ({ fact: "tool", operator: "in", value: ts })),
    fc.constantFrom(...PART_TYPES.slice(0, 6)).map((t) => ({ fact: "partType", operator: "equal", value: t })),
  );
  return fc.oneof(
    { weight: 3, arbitrary: fc.tuple(anchor, fc.array(conditionArb(facts, 1), { maxLength: 2 })).map(([a, rest]) => ({ all: [a, ...rest] as Condition[] })) },
    { weight: 1, arbitrary: conditionArb(facts, 2) },
  );
}

const KEY_PIECES = ["{tool}", "{partType}", "{status}", "{input|json}", "{input.filePath|path}", "{input.filePath?|path}", "{input.command|squash}", "{input.command|head}", "{input.query|squash|lower}", "{input.path?|path}", "{input.pattern}", "{input.url}", "{text|lower}", "{fileName?}", "todo", "grp"];
const SHOW = ["filePath", "command", "offset", "limit", "url", "query", "pattern", "path", "action"];
const SUMMARIES = ["summary of the output", " ", "⟨short⟩", "x"];
/** ACP_FUZZ_SKIP=blank-summary leaves out the whitespace-only distill summary (see tests/property/regressions.test.ts). */
const summaries = () => (SKIP.has("blank-summary") ? SUMMARIES.filter((s) => s.trim()) : SUMMARIES);

const kinds = (...k: string[]) => FACTS.filter((f) => k.includes(f.kind));
const PROTECT_FACTS = kinds("static", "config", "dynamic");
const STATIC_FACTS = kinds("static", "config");
const ALL_FACTS = FACTS;

export interface RuleDraft {
  phase: Phase;
  description: string;
  key?: string;
  params?: Record<string, number>;
  commit?: "batch" | "immediate";
  when: Condition;
  then: Record<string, unknown>;
}

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const withoutUndefined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

function thenArb(phase: Phase): fc.Arbitrary<Record<string, unknown>> {
  if (phase === "protect") return fc.constant({ action: "protect" });
  if (phase === "supersede")
    return fc.record({
      action: fc.constant("supersede"),
      show: opt(fc.subarray(SHOW)),
      overrideProtection: opt(fc.boolean()),
      keepNewest: opt(fc.boolean()),
      range: opt(fc.constant({ offset: "offset", limit: "limit" })),
      by: opt(conditionArb(STATIC_FACTS, 1)),
    })
      // `overlap` from draws already made (keepNewest: false means the same as no keepNewest), so the
      // random stream, and the fixed samples other tests picked from it, stay as they were
      .map((t) => (t.keepNewest === false ? { ...t, keepNewest: undefined, overlap: t.range ? { older: "oldString", newer: "extra" } : { older: "newString", newer: "oldString" } } : t))
      .map(withoutUndefined);
  const action = fc.oneof(
    fc.record({ action: fc.constant("clear"), show: opt(fc.subarray(SHOW)), message: opt(fc.constantFrom("gone", "output cleared ✂")), text: opt(fc.constantFrom("[Old tool result content cleared]", "·")), allowGrowth: opt(fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant(true) })) }),
    fc.record({ action: fc.constant("truncate"), mode: opt(fc.constantFrom("first-line", "head-tail")), headLines: opt(fc.nat(50)), tailLines: opt(fc.nat(30)), maxChars: opt(fc.integer({ min: 1, max: 500 })), maxLineChars: opt(fc.integer({ min: 20, max: 500 })) }),
    fc.record({ action: fc.constant("distill"), summary: fc.constantFrom(...summaries()) }),
    fc.record({ action: fc.constant("strip-input"), keep: opt(fc.subarray(["filePath", "path", "pattern", "url", "command"])), minChars: opt(fc.nat(500)), overrideProtection: opt(fc.boolean()) }),
    fc.record({ action: fc.constantFrom("mask", "drop") }),
    fc.record({ action: fc.constant("collapse-code-blocks"), minLines: opt(fc.integer({ min: 1, max: 12 })) }),
  );
  return action.map((a) => withoutUndefined(a as Record<string, unknown>));
}

export const ruleDraftArb: fc.Arbitrary<RuleDraft> = fc
  .constantFrom<Phase>("protect", "supersede", "supersede", "age", "age", "reduce", "reduce", "manual")
  .chain((phase) => {
    const facts = phase === "protect" ? PROTECT_FACTS : phase === "supersede" ? STATIC_FACTS : ALL_FACTS;
    return fc.record({
      phase: fc.constant(phase),
      description: fc.constant(`fuzz rule in phase ${phase}`),
      key: phase === "supersede" ? fc.array(fc.constantFrom(...KEY_PIECES), { minLength: 1, maxLength: 3 }).map((p) => p.join(":")) : fc.constant(undefined),
      params: opt(fc.record({ turns: fc.nat(5), minChars: fc.nat(8000), keepTokens: fc.nat(30000), keepCalls: fc.nat(15) }, { requiredKeys: [] })),
      commit: opt(fc.constantFrom<"batch" | "immediate">("batch", "immediate")),
      when: whenArb(facts),
      then: thenArb(phase),
    });
  })
  .map((r) => withoutUndefined(r as unknown as Record<string, unknown>) as unknown as RuleDraft);

/** What the rule generator knows, checked against the catalogues by random-rules.test.ts. */
export const GENERATED = {
  actions: ["protect", "supersede", "clear", "truncate", "distill", "strip-input", "mask", "drop", "collapse-code-blocks"],
  operators: [...new Set(["equal", "notEqual", "in", "notIn", "glob", "regex", "contains", "doesNotContain", ...NUMBER_OPS, ...OPERATOR_NAMES])],
  objectFacts: ["input", "params"],
  catalogue: { actions: ACTIONS.map((a) => a.name), facts: FACTS, operators: OPERATOR_NAMES },
};

/** The YAML rule file of a rule set (ids fz-1, fz-2, …). */
export function ruleFileText(rules: RuleDraft[]): string {
  return stringify({ rules: Object.fromEntries(rules.map((r, i) => [`fz-${i + 1}`, r])) });
}

export interface RuleSetSpec {
  base: string;
  toggles: { id: string; setting: "on" | "off" | { with: Record<string, number> } }[];
  rules: RuleDraft[];
  config: ConfigSpec;
}

export interface ConfigSpec {
  tool: boolean;
  commit: { minTokens: number; pressureTokens: number; breakEven: number };
  protectedTools?: string[];
  protectedFiles?: string[];
}

export const configArb: fc.Arbitrary<ConfigSpec> = fc.record(
  {
    tool: fc.boolean(),
    commit: fc.record({ minTokens: fc.constantFrom(0, 200, 5000, 20000), pressureTokens: fc.constantFrom(0, 0, 3000), breakEven: fc.constantFrom(0, 11.5) }),
    protectedTools: fc.subarray(TOOLS, { maxLength: 4 }),
    protectedFiles: fc.subarray(GLOBS, { maxLength: 3 }),
  },
  { requiredKeys: ["tool", "commit"] },
);

/** Random rule sets: a preset, toggles of its built-in rules, and 1–5 rules of our own. */
export function ruleSetArb(builtins: { id: string; params: Record<string, unknown> }[]): fc.Arbitrary<RuleSetSpec> {
  const toggle = fc.constantFrom(...builtins).chain((b) => {
    const numeric = Object.keys(b.params).filter((k) => typeof b.params[k] === "number");
    const settings: fc.Arbitrary<RuleSetSpec["toggles"][number]["setting"]>[] = [fc.constantFrom<"on" | "off">("on", "off")];
    if (numeric.length) settings.push(fc.constantFrom(...numeric).chain((k) => fc.nat(k === "turns" ? 5 : 20000).map((v) => ({ with: { [k]: v } }))));
    return fc.oneof(...settings).map((setting) => ({ id: b.id, setting }));
  });
  return fc.record({
    base: fc.constantFrom("compact", "balanced", "verbose"),
    toggles: fc.array(toggle, { maxLength: 6 }),
    rules: fc.array(ruleDraftArb, { minLength: 1, maxLength: 5 }),
    config: configArb,
  });
}

// ---------------------------------------------------------------------------------------------
// Garbage: host-impossible inputs, for "never throws" and fail-open only.

export const garbageArb: fc.Arbitrary<unknown[]> = fc.array(
  fc.oneof(
    fc.anything({ maxDepth: 3 }),
    fc.record({ info: fc.oneof(fc.constant(null), fc.record({ id: fc.string(), sessionID: fc.oneof(fc.constant("ses_garbage"), fc.string(), fc.integer(), fc.constant({})), role: fc.oneof(fc.constantFrom("user", "assistant"), fc.anything()) }, { requiredKeys: [] })), parts: fc.oneof(fc.anything({ maxDepth: 2 }), fc.array(fc.oneof(fc.constant(null), fc.record({ id: fc.oneof(fc.string(), fc.integer()), type: fc.constantFrom("text", "tool", "reasoning", "file", "step-start", "x"), text: fc.anything({ maxDepth: 1 }), state: fc.anything({ maxDepth: 2 }), tool: fc.anything({ maxDepth: 0 }) }, { requiredKeys: [] })))) }, { requiredKeys: [] }),
  ),
  { maxLength: 8 },
);
