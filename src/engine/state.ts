// Per-session decisions: sticky once committed, persisted (src/store) so a new OpenCode process
// renders byte-identical prompts. Only decisions and the sent-prefix marker are stored; the
// original content always comes back from the host's own history. This file is the state as the
// engine holds it, and the record of what changed since the last save; files live in src/store.
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
  /** The decided tool call's id, for the same reason: two tool calls may share a part id. */
  callID?: string;
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
  /**
   * What the previous call left waiting for the commit policy (prunes of the sent prefix, and the
   * tokens they would free); none: nothing. /acp stats and budget read it in a new process too.
   */
  waiting?: { parts: number; tokens: number };
  /**
   * Parts restored since the last call whose pruned form the provider had got: the next call's
   * prompt changes at the first of them anyway, so commit takes it as a free break (what waits
   * behind it goes in the same call); that call clears it. In the state so that a process started
   * between the restore and the call decides as the live one would.
   */
  restoredSent?: string[];
  decisions: Record<string, DecisionSlots>;
  /**
   * Parts the user or model restored: rules leave them alone until the thing is viewed again after
   * the restore (pins.ts). The value: the id of the newest message at the restore, or true (for good;
   * state files written before pins ended).
   */
  pinned?: Record<string, true | string>;
  /** Short ids the model cites → part ids (derived from the part ids, see ids.ts). */
  ids?: Record<string, string>;
  /**
   * Short ids of tool outputs → the call id of the tool call they were given to: a history may
   * repeat part ids (OpenCode's do not), and a later call with the id of one cut off since must not
   * show its tag. Recorded with the id; ids given before it was (older state files) have none.
   */
  idCalls?: Record<string, string>;
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
 * The decisions recorded under a part's id, if they were made for this part: of its type and, for
 * a tool call, of its call id. A history may repeat part ids (OpenCode's do not): a record made for
 * another part (one a compaction cut off, say) belongs to that part and must not land on this one.
 * What a record does not hold (older state files) counts as this part's.
 */
export function decisionsOf(decisions: Record<string, DecisionSlots>, part: { id: string; type: string; callID?: string }): DecisionSlots | undefined {
  const slots = decisions[part.id];
  if (slots === undefined) return undefined;
  const type = slots.output?.partType ?? slots.input?.partType;
  if (type !== undefined && type !== part.type) return undefined;
  const call = slots.output?.callID ?? slots.input?.callID;
  return call === undefined || typeof part.callID !== "string" || call === part.callID ? slots : undefined;
}

export const newState = (sessionID: string): SessionState => ({ version: STATE_VERSION, sessionID, calls: 0, decisions: {} });

/**
 * What changed in a state since its last save, for the store's next journal line, and the parts the
 * user or the model changed (manual prunes, restores, sweeps: on a merge, ours wins for them).
 */
export interface Changes {
  touched: Set<string>;
  /**
   * Parts whose pin the engine ended (pins.ts): journalled, but not a request (on a merge the
   * other process's manual prunes and decisions for the part stand).
   */
  unpinned: Set<string>;
  /** Parts whose committed decisions changed; tracked only while the state has a journal on disk. */
  changed?: Set<string>;
  /** Ids given since the last save (tracked likewise). */
  newIds?: string[];
  /** Regret events recorded since the last save (tracked likewise). */
  newRegret?: string[];
}

const changes = new WeakMap<SessionState, Changes>();

/** The state's record of changes (created empty, without tracking, on first use). */
export function changesOf(state: SessionState): Changes {
  let c = changes.get(state);
  if (!c) changes.set(state, (c = { touched: new Set(), unpinned: new Set() }));
  return c;
}

/** Starts a new record after a snapshot was written: from now on each change is tracked for the journal. */
export function trackChanges(state: SessionState): Changes {
  const c: Changes = { touched: new Set(), unpinned: new Set(), changed: new Set(), newIds: [], newRegret: [] };
  changes.set(state, c);
  return c;
}

/** Is the session's last call more than the cache lifetime (`ttlMinutes`; 0: never expires) before `now`? Then nothing it sent is cached any more. */
export function cacheExpiredSince(state: Pick<SessionState, "lastCallAt">, ttlMinutes: number, now: number): boolean {
  const last = state.lastCallAt;
  return ttlMinutes > 0 && typeof last === "number" && now - last > ttlMinutes * 60_000;
}

/** Records that a request of the user or model changed this part: on a merge, ours wins for it. */
export function touch(state: SessionState, partId: string): void {
  changesOf(state).touched.add(partId);
}

/** Records that the engine ended a part's pin (pins.ts), for the next journal line. */
export function notePinEnded(state: SessionState, partId: string): void {
  changesOf(state).unpinned.add(partId);
}

/**
 * Records a part's new committed decision, and a new id, for the next journal line. Only a state
 * that has a journal on disk tracks them: otherwise the next save writes everything.
 */
export function noteDecision(state: SessionState, partId: string): void {
  changes.get(state)?.changed?.add(partId);
}

export function noteId(state: SessionState, id: string): void {
  changes.get(state)?.newIds?.push(id);
}

/** Records a regret event (once per key; events are never removed); false when it was known. */
export function addRegret(state: SessionState, key: string, event: RegretEvent): boolean {
  if (state.regret?.[key] !== undefined) return false;
  (state.regret ??= {})[key] = event;
  changes.get(state)?.newRegret?.push(key);
  return true;
}
