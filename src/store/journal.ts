// The journal beside a state snapshot (`<session>.journal`): one JSON line per save after the
// snapshot, with what changed (a long session's state is megabytes; a call changes a few
// decisions). Its first line, the head, names the snapshot it continues (the snapshot's `journal`
// token) and the journal format's version; a head without a version is version 1 (written before
// versions were). A torn last line is ignored (that save's request was never sent).
import type { DecisionSlots, SessionState, RegretEvent, Changes } from "../engine/state.js";
import type { ManualEntry } from "../engine/manual-entry.js";

/** The journal format this code reads and writes. */
export const JOURNAL_VERSION = 1;

/** The head line of a new journal continuing the snapshot whose token is `token`. */
export const journalHead = (token: string) => `${JSON.stringify({ journal: token, version: JOURNAL_VERSION })}\n`;

/** One save after the snapshot: the scalars as they are now, and the records' entries that changed (null: removed). */
export interface JournalLine {
  s: Pick<SessionState, (typeof SCALARS)[number]>;
  decisions?: Record<string, DecisionSlots | null>;
  manual?: Record<string, ManualEntry | null>;
  pinned?: Record<string, true | string | null>;
  ids?: Record<string, string>;
  idCalls?: Record<string, string>;
  regret?: Record<string, RegretEvent>;
}

const SCALARS = ["calls", "rev", "sentUpTo", "introAt", "lastCallAt", "cachedSince", "waiting", "restoredSent"] as const;
const PART_RECORDS = ["decisions", "manual", "pinned"] as const;

/**
 * Reads `text` as the journal of `state`'s snapshot: the lines that continue it (the head names its
 * token), up to a line that does not parse (a torn write). A journal of another snapshot has none;
 * one of a newer format than JOURNAL_VERSION has none and a problem (its state is left as it is).
 */
export function parseJournal(state: SessionState, text: string): { lines: JournalLine[]; texts: string[]; newer?: number } {
  const out = { lines: [] as JournalLine[], texts: [] as string[] };
  if (!text || state.journal === undefined) return out;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length - 1; i++) {
    let v: unknown;
    try {
      v = JSON.parse(lines[i]);
    } catch {
      break;
    }
    if (!v || typeof v !== "object") break;
    if (i === 0) {
      const head = v as { journal?: unknown; version?: unknown };
      if (head.journal !== state.journal) return out;
      const version = head.version ?? 1;
      if (version !== JOURNAL_VERSION) return { ...out, newer: typeof version === "number" ? version : NaN };
      continue;
    }
    const line = v as JournalLine;
    if (!line.s || typeof line.s !== "object") break;
    out.lines.push(line);
    out.texts.push(lines[i]);
  }
  return out;
}

/** Applies the journal's lines to its snapshot's state; returns the lines' texts. */
export function applyJournal(state: SessionState, journal: { lines: JournalLine[]; texts: string[] }): string[] {
  for (const line of journal.lines) applyLine(state, line);
  return journal.texts;
}

export function applyLine(state: SessionState, line: JournalLine): void {
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
  if (line.idCalls) Object.assign((state.idCalls ??= {}), line.idCalls);
  if (line.regret) Object.assign((state.regret ??= {}), line.regret);
}

/** What changed since the last save (`changes` tracks it), as one journal line. */
export function journalLine(state: SessionState, changes: Required<Changes>): string {
  const s: Record<string, unknown> = {};
  for (const k of SCALARS) s[k] = state[k];
  const line: JournalLine = { s: s as JournalLine["s"] };
  const decisions: Record<string, DecisionSlots | null> = {};
  for (const set of [changes.changed, changes.touched]) for (const id of set) decisions[id] = state.decisions[id] ?? null;
  if (changes.changed.size > 0 || changes.touched.size > 0) line.decisions = decisions;
  if (changes.touched.size > 0) {
    line.manual = {};
    for (const id of changes.touched) line.manual[id] = state.manual?.[id] ?? null;
  }
  if (changes.touched.size > 0 || changes.unpinned.size > 0) {
    line.pinned = {};
    for (const set of [changes.touched, changes.unpinned]) for (const id of set) line.pinned[id] = state.pinned?.[id] ?? null;
  }
  if (changes.newIds.length > 0) {
    line.ids = {};
    for (const id of changes.newIds) {
      line.ids[id] = state.ids![id];
      if (state.idCalls?.[id] !== undefined) (line.idCalls ??= {})[id] = state.idCalls[id];
    }
  }
  if (changes.newRegret.length > 0) {
    line.regret = {};
    for (const k of changes.newRegret) line.regret[k] = state.regret![k];
  }
  return JSON.stringify(line);
}
