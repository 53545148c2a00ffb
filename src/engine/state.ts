// Per-session decisions: sticky once committed, persisted so a new OpenCode process renders
// byte-identical prompts. Only decisions and the sent-prefix marker are stored; the original
// content always comes back from the host's own history.
//
// On disk: `<session>.json`, written whole and atomically, and `<session>.journal`, one JSON line
// per later save with what changed (a long session's state is megabytes; a call changes a few
// decisions). A journal belongs to the snapshot whose `journal` token its first line repeats; a
// new snapshot starts a new journal, so a crash between the two writes leaves an old journal that
// is ignored, and a torn last line is ignored too (that save's request was never sent).
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Patch, Slot } from "./actions/index.js";
import type { ManualEntry } from "./manual-entry.js";

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
  /** When the previous call was made (ms since the epoch): a gap longer than the cache lifetime means nothing is cached. */
  lastCallAt?: number;
  /**
   * The call count when the cache last expired (a call after more than the cache lifetime): the
   * calls made since then are the break-even's estimate of the calls to come before it expires again.
   */
  cachedSince?: number;
  decisions: Record<string, DecisionSlots>;
  /** Parts the user or model restored: rules leave them alone from then on. */
  pinned?: Record<string, true>;
  /** Short ids the model cites → part ids (derived from the part ids, see ids.ts). */
  ids?: Record<string, string>;
  /** The message after which the tool's instructions are inserted (deferred until the prompt is large). */
  introAt?: string;
  /** Prune requests from the model, applied in the manual phase. */
  manual?: Record<string, ManualEntry>;
  /** Token of the journal that continues this snapshot on disk. */
  journal?: string;
  /** Regret events (regret.ts), by event key: a pruned part brought back or its call re-run. Never removed. */
  regret?: Record<string, RegretEvent>;
}

/** Who regretted a prune: the agent restored it (context_prune), the user did (/acp restore), or the model re-ran its call. */
export type RegretKind = "agent" | "user" | "rerun";

export interface RegretEvent {
  /** The rule whose decision hid the part ("manual" for the agent's or user's own prune). */
  rule: string;
  kind: RegretKind;
  /** The part that had been pruned. */
  part: string;
}

/**
 * The decisions recorded under a part's id, if they were made for a part of its type. A history
 * may repeat part ids (OpenCode's do not): a record made for a part of another type belongs to
 * that part (one a compaction cut off, say) and must not land on this one. Records without a
 * type (older state files) count as this part's.
 */
export function decisionsOf(decisions: Record<string, DecisionSlots>, part: { id: string; type: string }): DecisionSlots | undefined {
  const slots = decisions[part.id];
  if (slots === undefined) return undefined;
  const type = slots.output?.partType ?? slots.input?.partType;
  return type === undefined || type === part.type ? slots : undefined;
}

export const newState = (sessionID: string): SessionState => ({ version: STATE_VERSION, sessionID, calls: 0, decisions: {} });

const SAFE_ID = /^[A-Za-z0-9_.-]{1,200}$/;

/** Session ids become file names: refuse anything that could escape the state folder. */
export function stateFile(dir: string, sessionID: string): string | undefined {
  if (typeof sessionID !== "string" || !SAFE_ID.test(sessionID) || sessionID.startsWith(".")) return undefined;
  return join(dir, `${sessionID}.json`);
}

/** The journal beside a state file. */
export function journalFile(dir: string, sessionID: string): string | undefined {
  const file = stateFile(dir, sessionID);
  return file && `${file.slice(0, -".json".length)}.journal`;
}

