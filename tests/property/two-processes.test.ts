// Two OpenCode processes on one session (serve + attach, two terminals): two pruners share one
// state folder and take turns at random — transforms as the history grows, the model's discards,
// restores — each persisting through saveState's lock and merge. After every step the state file
// must parse, no committed decision or manual prune may be lost, and no restored part may come
// back; a transform after a restore (in either process) must render the restored part in full.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fc, test } from "@fast-check/vitest";
import { afterAll, describe, expect, it } from "vitest";
import type { AcpPruner } from "../../src/engine/pruner.js";
import { createPruner } from "../../src/index.js";
import { STATE_VERSION, type SessionState } from "../../src/engine/state.js";
import { readState, stateFile } from "../../src/store/state-files.js";
import type { Message, Part } from "../../src/graph/types.js";
import { buildSession, sessionSpecArb, type GenFlags } from "./arbitraries.js";
import { ErrorSink, fcParams, partById, PrunerPool, runsFor, timeoutFor, TMP, viewedAgain } from "./invariants.js";

const sink = new ErrorSink();
const root = mkdtempSync(join(TMP, "acp-prop-two-"));
const dir = join(root, "state");
const make = () => createPruner({ preset: "compact", config: { commit: { minTokens: 0, breakEven: 0 }, idsFromTokens: 0 }, stateDir: dir, onError: sink.onError });
const pools = [new PrunerPool(make), new PrunerPool(make)];
// Well-formed sessions: the subject here is the state file, not odd shapes.
const FLAGS: GenFlags = { odd: 0, dupPartIds: false, dupMsgIds: false, outOfOrder: false, randomTools: false, maxTurns: 5 };
const RUNS = runsFor("processes");
const counts = { runs: 0, ops: 0, transforms: 0, discards: 0, restores: 0, rebuilt: 0 };
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  console.log(`two processes: ${JSON.stringify(counts)}`);
});

interface Op {
  who: 0 | 1;
  kind: "transform" | "discard" | "restore";
  /** Transforms: the history grows by one model call afterwards. */
  advance: boolean;
  pick: number;
}
const opArb: fc.Arbitrary<Op> = fc.record({
  who: fc.constantFrom<0 | 1>(0, 1),
  kind: fc.oneof({ weight: 3, arbitrary: fc.constant("transform" as const) }, { weight: 2, arbitrary: fc.constant("discard" as const) }, { weight: 2, arbitrary: fc.constant("restore" as const) }),
  advance: fc.boolean(),
  pick: fc.nat(),
});

/** The history prefixes the host sends: everything before each assistant message, then all of it. */
function callEnds(messages: Message[]): number[] {
  const ends = messages.flatMap((m, i) => (m.info.role === "assistant" && i > 0 ? [i] : []));
  return [...ends, messages.length];
}

function readDisk(file: string): { state?: SessionState; problem?: string } {
  if (!existsSync(file)) return {};
  const raw = readFileSync(file, "utf8");
  try {
    const s = JSON.parse(raw) as SessionState;
    if (s.version !== STATE_VERSION || typeof s.decisions !== "object" || s.decisions === null) return { problem: `invalid state: ${raw.slice(0, 200)}` };
    const whole = readState(dir, s.sessionID); // with the journal's later saves
    return whole ? { state: whole } : { problem: `state unreadable with its journal: ${raw.slice(0, 200)}` };
  } catch (e) {
    return { problem: `unparseable state file (${(e as Error).message}): ${raw.slice(0, 200)}` };
  }
}

const SLOTS = ["output", "input"] as const;
const TAGS = /\n(?:\[acp:[tmr][0-9a-z]+\] )*\[acp:[tmr][0-9a-z]+\]$/;
const untagged = (s: unknown) => (typeof s === "string" ? s.replace(TAGS, "") : s);

