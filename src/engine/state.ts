// Per-session decisions: sticky once committed, persisted atomically so a new OpenCode
// process renders byte-identical prompts. Only decisions and the sent-prefix marker are
// stored; the original content always comes back from the host's own history.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
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
  /** Id of the last message of the previous call's prompt: everything up to it is cached upstream. */
  sentUpTo?: string;
  decisions: Record<string, DecisionSlots>;
  /** Parts the user or model restored: rules leave them alone from then on. */
  pinned?: Record<string, true>;
  /** Short ids the model cites → part ids; ids are never reused. */
  ids?: Record<string, string>;
  nextId?: number;
  /** Prune requests from the model, applied in the manual phase. */
  manual?: Record<string, ManualEntry>;
}

export const newState = (sessionID: string): SessionState => ({ version: STATE_VERSION, sessionID, calls: 0, decisions: {} });

const SAFE_ID = /^[A-Za-z0-9_.-]{1,200}$/;

/** Session ids become file names: refuse anything that could escape the state folder. */
export function stateFile(dir: string, sessionID: string): string | undefined {
  if (!SAFE_ID.test(sessionID) || sessionID.startsWith(".")) return undefined;
  return join(dir, `${sessionID}.json`);
}

export function loadState(dir: string, sessionID: string, onProblem?: (msg: string) => void): SessionState {
  const file = stateFile(dir, sessionID);
  if (!file) return newState(sessionID);
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch {
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
    return newState(sessionID);
  }
}

export function saveState(dir: string, state: SessionState): void {
  const file = stateFile(dir, state.sessionID);
  if (!file) return;
  mkdirSync(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, JSON.stringify(state));
  renameSync(tmp, file);
}
