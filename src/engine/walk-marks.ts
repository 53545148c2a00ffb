// The supersede phase: each pending supersede mark wants its part's output replaced (phases.ts).
import type { PhaseCall } from "./call.js";
import { candidateFor } from "./verdicts.js";

/** supersede (marks are kept incrementally by the runtime; committed ones leave pendingMarks) */
export function walkMarks(call: PhaseCall): void {
  const { rt, woken, backedOff } = call;
  // (the pending marks in their order, less the parked ones: activeMarks)
  const marks = rt.activeMarks();
  let kept = 0;
  for (let k = 0; k < marks.length; k++) {
    const mark = marks[k];
    if (mark.parked === true) continue; // its want stands, blocked; back in the list once unparked
    const n = mark.node;
    const id = n.part.id;
    if (rt.pendingMarks.get(id) !== mark) continue; // decided since
    marks[kept++] = mark;
    if (woken.size > 0 && woken.has(n.index)) continue; // commit takes its want in (withParked)
    if (call.taken(n, "output")) {
      rt.pendingMarks.delete(id);
      kept--;
      continue;
    }
    if (backedOff.has(mark.rule.id)) continue;
    if (rt.protectedBy.has(n.index) && mark.rule.options.overrideProtection !== true) {
      if (rt.protectedBy.permanent.has(n.index)) {
        rt.pendingMarks.delete(id); // protected for good: never a change
        kept--;
      }
      continue;
    }
    const c = candidateFor(rt, mark.rule, n, mark.byNode);
    if (c) call.want(n, mark.rule, c, mark.by, mark);
    else {
      rt.pendingMarks.delete(id); // the verdict is cached: this mark never becomes a change
      kept--;
    }
  }
  marks.length = kept;
}
