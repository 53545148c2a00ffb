// The golden replay: every call of the development corpus (../shared/corpus, both folders) and of
// seeded generated sessions, under the three presets, in two modes, reduced to short hashes of the
// prompt and the state after each call. A refactor must leave every hash as recorded; a behaviour
// change re-records them (`npm run golden:record`, docs/architecture.md "Golden replay").
//
//   live:     one long-lived pruner without a state folder, as `acp simulate` replays.
//   restarts: a state folder, a new pruner reading it at call 3 and every 20 calls, and between calls the
//             model's prune requests (discard, distill), the user's sweep and restores.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import type { AcpPruner } from "../../src/engine/pruner.js";
import { createPruner } from "../../src/index.js";
import type { SessionState } from "../../src/engine/state.js";
import { stateFiles, stateJson } from "../../src/store/state-files.js";
import type { Message } from "../../src/graph/types.js";
import { loadSession } from "../../src/sim/load.js";
import { callTime, deepCopy } from "../../src/sim/replay.js";
import { buildSession, DEFAULT_FLAGS, sessionSpecArb } from "../property/arbitraries.js";
import { generateSession } from "../engine/session-gen.js";
import { CORPUS, MULTITURN } from "../sim/build.js";

export const PRESETS = ["compact", "balanced", "verbose"] as const;
export const MODES = ["live", "restarts"] as const;
export type Mode = (typeof MODES)[number];

/** The recorded hashes: tests/golden/golden.json. */
export const GOLDEN_FILE = new URL("./golden.json", import.meta.url);

export interface GoldenSession {
  /** `corpus/<file>`, `multiturn/<file>` or `gen/<name>`: the golden's key, stable across machines. */
  name: string;
  messages: () => Message[];
}

/** Every session of the golden: the corpus folders where present, then the generated ones. */
export function goldenSessions(): GoldenSession[] {
  const out: GoldenSession[] = [];
  for (const [prefix, dir] of [["corpus", CORPUS], ["multiturn", MULTITURN]] as const) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((n) => n.endsWith(".json")).sort()) out.push({ name: `${prefix}/${f}`, messages: () => loadSession(join(dir, f)).messages });
  }
  return [...out, ...generatedSessions()];
}

/** Both corpus folders are there (without them the golden checks the generated sessions only). */
export const corpusPresent = () => existsSync(CORPUS) && existsSync(MULTITURN);

/**
 * Generated sessions: the property tests' arbitraries (odd shapes, weird session ids, out-of-order
 * messages; dup-part-ids left out, an open finding) at a fixed seed, and session-gen's tool mix.
 * A fast-check upgrade may change the samples: re-record then.
 */
function generatedSessions(): GoldenSession[] {
  const flags = { ...DEFAULT_FLAGS, dupPartIds: false, maxTurns: 9 };
  const specs = fc.sample(sessionSpecArb(flags), { seed: 15, numRuns: 12 });
  const out: GoldenSession[] = specs.map((spec, i) => ({ name: `gen/arb${i}`, messages: () => buildSession(spec, `golden${i}`) }));
  for (const [i, odd] of [[1, false], [2, true], [3, false]] as const)
    out.push({ name: `gen/mix${i}`, messages: () => generateSession({ seed: i, turns: 12 + 4 * i, stepsPerTurn: 3, toolsPerStep: 3, odd, files: 20 }) });
  return out;
}

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/**
 * The state as it would be saved, less the journal token (random per snapshot) and `waiting` (what
 * the call left for the commit policy, a report for /acp stats: the call result it copies is not
 * hashed either, and the decisions it reports on are).
 */
function stateText(state: SessionState): string {
  const { journal: _journal, waiting: _waiting, ...rest } = state;
  return stateJson(rest as SessionState);
}

export interface Replayed {
  /** Per call: 5 hex digits of the prompt's hash, then 5 of the state's. */
  calls: string[];
  /** sha256 over every call's full hashes and the tool results: what decides equality. */
  digest: string;
  /** What the replay exercised (tests check that the slice is not vacuous). */
  stats: { decisions: number; restarts: number; requests: number };
}

const SID_FALLBACK = "ses_golden_none";

/** Replays one session under a preset and mode; the pruner's swallowed errors are part of the digest. */
export function replayGolden(messages: Message[], preset: string, mode: Mode): Replayed {
  const errors: string[] = [];
  const onError = (e: unknown, where: string) => void errors.push(`${where}: ${(e as Error)?.message ?? e}`);
  const sid = messages.find((m) => m?.info?.sessionID)?.info.sessionID ?? SID_FALLBACK;
  const proc = shared(preset, mode, sid, onError);
  const all = createHash("sha256");
  const calls: string[] = [];
  const stats = { decisions: 0, restarts: 0, requests: 0 };
  try {
    let pruner = proc.pruner;
    let k = 0;
    for (let index = 1; index < messages.length; index++) {
      if (messages[index]?.info?.role !== "assistant") continue;
      k++;
      if (mode === "restarts" && (k === 3 || k % 20 === 10)) {
        pruner = createPruner({ preset, stateDir: proc.dir, manualTool: "context_prune", onError });
        stats.restarts++;
      }
      const context = messages.slice(0, index);
      const pruned = deepCopy(context);
      const now = callTime(messages[index]);
      pruner.transform(pruned, now !== undefined ? { now } : {});
      const prompt = sha(pruner.systemPrompt(sid) + "\u0000" + JSON.stringify(pruned));
      let extra = errors.splice(0).join("\n");
      if (mode === "restarts") {
        const replies = requests(pruner, sid, context, k);
        stats.requests += replies.length;
        extra += replies.join("\n");
      }
      const st = pruner.state(sid);
      stats.decisions = Object.keys(st.decisions).length + Object.keys(st.manual ?? {}).length;
      const state = sha(stateText(st) + "\u0000" + extra);
      all.update(`${prompt}${state}`);
      calls.push(prompt.slice(0, 5) + state.slice(0, 5));
    }
  } finally {
    if (proc.dir) for (const f of stateFiles(proc.dir, sid)) rmSync(f, { force: true });
  }
  return { calls, digest: all.digest("hex").slice(0, 16), stats };
}

