// Seeded synthetic sessions in OpenCode's MessageV2 shape, and corpus helpers, shared by the
// engine tests and scripts/bench.ts. The tool mix follows rule-engine-design.md §9 (read-heavy,
// repeated file paths from a small pool, ~5% errors); `odd` adds the loose shapes recorded
// sessions carry (string inputs, missing state, empty text) for the differential test.
import { fileURLToPath } from "node:url";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { Message, Part } from "../../src/graph/types.js";
import { loadSession } from "../../src/sim/load.js";

export const CORPUS_DIR = process.env.ACP_CORPUS ?? fileURLToPath(new URL("../../../shared/corpus/sessions", import.meta.url));

export function corpusFiles(): string[] {
  return readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => join(CORPUS_DIR, f));
}

/** Loads a corpus session with the recording host's `time.compacted` marks stripped. */
export function corpusSession(file: string): { id: string; messages: Message[] } {
  const s = loadSession(file);
  return { id: s.id, messages: s.messages };
}

/** Indexes of assistant messages: each is one model call whose context is messages[0..i). */
export function callIndexes(messages: Message[]): number[] {
  const out: number[] = [];
  messages.forEach((m, i) => i > 0 && m.info.role === "assistant" && out.push(i));
  return out;
}

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Tool weights from the prototype benchmark (rule-engine-design.md §9), plus rarer tools.
const TOOLS: [string, number][] = [
  ["read", 3555], ["bash", 1934], ["grep", 1257], ["edit", 1178], ["write", 477], ["todowrite", 477],
  ["glob", 438], ["webfetch", 402], ["todoread", 282], ["websearch", 60], ["task", 40], ["skill", 30],
  ["browser_snapshot", 30], ["context_prune", 10],
];
const TOTAL_WEIGHT = TOOLS.reduce((s, [, w]) => s + w, 0);
const COMMANDS = ["ls -la", "git status", "npm test", "pwd", "find . -name '*.ts'", "git log --oneline -5", "cat package.json", "tsc --noEmit", "git diff", "tree src"];
const PROTECTED = [".env", "package.json", "config/.env.local"];
const LINE = "export function handler(request: Request): Promise<Response> { return fetch(request); } // filler\n";

export interface GenOptions {
  seed: number;
  turns: number;
  /** Tool parts per assistant message (the last message of a turn may get fewer). */
  toolsPerStep: number;
  /** Assistant messages (model steps) per turn. */
  stepsPerTurn: number;
  /** Distinct file paths (hot paths recur: the pick is skewed towards low indexes). */
  files?: number;
  /** Add loose shapes: string/absent inputs, parts without state, whitespace text, odd statuses. */
  odd?: boolean;
  /** Leave the last step's tools pending/running, as in a live call. */
  liveTail?: boolean;
  sessionID?: string;
}

