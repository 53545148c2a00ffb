// A session's totals per rule: what it pruned (as /acp stats counts it) and its regret events.
// The all-time stats (src/store/all-time.ts) keep one entry of these per session.
import { regretByRule } from "./regret.js";
import type { SessionState } from "./state.js";

export interface RuleTotals {
  /** Prunes that save tokens, and the tokens they take off each request. */
  parts: number;
  tokens: number;
  /** Regret events: restored by the agent, by the user, calls re-run while hidden. */
  agent: number;
  user: number;
  rerun: number;
}

export const TOTAL_FIELDS = ["parts", "tokens", "agent", "user", "rerun"] as const;
export const zeroTotals = (): RuleTotals => ({ parts: 0, tokens: 0, agent: 0, user: 0, rerun: 0 });

/** A session's totals per rule: its prunes that save tokens (as /acp stats counts them) and its regret events. */
export function sessionTotals(state: SessionState): Record<string, RuleTotals> {
  const out: Record<string, RuleTotals> = {};
  for (const slots of Object.values(state.decisions))
    for (const d of [slots.output, slots.input]) {
      if (!d || !(d.tokens > 0)) continue;
      const t = (out[d.rule] ??= zeroTotals());
      t.parts++;
      t.tokens += d.tokens;
    }
  for (const [rule, c] of regretByRule(state)) Object.assign((out[rule] ??= zeroTotals()), { agent: c.agent, user: c.user, rerun: c.rerun });
  return out;
}

/** Adds `b`'s totals into `a`, rule by rule. */
export function addTotals(a: Record<string, RuleTotals>, b: Record<string, RuleTotals>): Record<string, RuleTotals> {
  for (const [rule, t] of Object.entries(b)) {
    const sum = (a[rule] ??= zeroTotals());
    for (const f of TOTAL_FIELDS) sum[f] += t[f];
  }
  return a;
}