/** Replays `ops`; returns the violations. */
function replay(messages: Message[], ops: Op[]): string[] {
  const sid = messages[0].info.sessionID;
  const file = stateFile(dir, sid)!;
  const procs: AcpPruner[] = [pools[0].get(), pools[1].get()];
  const ends = callEnds(messages);
  let at = 0;
  const violations: string[] = [];
  /** Ground truth, in the order the steps happened. */
  const decided = new Map<string, number>(); // `part slot` of rule decisions seen on disk → step
  const discarded = new Map<string, number>(); // manual prunes accepted → step
  const restored = new Map<string, number>(); // restores → step
  const restoredAfter = new Map<string, string | undefined>(); // restores → the newest message then
  /** Restored parts whose pin ended (on disk, or in `state`) with the thing viewed again since: rules may decide them again. */
  const unpin = (state: SessionState | undefined, history: Message[]) => {
    for (const partId of [...restored.keys()])
      if (state && state.pinned?.[partId] === undefined && viewedAgain(history, restoredAfter.get(partId), partById(history, partId))) {
        restored.delete(partId);
        restoredAfter.delete(partId);
      }
  };
  /** Per process: the history length of its last transform, and whether it changed state since (no repeat then). */
  const last = [-1, -1];
  const changed = [false, false];

  for (const [k, op] of ops.entries()) {
    counts.ops++;
    const p = procs[op.who];
    const history = structuredClone(messages.slice(0, ends[at]));
    if (history.length === 0) continue;
    const before = readDisk(file).state;
    const where = `step ${k} (process ${op.who} ${op.kind}, history ${history.length})`;
    if (op.kind === "transform") {
      counts.transforms++;
      const repeat = last[op.who] === history.length && !changed[op.who];
      p.transform(history);
      last[op.who] = history.length;
      changed[op.who] = false;
      if (p.lastCall(sid)?.rebuilt) counts.rebuilt++;
      unpin(p.state(sid), history);
      // a restored part renders as it came (a pure repeat re-renders the process's last view: skipped)
      if (!repeat)
        for (const partId of restored.keys()) {
          const orig = messages.slice(0, ends[at]).flatMap((m) => m.parts).find((x) => x.id === partId);
          if (!orig) continue;
          const out = history.flatMap((m) => m.parts).find((x) => x.id === partId) as Part | undefined;
          if (!out) violations.push(`${where}: restored part ${partId} (${orig.type}) is missing from the request`);
          else if (orig.type === "tool" && ![out.state?.output, untagged(out.state?.output)].some((o) => JSON.stringify(o) === JSON.stringify(orig.state?.output))) violations.push(`${where}: restored part ${partId} renders ${JSON.stringify(out.state?.output).slice(0, 120)}`);
        }
      if (op.advance) at = Math.min(at + 1, ends.length - 1);
    } else if (op.kind === "discard") {
      const ids = Object.keys(p.state(sid).ids ?? {}).sort();
      if (ids.length === 0) continue;
      counts.discards++;
      const id = ids[op.pick % ids.length];
      const r = p.manual(sid, { action: "discard", targets: [id] }, history);
      changed[op.who] = true;
      if (/: (already )?discarded/.test(r.text)) {
        const partId = p.state(sid).ids![id];
        discarded.set(partId, k);
        restored.delete(partId);
      }
    } else {
      const st = p.state(sid);
      const parts = [...new Set([...Object.keys(st.decisions), ...Object.keys(st.manual ?? {})])].sort();
      if (parts.length === 0) continue;
      counts.restores++;
      const partId = parts[op.pick % parts.length];
      changed[op.who] = true;
      // its pruned newer views of the same thing come back (and are pinned) with it
      const back = p.restoreReport(sid, partId, "user", history);
      if (back.restored)
        for (const id of [partId, ...back.newer]) {
          restored.set(id, k);
          restoredAfter.set(id, history.at(-1)?.info?.id);
          discarded.delete(id);
          for (const slot of SLOTS) decided.delete(`${id} ${slot}`);
        }
    }
    const errors = sink.take();
    if (errors.length) violations.push(`${where}: swallowed ${(errors[0].error as Error)?.stack ?? errors[0].error}`);
    const disk = readDisk(file);
    if (disk.problem) violations.push(`${where}: ${disk.problem}`);
    const after = disk.state;
    if (!after) continue;
    unpin(after, history);
    if (readdirSync(dir).some((f) => f.endsWith(".lock") || f.endsWith(".tmp"))) violations.push(`${where}: a lock or temp file was left behind`);
    // rule decisions this step brought to disk (manual ones are tracked by their request)
    for (const [partId, slots] of Object.entries(after.decisions))
      for (const slot of SLOTS) {
        const d = slots?.[slot];
        if (d && d.rule !== "manual" && !before?.decisions[partId]?.[slot] && !decided.has(`${partId} ${slot}`)) {
          if (restored.has(partId)) violations.push(`${where}: rule ${d.rule} decided ${partId} (${slot}), restored at step ${restored.get(partId)}`);
          decided.set(`${partId} ${slot}`, k);
        }
      }
    for (const [key, step] of decided) {
      const [partId, slot] = key.split(" ") as [string, (typeof SLOTS)[number]];
      if (!after.decisions[partId]?.[slot]) violations.push(`${where}: the decision on ${partId} (${slot}) committed at step ${step} is lost`);
    }
    for (const [partId, step] of discarded) if (!after.manual?.[partId]) violations.push(`${where}: the discard of ${partId} requested at step ${step} is lost`);
    for (const [partId, step] of restored) {
      if (after.manual?.[partId] || after.decisions[partId]) violations.push(`${where}: ${partId}, restored at step ${step}, is pruned again: ${JSON.stringify({ manual: after.manual?.[partId], decisions: after.decisions[partId] })}`);
      if (!after.pinned?.[partId]) violations.push(`${where}: ${partId}, restored at step ${step}, is not pinned`);
    }
    if (violations.length) break;
  }
  rmSync(file, { force: true });
  return violations;
}

describe("two processes on one session", () => {
  test.prop([sessionSpecArb(FLAGS), fc.array(opArb, { minLength: 8, maxLength: 60, size: "large" })], fcParams(RUNS))(
    "interleaved transforms, discards and restores: nothing lost, nothing resurrected, the file always parses",
    (spec, ops) => {
      counts.runs++;
      const messages = buildSession(spec);
      const violations = replay(messages, ops);
      expect(violations, violations.join("\n")).toEqual([]);
    },
    timeoutFor(RUNS, 150),
  );

  it("the runs were not vacuous", () => {
    if (RUNS >= 10) for (const k of ["transforms", "discards", "restores"] as const) expect(counts[k], k).toBeGreaterThan(0);
  });
});