/** Every file holding a session's state (to copy or remove it). */
export function stateFiles(dir: string, sessionID: string): string[] {
  const file = stateFile(dir, sessionID);
  return file ? [file, journalFile(dir, sessionID)!] : [];
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
    const sync = syncOf(s);
    sync.base = raw;
    sync.lines = applyJournal(s, readJournal(journalFile(dir, sessionID)!));
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
export function withLock<T>(file: string, fn: () => T): T {
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

/** The state on disk (snapshot and journal), read without side effects; undefined when missing or not valid. */
export function readState(dir: string, sessionID: string): SessionState | undefined {
  const file = stateFile(dir, sessionID);
  return file ? readValid(file, journalFile(dir, sessionID)!, sessionID) : undefined;
}

/** The state on disk: the snapshot with its journal applied. */
function readValid(file: string, journal: string, sessionID: string): SessionState | undefined {
  let s: SessionState | undefined;
  try {
    s = parseValid(readFileSync(file, "utf8"), sessionID);
  } catch {
    return undefined;
  }
  if (s) applyJournal(s, readJournal(journal));
  return s;
}

function readJournal(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** One save after the snapshot: the scalars as they are now, and the records' entries that changed (null: removed). */
interface JournalLine {
  s: Pick<SessionState, (typeof SCALARS)[number]>;
  decisions?: Record<string, DecisionSlots | null>;
  manual?: Record<string, ManualEntry | null>;
  pinned?: Record<string, true | null>;
  ids?: Record<string, string>;
  regret?: Record<string, RegretEvent>;
}

const SCALARS = ["calls", "rev", "sentUpTo", "introAt", "lastCallAt", "cachedSince"] as const;
const PART_RECORDS = ["decisions", "manual", "pinned"] as const;

/**
 * Applies the lines of `text` that continue `state`'s snapshot (the first line names its token);
 * stops at a line that does not parse (a torn write). Returns the lines applied.
 */
function applyJournal(state: SessionState, text: string): string[] {
  if (!text || state.journal === undefined) return [];
  const lines = text.split("\n");
  const applied: string[] = [];
  for (let i = 0; i < lines.length - 1; i++) {
    let v: unknown;
    try {
      v = JSON.parse(lines[i]);
    } catch {
      break;
    }
    if (!v || typeof v !== "object") break;
    if (i === 0) {
      if ((v as { journal?: unknown }).journal !== state.journal) return [];
      continue;
    }
    const line = v as JournalLine;
    if (!line.s || typeof line.s !== "object") break;
    applyLine(state, line);
    applied.push(lines[i]);
  }
  return applied;
}

function applyLine(state: SessionState, line: JournalLine): void {
  const st = state as unknown as Record<string, unknown>;
  for (const k of SCALARS) {
    const v = (line.s as Record<string, unknown>)[k];
    if (v === undefined) delete st[k];
    else st[k] = v;
  }
  for (const k of PART_RECORDS) {
    const delta = line[k];
    if (!delta) continue;
    for (const id of Object.keys(delta)) {
      const v = delta[id];
      const rec = st[k] as Record<string, unknown> | undefined;
      if (v !== null) ((st[k] ??= {}) as Record<string, unknown>)[id] = v;
      else if (rec) delete rec[id];
    }
  }
  if (line.ids) Object.assign((state.ids ??= {}), line.ids);
  if (line.regret) Object.assign((state.regret ??= {}), line.regret);
}

/**
 * Per state object: the JSON last read from or written to disk (the base of a three-way merge),
 * and the parts the user or the model changed since (manual prunes, restores, sweeps).
 */
const syncs = new WeakMap<SessionState, Sync>();

interface Sync {
  /** The snapshot, and the journal lines after it, as last read or written. */
  base?: string;
  lines?: string[];
  touched: Set<string>;
  /** The state file and journal as this process last wrote them (inode, size, mtime): unchanged, nobody else wrote. */
  stat?: string;
  /** Bytes in the journal. */
  journalSize?: number;
  /** Parts whose committed decisions changed since the last save (new decisions). */
  changed?: Set<string>;
  /** Ids given since the last save. */
  newIds?: string[];
  /** Regret events recorded since the last save. */
  newRegret?: string[];
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

/**
 * Records a part's new committed decision, and a new id, for the next journal line. Only a state
 * that has a journal on disk tracks them: otherwise the next save writes everything.
 */
export function noteDecision(state: SessionState, partId: string): void {
  syncs.get(state)?.changed?.add(partId);
}

export function noteId(state: SessionState, id: string): void {
  syncs.get(state)?.newIds?.push(id);
}

/** Records a regret event (once per key; events are never removed); false when it was known. */
export function addRegret(state: SessionState, key: string, event: RegretEvent): boolean {
  if (state.regret?.[key] !== undefined) return false;
  (state.regret ??= {})[key] = event;
  syncs.get(state)?.newRegret?.push(key);
  return true;
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
  const base = baseOf(sync, ours.sessionID);
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
  // regret events only accumulate: the union (the back-off reads them on every call, no cache to rebuild)
  for (const [k, v] of Object.entries(disk.regret ?? {})) if ((ours.regret ??= {})[k] === undefined) ours.regret[k] = v;
  if (ours.introAt === undefined && disk.introAt !== undefined) {
    ours.introAt = disk.introAt;
    changed = true;
  }
  ours.calls = Math.max(ours.calls, disk.calls);
  if (typeof disk.lastCallAt === "number" && !((ours.lastCallAt ?? -Infinity) >= disk.lastCallAt)) ours.lastCallAt = disk.lastCallAt;
  if (typeof disk.cachedSince === "number" && !((ours.cachedSince ?? -Infinity) >= disk.cachedSince)) ours.cachedSince = disk.cachedSince;
  return changed;
}

/** The state as last synced (the base of a three-way merge). */
function baseOf(sync: Sync, sessionID: string): SessionState {
  const base = (sync.base !== undefined && parseValid(sync.base, sessionID)) || newState(sessionID);
  for (const line of sync.lines ?? []) applyLine(base, JSON.parse(line) as JournalLine);
  return base;
}

/** A journal grows to this size, or to the snapshot's if larger, before the next save writes a snapshot. */
const JOURNAL_MIN = 256 * 1024;

/**
 * Saves state under a lock. If another process wrote since we last synced (serve + attach, two
 * terminals), its decisions are merged in first, so neither process loses the other's updates;
 * returns true when foreign changes were merged. Otherwise what changed since the last save is
 * appended to the journal, until the journal outgrows the snapshot and a new snapshot is written
 * (temp file + rename).
 */
export function saveState(dir: string, state: SessionState): boolean {
  const file = stateFile(dir, state.sessionID);
  if (!file) return false;
  const journal = journalFile(dir, state.sessionID)!;
  mkdirSync(dir, { recursive: true });
  return withLock(file, () => {
    // Still the files this process wrote: no other process wrote since, so there is nothing to
    // merge (and no megabytes to read and parse on every call of a long session).
    const sync = syncOf(state);
    const ours = sync.stat !== undefined && filesKey(file, journal) === sync.stat;
    if (ours && sync.changed && sync.newIds && sync.newRegret && sync.journalSize! < Math.max(JOURNAL_MIN, sync.base!.length)) {
      state.rev = (state.rev ?? 0) + 1;
      const line = journalLine(state, sync);
      appendFileSync(journal, `${line}\n`);
      sync.lines!.push(line);
      sync.journalSize! += Buffer.byteLength(line) + 1;
      sync.stat = filesKey(file, journal);
      sync.touched.clear();
      sync.changed.clear();
      sync.newIds.length = 0;
      sync.newRegret.length = 0;
      return false;
    }
    const disk = ours ? undefined : readValid(file, journal, state.sessionID);
    const foreign = disk !== undefined && (disk.rev ?? 0) !== (state.rev ?? 0) && mergeState(state, disk);
    state.rev = Math.max(disk?.rev ?? 0, state.rev ?? 0) + 1;
    state.journal = Math.random().toString(36).slice(2, 12);
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    const json = stateJson(state);
    writeFileSync(tmp, json);
    renameSync(tmp, file);
    const head = `${JSON.stringify({ journal: state.journal })}\n`;
    writeFileSync(journal, head); // the old journal belonged to the old snapshot
    syncs.set(state, { base: json, lines: [], touched: new Set(), stat: filesKey(file, journal), journalSize: Buffer.byteLength(head), changed: new Set(), newIds: [], newRegret: [] });
    return foreign;
  });
}

/** What changed since the last save, as one journal line. */
function journalLine(state: SessionState, sync: Sync): string {
  const s: Record<string, unknown> = {};
  for (const k of SCALARS) s[k] = state[k];
  const line: JournalLine = { s: s as JournalLine["s"] };
  const decisions: Record<string, DecisionSlots | null> = {};
  for (const set of [sync.changed!, sync.touched]) for (const id of set) decisions[id] = state.decisions[id] ?? null;
  if (sync.changed!.size > 0 || sync.touched.size > 0) line.decisions = decisions;
  if (sync.touched.size > 0) {
    line.manual = {};
    line.pinned = {};
    for (const id of sync.touched) {
      line.manual[id] = state.manual?.[id] ?? null;
      line.pinned[id] = state.pinned?.[id] ?? null;
    }
  }
  if (sync.newIds!.length > 0) {
    line.ids = {};
    for (const id of sync.newIds!) line.ids[id] = state.ids![id];
  }
  if (sync.newRegret!.length > 0) {
    line.regret = {};
    for (const k of sync.newRegret!) line.regret[k] = state.regret![k];
  }
  return JSON.stringify(line);
}

function statKey(file: string): string | undefined {
  try {
    const s = statSync(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}`;
  } catch {
    return undefined;
  }
}

const filesKey = (file: string, journal: string) => `${statKey(file)}|${statKey(journal)}`;

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
