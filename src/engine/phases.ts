// One call of the interpreter, in the fixed phase order:
//   protect → supersede → age → reduce → manual → commit → (render, in render.ts)
// A part gets at most one decision per slot; the earliest phase wins, so a superseded output
// is never also truncated. Committed decisions are sticky and skipped here.
// protect and regret: call.ts (PhaseCall); supersede: walk-marks.ts; age, reduce: walk-rules.ts;
// manual: walk-manual.ts; commit: commit.ts, with settle.ts and forced-views.ts.
import type { CommitPolicy } from "../rules/types.js";
import { PhaseCall, type CallResult } from "./call.js";
import { commit } from "./commit.js";
import type { SessionRuntime } from "./session.js";
import { walkManual } from "./walk-manual.js";
import { walkMarks } from "./walk-marks.js";
import { walkRules } from "./walk-rules.js";

export function runPhases(rt: SessionRuntime, policy: CommitPolicy, promptTokens: number, now: number): Omit<CallResult, "rebuilt" | "walked"> {
  const call = new PhaseCall(rt, policy, promptTokens, now);
  walkMarks(call);
  walkRules(call);
  walkManual(call);
  return commit(call);
}
