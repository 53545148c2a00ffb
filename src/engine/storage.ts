// What the engine asks of persistence. src/store implements both on files; a pruner without them
// keeps its state in memory only and records no all-time stats. The engine itself does no file I/O.
import type { SessionState } from "./state.js";
import type { RuleTotals } from "./totals.js";

export interface SessionStore {
  /** The session's saved state; `fresh` when there was none (or none usable: the problem goes to onProblem). */
  load(sessionID: string, onProblem: (msg: string) => void): { state: SessionState; fresh: boolean };
  /** Saves what changed; true when another process's writes were merged into `state` (in place) first. */
  save(state: SessionState): boolean;
}

export interface StatsStore {
  /** Replaces one session's totals (none: its entry goes); a broken store is reported and begins anew. */
  record(sessionID: string, rules: Record<string, RuleTotals>, now: number, onProblem: (msg: string) => void): void;
  /** All sessions' totals per rule, and a problem with the store if it was unreadable. */
  totals(): { sessions: number; rules: Record<string, RuleTotals>; problem?: string };
}
