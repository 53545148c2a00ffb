// All-time stats: what every session pruned, per rule, and its regret events, in one small JSON
// file beside the session states (`<stateDir>/all-time/stats.json`). Each session's entry is its
// current totals, replaced whole on every change under the file's lock (read, modify, atomic
// write), so processes writing different sessions never lose each other's entries and a session
// written by two processes is never counted twice. The oldest entries are folded into one `past`
// total once there are more than MAX_SESSIONS. A file that is too large or not ours is set aside
// with a message; it never stops the plugin.
import { mkdirSync, openSync, closeSync, fstatSync, readSync, renameSync } from "node:fs";
import { dirname } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { addTotals, TOTAL_FIELDS, zeroTotals, type RuleTotals } from "../engine/totals.js";
import type { StatsStore } from "../engine/storage.js";
import { withLock } from "./lock.js";

export const ALL_TIME_VERSION = 1;
/** Sessions kept one by one; older ones are folded into `past`. */
export const MAX_SESSIONS = 500;
/** Reads stop here: a file this large is not one we wrote. */
export const MAX_BYTES = 4 * 1024 * 1024;

export interface AllTime {
  version: number;
  sessions: Record<string, { at: number; rules: Record<string, RuleTotals> }>;
  /** Sessions folded out of `sessions`, and their totals. */
  past: { sessions: number; rules: Record<string, RuleTotals> };
}

export const emptyAllTime = (): AllTime => ({ version: ALL_TIME_VERSION, sessions: {}, past: { sessions: 0, rules: {} } });

/** All sessions' totals: the entries and what was folded. */
export function allTimeTotals(data: AllTime): { sessions: number; rules: Record<string, RuleTotals> } {
  const rules = addTotals({}, data.past.rules);
  for (const s of Object.values(data.sessions)) addTotals(rules, s.rules);
  return { sessions: data.past.sessions + Object.keys(data.sessions).length, rules };
}

const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function rulesOf(v: unknown): Record<string, RuleTotals> {
  const out: Record<string, RuleTotals> = {};
  if (!isObject(v)) return out;
  for (const [rule, t] of Object.entries(v)) {
    if (!isObject(t) || rule === "__proto__") continue;
    const r = zeroTotals();
    for (const f of TOTAL_FIELDS) r[f] = count(t[f]);
    out[rule] = r;
  }
  return out;
}

/** The file's content, checked field by field (what does not fit is left out); throws when it is not ours. */
function parse(text: string): AllTime {
  const v = JSON.parse(text) as unknown;
  if (isObject(v) && typeof v.version === "number" && v.version > ALL_TIME_VERSION) throw new NewerVersion(v.version);
  if (!isObject(v) || v.version !== ALL_TIME_VERSION || !isObject(v.sessions)) throw new Error(`not an all-time stats file of version ${ALL_TIME_VERSION}`);
  const data = emptyAllTime();
  for (const [id, s] of Object.entries(v.sessions)) if (isObject(s) && id !== "__proto__") data.sessions[id] = { at: count(s.at), rules: rulesOf(s.rules) };
  if (isObject(v.past)) data.past = { sessions: count(v.past.sessions), rules: rulesOf(v.past.rules) };
  return data;
}

/** Reads at most MAX_BYTES; undefined when the file does not exist. */
function readBounded(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_BYTES) throw new Error(`${size} bytes, more than the ${MAX_BYTES} an all-time stats file can hold`);
    const buf = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buf, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buf.toString("utf8", 0, read);
  } finally {
    closeSync(fd);
  }
}

/** A file written by a newer version of the plugin: never misread, never written over. */
class NewerVersion extends Error {
  constructor(readonly version: number) {
    super(`written by a newer version of opencode-acp (format ${version})`);
  }
}

/** The all-time stats; a missing file is empty, a broken one (or a newer version's) is empty with the problem. */
export function readAllTime(file: string): { data: AllTime; problem?: string; newer?: boolean } {
  try {
    const text = readBounded(file);
    return { data: text === undefined ? emptyAllTime() : parse(text) };
  } catch (e) {
    const newer = e instanceof NewerVersion;
    return { data: emptyAllTime(), problem: `all-time stats ${file} ${newer ? (e as Error).message : `unreadable (${(e as Error).message})`}`, ...(newer ? { newer } : {}) };
  }
}

/**
 * Replaces one session's entry with its current totals (none: the entry goes). A broken file is
 * moved aside (`.bad-<time>`, reported through onProblem) and a new one begins.
 */
export function recordSession(file: string, sessionID: string, rules: Record<string, RuleTotals>, now: number, onProblem?: (msg: string) => void): void {
  mkdirSync(dirname(file), { recursive: true });
  withLock(file, () => {
    const read = readAllTime(file);
    if (read.newer) {
      onProblem?.(`${read.problem}; left as it is, nothing recorded`);
      return;
    }
    if (read.problem) {
      const aside = `${file}.bad-${now}`;
      try {
        renameSync(file, aside);
      } catch {}
      onProblem?.(`${read.problem}; moved to ${aside}`);
    }
    const data = read.data;
    if (Object.keys(rules).length > 0) data.sessions[sessionID] = { at: now, rules };
    else delete data.sessions[sessionID];
    fold(data);
    writeFileAtomic.sync(file, `${JSON.stringify(data)}\n`, { fsync: false }); // atomic by rename, as the state files; no disk flush on the hot path
  });
}

/** Folds the least recently written sessions into `past` until MAX_SESSIONS remain. */
function fold(data: AllTime): void {
  const ids = Object.keys(data.sessions);
  if (ids.length <= MAX_SESSIONS) return;
  ids.sort((a, b) => data.sessions[a].at - data.sessions[b].at);
  for (const id of ids.slice(0, ids.length - MAX_SESSIONS)) {
    addTotals(data.past.rules, data.sessions[id].rules);
    data.past.sessions++;
    delete data.sessions[id];
  }
}

/** The all-time stats file as the engine's stats store. */
export function allTimeStore(file: string): StatsStore {
  return {
    record: (sessionID, rules, now, onProblem) => recordSession(file, sessionID, rules, now, onProblem),
    totals() {
      const read = readAllTime(file);
      return { ...allTimeTotals(read.data), problem: read.problem };
    },
  };
}
