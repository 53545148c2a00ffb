// A session's state on disk: `<session>.json`, written whole and atomically (write-file-atomic),
// and `<session>.journal` (journal.ts), one line per later save. A new snapshot starts a new
// journal, so a crash between the two writes leaves an old journal that is ignored. Every save
// runs under the file's lock (lock.ts) and first merges what another process wrote (merge.ts).
//
// Versions: the snapshot carries `version` (STATE_VERSION), the journal's head its own
// (JOURNAL_VERSION; none: 1). A state written by a newer version of the plugin is left as it is:
// the session runs on a fresh state kept in memory, and a message says why.
import { appendFileSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { changesOf, newState, STATE_VERSION, trackChanges, type SessionState } from "../engine/state.js";
import type { SessionStore } from "../engine/storage.js";
import { applyJournal, applyLine, journalHead, journalLine, parseJournal, type JournalLine } from "./journal.js";
import { withLock } from "./lock.js";
import { mergeState } from "./merge.js";
import { stateJson } from "./state-json.js";

export { stateJson };

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

/** Per state object: what this process last read from or wrote to its files. */
interface Disk {
  /** The snapshot, and the journal lines after it, as last read or written (the base of a three-way merge). */
  base?: string;
  lines?: string[];
  /** The state file and journal as this process last wrote them (inode, size, mtime): unchanged, nobody else wrote. */
  stat?: string;
  /** Bytes in the journal. */
  journalSize?: number;
  /** The files hold a newer version's state: never written over by this process. */
  newer?: boolean;
}

const disks = new WeakMap<SessionState, Disk>();

/** A newer version than this code's, of the snapshot or the journal's head; undefined when not newer. */
function newerVersion(snapshot: unknown, journalText: string): number | undefined {
  if (!snapshot || typeof snapshot !== "object") return undefined;
  const v = (snapshot as { version?: unknown } | null)?.version;
  if (typeof v === "number" && v > STATE_VERSION) return v;
  const newer = parseJournal(snapshot as SessionState, journalText).newer;
  return newer === undefined ? undefined : newer;
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
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {}
  const journalText = readJournal(journalFile(dir, sessionID)!);
  const newer = parsed !== undefined ? newerVersion(parsed, journalText) : undefined;
  if (newer !== undefined) {
    // a newer plugin's state (a downgrade, or two versions at once): leave it for that version
    onProblem?.(`state file ${file} was written by a newer version of opencode-acp (format ${newer}); this session starts afresh in memory and leaves the file as it is`);
    onFresh?.();
    const s = newState(sessionID);
    disks.set(s, { newer: true });
    return s;
  }
  try {
    const s = parsed as SessionState;
    if (!s || s.version !== STATE_VERSION || s.sessionID !== sessionID || typeof s.decisions !== "object") throw new Error(parsed === undefined ? "not JSON" : `unsupported state version ${s?.version}`);
    const disk: Disk = { base: raw };
    disks.set(s, disk);
    disk.lines = applyJournal(s, parseJournal(s, journalText));
    return s;
  } catch (e) {
    // Corrupt: keep it for inspection, start clean.
    const aside = `${file}.bad-${Date.now()}`;
    try {
      renameSync(file, aside);
    } catch {}
    onProblem?.(`state file ${file} unreadable (${(e as Error).message}); moved to ${aside}`);
    onFresh?.();
    return newState(sessionID);
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

/** The state on disk: the snapshot with its journal applied; undefined when missing, not valid or newer. */
function readValid(file: string, journal: string, sessionID: string): SessionState | undefined {
  let s: SessionState | undefined;
  try {
    s = parseValid(readFileSync(file, "utf8"), sessionID);
  } catch {
    return undefined;
  }
  if (!s) return undefined;
  const lines = parseJournal(s, readJournal(journal));
  if (lines.newer !== undefined) return undefined;
  applyJournal(s, lines);
  return s;
}

function readJournal(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** The state as last synced (the base of a three-way merge). */
function baseOf(disk: Disk | undefined, sessionID: string): SessionState {
  const base = (disk?.base !== undefined && parseValid(disk.base, sessionID)) || newState(sessionID);
  for (const line of disk?.lines ?? []) applyLine(base, JSON.parse(line) as JournalLine);
  return base;
}

/** A journal grows to this size, or to the snapshot's if larger, before the next save writes a snapshot. */
const JOURNAL_MIN = 256 * 1024;

/**
 * Saves state under a lock. If another process wrote since we last synced (serve + attach, two
 * terminals), its decisions are merged in first, so neither process loses the other's updates;
 * returns true when foreign changes were merged. Otherwise what changed since the last save is
 * appended to the journal, until the journal outgrows the snapshot and a new snapshot is written.
 */
export function saveState(dir: string, state: SessionState): boolean {
  const file = stateFile(dir, state.sessionID);
  if (!file || disks.get(state)?.newer) return false;
  const journal = journalFile(dir, state.sessionID)!;
  mkdirSync(dir, { recursive: true });
  return withLock(file, () => {
    // Still the files this process wrote: no other process wrote since, so there is nothing to
    // merge (and no megabytes to read and parse on every call of a long session).
    const disk = disks.get(state);
    const changes = changesOf(state);
    const ours = disk?.stat !== undefined && filesKey(file, journal) === disk.stat;
    if (ours && changes.changed && changes.newIds && changes.newRegret && disk.journalSize! < Math.max(JOURNAL_MIN, disk.base!.length)) {
      state.rev = (state.rev ?? 0) + 1;
      const line = journalLine(state, changes as Required<typeof changes>);
      appendFileSync(journal, `${line}\n`);
      disk.lines!.push(line);
      disk.journalSize! += Buffer.byteLength(line) + 1;
      disk.stat = filesKey(file, journal);
      changes.touched.clear();
      changes.unpinned.clear();
      changes.changed.clear();
      changes.newIds.length = 0;
      changes.newRegret.length = 0;
      return false;
    }
    const onDisk = ours ? undefined : readValid(file, journal, state.sessionID);
    const foreign = onDisk !== undefined && (onDisk.rev ?? 0) !== (state.rev ?? 0) && mergeState(state, onDisk, baseOf(disk, state.sessionID));
    state.rev = Math.max(onDisk?.rev ?? 0, state.rev ?? 0) + 1;
    state.journal = Math.random().toString(36).slice(2, 12);
    const json = stateJson(state);
    // atomic by rename; no disk flush on the hot path (a crash loses at most the last saves)
    writeFileAtomic.sync(file, json, { fsync: false });
    const head = journalHead(state.journal);
    writeFileSync(journal, head); // the old journal belonged to the old snapshot
    trackChanges(state);
    disks.set(state, { base: json, lines: [], stat: filesKey(file, journal), journalSize: Buffer.byteLength(head) });
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

const filesKey = (file: string, journal: string) => `${statKey(file)}|${statKey(journal)}`;

/** The state folder as the engine's session store. */
export function stateFolderStore(dir: string): SessionStore {
  return {
    load(sessionID, onProblem) {
      let fresh = false;
      const state = loadState(dir, sessionID, onProblem, () => (fresh = true));
      return { state, fresh };
    },
    save: (state) => saveState(dir, state),
  };
}
