// Per-session decisions: sticky once committed, persisted atomically so a new OpenCode
// process renders byte-identical prompts. Only decisions and the sent-prefix marker are
// stored; the original content always comes back from the host's own history.
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Patch, Slot } from "./actions/index.js";
import type { ManualEntry } from "./manual.js";

export const STATE_VERSION = 1;

export interface Decision {
  rule: string;
  action: string;
  patch: Patch;
  tokens: number;
  /** Call number at which it was committed. */
  call: number;
  by?: string;
}

export type DecisionSlots = Partial<Record<Exclude<Slot, "protect">, Decision>>;

export interface SessionState {
  version: number;
  sessionID: string;
  calls: number;
  /** Write counter: a file whose rev differs from ours was written by another process. */
  rev?: number;
  /** Id of the last message of the previous call's prompt: everything up to it is cached upstream. */
  sentUpTo?: string;
  decisions: Record<string, DecisionSlots>;
  /** Parts the user or model restored: rules leave them alone from then on. */
  pinned?: Record<string, true>;
  /** Short ids the model cites → part ids (derived from the part ids, see ids.ts). */
  ids?: Record<string, string>;
  /** The message after which the tool's instructions are inserted (deferred until the prompt is large). */
  introAt?: string;
  /** Prune requests from the model, applied in the manual phase. */
  manual?: Record<string, ManualEntry>;
}

export const newState = (sessionID: string): SessionState => ({ version: STATE_VERSION, sessionID, calls: 0, decisions: {} });

const SAFE_ID = /^[A-Za-z0-9_.-]{1,200}$/;

/** Session ids become file names: refuse anything that could escape the state folder. */
export function stateFile(dir: string, sessionID: string): string | undefined {
  if (typeof sessionID !== "string" || !SAFE_ID.test(sessionID) || sessionID.startsWith(".")) return undefined;
  return join(dir, `${sessionID}.json`);
}

/** Loads a session's state; `onFresh` is told when there was none (or none usable). */
export function loadState(dir: string, sessionID: string, onProblem?: (msg: string) => void, onFresh?: () => void): SessionState {
  const file = stateFile(dir, sessionID);
  if (!file) return newState(sessionID);
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch {
    onFresh?.();
    return newState(sessionID);
  }
  try {
    const s = JSON.parse(raw) as SessionState;
    if (s.version !== STATE_VERSION || s.sessionID !== sessionID || typeof s.decisions !== "object") throw new Error(`unsupported state version ${s.version}`);
    return s;
  } catch (e) {
    // Corrupt or from a newer version: keep it for inspection, start clean.
    const aside = `${file}.bad-${Date.now()}`;
    try {
      renameSync(file, aside);
    } catch {}
    onProblem?.(`state file ${file} unreadable (${(e as Error).message}); moved to ${aside}`);
    onFresh?.();
    return newState(sessionID);
  }
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Runs `fn` holding `<file>.lock` (best effort: after ~1 s, or on a lock older than 10 s, it proceeds). */
function withLock<T>(file: string, fn: () => T): T {
  const lock = `${file}.lock`;
  let fd: number | undefined;
  for (let i = 0; i < 200 && fd === undefined; i++) {
    try {
      fd = openSync(lock, "wx");
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 10_000) unlinkSync(lock);
      } catch {}
      sleep(5);
    }
  }
  try {
    return fn();
  } finally {
    if (fd !== undefined) {
      closeSync(fd);
      try {
        unlinkSync(lock);
      } catch {}
    }
  }
}

function readValid(file: string, sessionID: string): SessionState | undefined {
  try {
    const s = JSON.parse(readFileSync(file, "utf8")) as SessionState;
    return s.version === STATE_VERSION && s.sessionID === sessionID && typeof s.decisions === "object" ? s : undefined;
  } catch {
    return undefined;
  }
}

/** Folds another process's writes into `ours`; returns true when it brought anything new. */
export function mergeState(ours: SessionState, disk: SessionState): boolean {
  let changed = false;
  for (const [id, slots] of Object.entries(disk.decisions))
    for (const slot of ["output", "input"] as const) {
      const d = slots[slot];
      if (d && !ours.decisions[id]?.[slot]) {
        (ours.decisions[id] ??= {})[slot] = d;
        changed = true;
      }
    }
  for (const [k, v] of Object.entries(disk.ids ?? {}))
    if ((ours.ids ??= {})[k] === undefined) {
      ours.ids[k] = v;
      changed = true;
    }
  for (const [k, v] of Object.entries(disk.manual ?? {}))
    if ((ours.manual ??= {})[k] === undefined) {
      ours.manual[k] = v;
      changed = true;
    }
  for (const k of Object.keys(disk.pinned ?? {}))
    if (!(ours.pinned ??= {})[k]) {
      ours.pinned[k] = true;
      changed = true;
    }
  // A restore anywhere wins over rule decisions made elsewhere before it.
  for (const k of Object.keys(ours.pinned ?? {})) if (ours.decisions[k] && ours.decisions[k].output?.rule !== "manual") delete ours.decisions[k];
  if (ours.introAt === undefined && disk.introAt !== undefined) {
    ours.introAt = disk.introAt;
    changed = true;
  }
  ours.calls = Math.max(ours.calls, disk.calls);
  return changed;
}

/**
 * Writes state atomically (temp file + rename) under a lock; if another process wrote since we
 * last synced (serve + attach, two terminals), its decisions are merged in first, so neither
 * process loses the other's updates. Returns true when foreign changes were merged.
 */
export function saveState(dir: string, state: SessionState): boolean {
  const file = stateFile(dir, state.sessionID);
  if (!file) return false;
  mkdirSync(dir, { recursive: true });
  return withLock(file, () => {
    const disk = readValid(file, state.sessionID);
    const foreign = disk !== undefined && (disk.rev ?? 0) !== (state.rev ?? 0) && mergeState(state, disk);
    state.rev = Math.max(disk?.rev ?? 0, state.rev ?? 0) + 1;
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(tmp, JSON.stringify(state));
    renameSync(tmp, file);
    return foreign;
  });
}
