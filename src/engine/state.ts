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
  /** The decided part's type: a repeated pass finds parts by id, and a history may repeat ids. */
  partType?: string;
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
    syncOf(s).base = raw;
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

function parseValid(raw: string, sessionID: string): SessionState | undefined {
  try {
    const s = JSON.parse(raw) as SessionState;
    return s && s.version === STATE_VERSION && s.sessionID === sessionID && typeof s.decisions === "object" && s.decisions !== null ? s : undefined;
  } catch {
    return undefined;
  }
}

function readValid(file: string, sessionID: string): SessionState | undefined {
  try {
    return parseValid(readFileSync(file, "utf8"), sessionID);
  } catch {
    return undefined;
  }
}

/**
 * Per state object: the JSON last read from or written to disk (the base of a three-way merge),
 * and the parts the user or the model changed since (manual prunes, restores, sweeps).
 */
const syncs = new WeakMap<SessionState, Sync>();

interface Sync {
  base?: string;
  touched: Set<string>;
  /** The state file as this process last wrote it (inode, size, mtime): unchanged, nobody else wrote. */
  stat?: string;
}

function syncOf(state: SessionState): Sync {
  let s = syncs.get(state);
  if (!s) syncs.set(state, (s = { touched: new Set() }));
  return s;
}

/** Records that a request of the user or model changed this part: on a merge, ours wins for it. */
export function touch(state: SessionState, partId: string): void {
  syncOf(state).touched.add(partId);
}

const SLOTS = ["output", "input"] as const;
const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

function setEntry<T>(rec: Record<string, T>, key: string, value: T | undefined): void {
  if (value === undefined) delete rec[key];
  else rec[key] = value;
}

/** Sets or clears one decision slot in place (nodes hold the slots object, so a render sees it at once). */
function setSlot(state: SessionState, partId: string, slot: (typeof SLOTS)[number], d: Decision | undefined): void {
  const slots = state.decisions[partId] ?? (d ? (state.decisions[partId] = {}) : undefined);
  if (!slots) return;
  setEntry(slots, slot, d);
  if (!slots.output && !slots.input) delete state.decisions[partId];
}

/**
 * Folds another process's writes into `ours`; returns true when it changed anything. A three-way
 * merge against what we last synced: every write happens right after the change under the lock,
 * so what we changed since our last sync is newer than anything on disk and stands, and what we
 * did not change takes the disk's value — deletions included (a restore elsewhere).
 */
export function mergeState(ours: SessionState, disk: SessionState): boolean {
  const sync = syncOf(ours);
  const base = (sync.base !== undefined && parseValid(sync.base, ours.sessionID)) || newState(ours.sessionID);
  let changed = false;
  const manual = (ours.manual ??= {});
  const pinned = (ours.pinned ??= {});
  const parts = new Set<string>();
  for (const s of [ours, disk, base]) for (const rec of [s.decisions, s.manual ?? {}, s.pinned ?? {}]) for (const k of Object.keys(rec)) parts.add(k);
  for (const id of parts) {
    if (sync.touched.has(id)) {
      // our request is the newest; a manual one keeps the other process's rule decisions on free
      // slots, and its committed manual decision when both asked for the same (not yet committed here)
      if (!pinned[id])
        for (const slot of SLOTS) {
          const d = disk.decisions[id]?.[slot];
          if (d && (d.rule !== "manual" || same(manual[id], disk.manual?.[id])) && !ours.decisions[id]?.[slot]) {
            setSlot(ours, id, slot, d);
            changed = true;
          }
        }
      continue;
    }
    if (!same(manual[id], disk.manual?.[id])) {
      setEntry(manual, id, disk.manual?.[id]);
      changed = true;
    }
    if (!same(pinned[id], disk.pinned?.[id])) {
      setEntry(pinned, id, disk.pinned?.[id]);
      changed = true;
    }
    for (const slot of SLOTS) {
      const o = ours.decisions[id]?.[slot];
      const d = disk.decisions[id]?.[slot];
      if (same(o, d) || !same(o, base.decisions[id]?.[slot])) continue; // equal, or ours is newer
      setSlot(ours, id, slot, d);
      changed = true;
    }
    // A restore anywhere wins over decisions made elsewhere before it: rules leave pinned parts alone.
    if (pinned[id] && ours.decisions[id]) {
      for (const slot of SLOTS) setSlot(ours, id, slot, undefined);
      changed = true;
    }
  }
  for (const [k, v] of Object.entries(disk.ids ?? {}))
    if ((ours.ids ??= {})[k] === undefined) {
      ours.ids[k] = v;
      changed = true;
    }
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
    // Still the file this process wrote: no other process wrote since, so there is nothing to
    // merge (and no 2 MB to read and parse on every call of a long session).
    const sync = syncOf(state);
    const ours = sync.stat !== undefined && statKey(file) === sync.stat;
    const disk = ours ? undefined : readValid(file, state.sessionID);
    const foreign = disk !== undefined && (disk.rev ?? 0) !== (state.rev ?? 0) && mergeState(state, disk);
    state.rev = Math.max(disk?.rev ?? 0, state.rev ?? 0) + 1;
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    const json = stateJson(state);
    writeFileSync(tmp, json);
    renameSync(tmp, file);
    syncs.set(state, { base: json, touched: new Set(), stat: statKey(file) });
    return foreign;
  });
}

function statKey(file: string): string | undefined {
  try {
    const s = statSync(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}`;
  } catch {
    return undefined;
  }
}

/**
 * Per decision record of a part: the JSON of its entry, valid while the record holds the same
 * decisions (a decision is never changed once made; a change is a new object).
 */
const entryJson = new WeakMap<object, { key: string; output?: Decision; input?: Decision; json: string }>();

/**
 * JSON.stringify(state), reusing the JSON of every part's decisions written before: a long
 * session holds thousands of them, and the state is written on every call.
 */
export function stateJson(state: SessionState): string {
  let out = "{";
  for (const key of Object.keys(state)) {
    const v = (state as unknown as Record<string, unknown>)[key];
    const json = key === "decisions" && isPlain(v) ? decisionsJson(v) : JSON.stringify(v);
    if (json === undefined) continue; // undefined, functions: left out, as by JSON.stringify
    out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${json}`;
  }
  return `${out}}`;
}

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype && typeof (v as { toJSON?: unknown }).toJSON !== "function";

function decisionsJson(rec: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of Object.keys(rec)) {
    const slots = rec[key];
    if (!isPlain(slots)) {
      const json = JSON.stringify(slots);
      if (json !== undefined) parts.push(`${JSON.stringify(key)}:${json}`);
      continue;
    }
    const { output, input } = slots as DecisionSlots;
    let e = entryJson.get(slots);
    if (e === undefined || e.key !== key || e.output !== output || e.input !== input) {
      const json = JSON.stringify(key) + ":" + JSON.stringify(slots);
      json.charCodeAt(0); // flattened now, not at every join
      entryJson.set(slots, (e = { key, output, input, json }));
    }
    parts.push(e.json);
  }
  return `{${parts.join(",")}}`;
}