export function generateSession(o: GenOptions): Message[] {
  const r = rng(o.seed);
  const sessionID = o.sessionID ?? `ses_gen${o.seed}`;
  const files = o.files ?? 300;
  let ids = 0;
  const id = (p: string) => `${p}_${String(++ids).padStart(7, "0")}`;
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const file = () => (r() < 0.03 ? pick(PROTECTED) : `src/mod${Math.floor(Math.pow(r(), 2.5) * files)}/file.ts`);
  const text = (lines: number) => LINE.repeat(Math.max(1, lines));
  const messages: Message[] = [];
  const msg = (role: string): Message => {
    const m: Message = { info: { id: id("msg"), sessionID, role, time: { created: ids } }, parts: [] };
    messages.push(m);
    return m;
  };
  const part = (m: Message, p: Omit<Part, "id">): Part => {
    const full = { id: id("prt"), sessionID, messageID: m.info.id, ...p } as Part;
    m.parts.push(full);
    return full;
  };
  function toolCall(m: Message, live: boolean): void {
    let x = r() * TOTAL_WEIGHT;
    let tool = TOOLS[0][0];
    for (const [t, w] of TOOLS) if ((x -= w) < 0) { tool = t; break; }
    let input: Record<string, unknown>;
    let out = "";
    switch (tool) {
      case "read": {
        input = { filePath: file() };
        if (r() < 0.3) Object.assign(input, { offset: Math.floor(r() * 200), limit: 100 + Math.floor(r() * 300) });
        out = text(5 + Math.floor(Math.pow(r(), 2) * 400));
        break;
      }
      case "bash": input = { command: pick(COMMANDS), description: "run" }; out = text(1 + Math.floor(Math.pow(r(), 3) * 300)); break;
      case "grep": input = { pattern: pick(["TODO", "handler", "import .* from", "fetch\\("]), ...(r() < 0.5 ? { path: "src" } : {}), ...(r() < 0.3 ? { include: "*.ts" } : {}) }; out = text(1 + Math.floor(r() * 40)); break;
      case "edit": input = { filePath: file(), oldString: text(1 + Math.floor(r() * 8)), newString: text(1 + Math.floor(r() * 8)) }; out = "Edit applied successfully."; break;
      case "write": input = { filePath: file(), content: text(5 + Math.floor(r() * 80)) }; out = "Wrote file successfully."; break;
      case "todowrite": input = { todos: [{ content: "step", status: pick(["pending", "completed"]) }] }; out = JSON.stringify(input.todos); break;
      case "todoread": input = {}; out = "[]"; break;
      case "glob": input = { pattern: pick(["**/*.ts", "src/**/*.json", "*.md"]), ...(r() < 0.5 ? { path: "src" } : {}) }; out = text(1 + Math.floor(r() * 20)); break;
      case "webfetch": input = { url: `https://docs.example.com/page${Math.floor(r() * 40)}`, format: "markdown" }; out = text(20 + Math.floor(r() * 200)); break;
      case "websearch": input = { query: pick(["vitest  config", "Vitest config", "picomatch dot"]) }; out = text(10); break;
      case "browser_snapshot": input = {}; out = text(60); break;
      case "context_prune": input = { action: "prune", ids: ["x"] }; out = "ok"; break;
      default: input = { description: "sub", prompt: text(3) }; out = text(10);
    }
    const error = !live && r() < 0.05;
    const status = live ? pick(["pending", "running"]) : error ? "error" : "completed";
    const state: Record<string, unknown> = { status, input, time: { start: ids, end: ids + 1 } };
    if (status === "completed") Object.assign(state, { output: out, title: tool, metadata: {} });
    if (status === "error") state.error = r() < 0.5 ? "Error: command failed\n" + text(Math.floor(r() * 30)) : "Error: file not found";
    if (o.odd && r() < 0.04) state.input = pick<any>(["src/mod1/file.ts", null, [], 42]);
    if (o.odd && r() < 0.02) {
      part(m, { type: "tool", tool, callID: id("call") });
      return;
    }
    part(m, { type: "tool", tool, callID: id("call"), state: state as any });
  }

  for (let t = 0; t < o.turns; t++) {
    const u = msg("user");
    if (r() < 0.1) part(u, { type: "text", text: "Caveat: local command output follows.", synthetic: true });
    part(u, { type: "text", text: r() < 0.2 ? "Please fix this:\n```ts\n" + text(12) + "```\nthanks" : `Task ${t}: continue` });
    if (r() < 0.05) part(u, { type: "file", mime: "text/plain", filename: "notes.txt", url: `data:text/plain;base64,${"QUJD".repeat(200)}` });
    if (o.odd && r() < 0.05) part(u, { type: "text", text: "   " });
    for (let s = 0; s < o.stepsPerTurn; s++) {
      const a = msg("assistant");
      const last = t === o.turns - 1 && s === o.stepsPerTurn - 1;
      part(a, { type: "step-start" });
      if (r() < 0.4) part(a, { type: "reasoning", text: "Thinking about the next step.\n" + text(Math.floor(r() * 5)), metadata: { anthropic: { signature: "sig" } } });
      if (r() < 0.3) part(a, { type: "text", text: "Looking at the files." });
      for (let k = 0; k < o.toolsPerStep; k++) toolCall(a, last && o.liveTail === true);
      if (o.odd && r() < 0.02) a.info.error = { name: "APIError" };
      part(a, { type: "step-finish", reason: "tool-calls" });
    }
  }
  return messages;
}

/** Appends one model step with `n` completed tool calls; with `newTurn`, first a user message. */
export function appendStep(messages: Message[], seed: number, n: number, newTurn: boolean): Message[] {
  const extra = generateSession({ seed, turns: 1, stepsPerTurn: 1, toolsPerStep: n, sessionID: messages[0].info.sessionID });
  const tag = `x${seed}`;
  for (const m of extra) {
    m.info.id = `${m.info.id}${tag}`;
    m.parts = m.parts.filter((p) => p.type === "tool" || (newTurn && m.info.role === "user" && p.type === "text" && !p.synthetic)).slice(0, m.info.role === "user" ? 1 : n);
    for (const p of m.parts) Object.assign(p, { id: `${p.id}${tag}`, messageID: m.info.id });
  }
  return [...messages, ...extra.filter((m) => newTurn || m.info.role === "assistant")];
}

/** A fresh deep copy of JSON data (new objects and arrays, strings shared as they are immutable):
 * what structuredClone gives on messages, about 7× faster, so replays can copy every call. */
export function deepCopy<T>(v: T): T {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    const a = new Array(v.length);
    for (let i = 0; i < v.length; i++) a[i] = deepCopy(v[i]);
    return a as T;
  }
  const o: Record<string, unknown> = {};
  for (const k in v) o[k] = deepCopy((v as Record<string, unknown>)[k]);
  return o as T;
}
