// One strategy's figures as `acp simulate` reports them; its own module so that html-report.ts,
// which renders them, need not import simulate.ts, which imports it.
import type { RegretCounts } from "../engine/regret.js";
import type { CorpusFigures, OverLimit } from "../sim/index.js";

export interface StrategyResult {
  strategy: string;
  figures: CorpusFigures;
  /** Sessions whose cost including recovery is more than RECOVERY_LIMIT_PCT above `none` (when it was run). */
  overLimit?: OverLimit;
  /** The live regret signal the replay raised (re-runs of hidden outputs), per rule, and the rules that backed off where. */
  regret?: { limit: number; rules: Record<string, RegretCounts>; backedOff: { rule: string; session: string }[] };
}