interface Process {
  pruner: AcpPruner;
  /** The state folder (restarts mode): restarted pruners read it. */
  dir?: string;
  /** Sessions it has served: a session replayed again gets a new process. */
  sids: Set<string>;
  onError: (e: unknown, where: string) => void;
}
const pool = new Map<string, Process>();
const dirs: string[] = [];
process.on("exit", () => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/**
 * The process a replay starts in: one serves up to 10 sessions of a preset and mode, as OpenCode
 * serves many (createPruner costs 40-160 ms of YAML and schemas); errors go to the latest replay.
 */
function shared(preset: string, mode: Mode, sid: string, onError: (e: unknown, where: string) => void): Process {
  const key = `${preset} ${mode}`;
  let p = pool.get(key);
  if (!p || p.sids.size >= 10 || p.sids.has(sid)) {
    const dir = mode === "restarts" ? mkdtempSync(join(tmpdir(), "acp-golden-")) : undefined;
    if (dir) dirs.push(dir);
    const q: Process = { dir, sids: new Set(), onError, pruner: undefined as unknown as AcpPruner };
    q.pruner = createPruner({ preset, stateDir: dir, manualTool: dir ? "context_prune" : undefined, onError: (e, where) => q.onError(e, where) });
    pool.set(key, (p = q));
  }
  p.sids.add(sid);
  p.onError = onError;
  return p;
}

/** Between calls: what the model and the user ask for, at fixed calls; returns the replies. */
function requests(p: AcpPruner, sid: string, history: Message[], k: number): string[] {
  const st = p.state(sid);
  const ids = Object.keys(st.ids ?? {}).sort();
  const out: string[] = [];
  if (ids.length > 0 && k % 5 === 2) out.push(p.manual(sid, { action: "discard", targets: [ids[k % ids.length]] }, history).text);
  if (ids.length > 0 && k % 10 === 7) out.push(p.manual(sid, { action: "distill", targets: [[ids[(k * 3) % ids.length], `summary at call ${k}`]] }, history).text);
  if (k % 11 === 9) {
    const decided = Object.keys(st.decisions).sort();
    if (decided.length > 0) out.push(String(p.restore(sid, decided[k % decided.length])));
  }
  if (k % 13 === 6) out.push(JSON.stringify(p.sweep(sid, history, 2)));
  return out;
}

/** The slice npm test replays (tests/golden/golden.test.ts): a few seconds' worth. */
export const SMALL = [
  "corpus/ses_39b2f9630ffewQksq2Ld8n4axU.json", // an `opencode export` recording
  "corpus/3bd9cf18-3c9b-42f5-8fd1-47f5456c1fec.json", // Claude Code, converted
  "multiturn/ff496ab6-3f32-4b89-bc79-f91b66042aa8.json",
  ...[0, 2, 5, 7, 10].map((i) => `gen/arb${i}`), // the longer ones
  "gen/mix1",
];

export const entryKey = (session: string, preset: string, mode: Mode) => `${session} ${preset} ${mode}`;

export interface GoldenEntry {
  digest: string;
  /** The per-call hashes, space-separated. */
  calls: string;
}
export type Golden = Record<string, GoldenEntry>;

export const toEntry = (r: Replayed): GoldenEntry => ({ digest: r.digest, calls: r.calls.join(" ") });

/** How a replay differs from its recorded entry: undefined when it is the same. */
export function difference(key: string, got: Replayed, want: GoldenEntry | undefined): string | undefined {
  if (!want) return `${key}: not in the golden (npm run golden:record)`;
  if (want.digest === got.digest) return undefined;
  const recorded = want.calls.split(" ");
  const n = Math.max(recorded.length, got.calls.length);
  for (let i = 0; i < n; i++) {
    const a = recorded[i];
    const b = got.calls[i];
    if (a === b) continue;
    if (a === undefined || b === undefined) return `${key}: ${recorded.length} calls recorded, ${got.calls.length} now`;
    const what = [a.slice(0, 5) !== b.slice(0, 5) && "prompt", a.slice(5) !== b.slice(5) && "state"].filter(Boolean).join(" and ");
    return `${key}: call ${i + 1} of ${n} differs first (${what || "digest"})`;
  }
  return `${key}: digest differs (${want.digest} recorded, ${got.digest} now)`;
}
