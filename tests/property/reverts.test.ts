// Reverts that take the newer view a committed decision stands for (OpenCode's /undo removes the
// trailing turns): the generic schedules rarely revert exactly such a turn, so here the revert is
// aimed at one. A probe replay finds a decision committed on a part of an earlier turn by a view in
// a later one; the checked replay reverts the turn of that view and goes on at the next user
// message. Every invariant of docs/reliability.md holds on every call, and after the revert no
// decision stands for a view the history no longer has (src/engine/reverted.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fc, test } from "@fast-check/vitest";
import { afterAll, describe, expect, it } from "vitest";
import type { AcpPruner } from "../../src/engine/pruner.js";
import type { Message } from "../../src/graph/types.js";
import { createPruner } from "../../src/index.js";
import type { AcpConfig } from "../../src/rules/types.js";
import { deepCopy } from "../engine/session-gen.js";
import { buildCalls, buildSession, callMessages, flagsFromEnv, scheduleArb, sessionSpecArb, type ScheduleSpec } from "./arbitraries.js";
import { ErrorSink, fcParams, newStats, replayAndCheck, restartLanes, runsFor, timeoutFor, TMP } from "./invariants.js";

const PRESETS = ["compact", "balanced", "verbose"];
/** Every decision applies at once, so the supersede is sent before the revert. */
const EAGER: Partial<AcpConfig> = { commit: { minTokens: 0, breakEven: 0 }, protectedTools: [], protectedFiles: [], idsFromTokens: 0 };
/** Prunes of the sent prefix wait for a batch: after the revert some still wait, behind a lifted part or not (commit.ts changedFrom). */
const BATCHED: Partial<AcpConfig> = { ...EAGER, commit: { minTokens: 3000, breakEven: 0 } };
const CONFIGS = [EAGER, BATCHED];

const isTurnStart = (m: Message) => m.info?.role === "user" && m.parts.some((p) => p && !(p.type === "text" && p.ignored));

/**
 * The revert (ScheduleSpec.revert) that takes the view a committed decision stands for, for each
 * such decision of a probe replay: its part is in an earlier turn, and a user message follows.
 */
export function aimedReverts(messages: Message[], preset: string): NonNullable<ScheduleSpec["revert"]>[] {
  const probe = createPruner({ preset, config: EAGER });
  for (const call of buildCalls(messages, { repeatMask: 0, restores: [] })) probe.transform(deepCopy(callMessages(messages, call)));
  const sid = messages.find((m) => m.info?.sessionID)?.info.sessionID;
  if (!sid) return [];
  const msgOf = new Map<string, number>();
  messages.forEach((m, i) => m.parts.forEach((p) => typeof p?.id === "string" && !msgOf.has(p.id) && msgOf.set(p.id, i)));
  const ends: number[] = [];
  messages.forEach((m, i) => i > 0 && m.info?.role === "assistant" && ends.push(i));
  ends.push(messages.length);
  const users = messages.flatMap((m, i) => (isTurnStart(m) ? [i] : []));
  const out: NonNullable<ScheduleSpec["revert"]>[] = [];
  for (const [id, slots] of Object.entries(probe.state(sid).decisions)) {
    const by = slots?.output?.by ?? slots?.input?.by;
    const at = msgOf.get(id);
    const q = by === undefined ? undefined : msgOf.get(by);
    if (at === undefined || q === undefined) continue;
    const u = users.filter((x) => x <= q).at(-1); // the turn of the newer view
    const r = ends.findIndex((e) => e > q); // the first call that sent it
    if (u === undefined || u <= at || r < 0) continue;
    const back = users.filter((x) => x >= u && x < ends[r]).length;
    if (back >= 1 && back <= 6 && users.some((x) => x >= ends[r])) out.push({ at: r, back });
  }
  return out;
}

const sink = new ErrorSink();
const root = mkdtempSync(join(TMP, "acp-prop-reverts-"));
const lane = restartLanes(root);
const lanes = (p: number, c: number) => lane(`${p}-${c}`, (stateDir): AcpPruner => createPruner({ preset: PRESETS[p], config: CONFIGS[c], stateDir, onError: sink.onError }));

const RUNS = runsFor("reverts");
const stats = newStats();
let aimed = 0;
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  console.log(`reverts: ${aimed} aimed reverts, ${JSON.stringify(stats)}`);
});

describe("reverts of the view a decision stands for", () => {
  test.prop([fc.nat(PRESETS.length - 1), fc.nat(CONFIGS.length - 1), sessionSpecArb(flagsFromEnv()), fc.nat(), scheduleArb], fcParams(RUNS))(
    "replayed call by call, every invariant holds on every call, and the decision is lifted",
    (p, c, spec, pick, schedule) => {
      const messages = buildSession(spec);
      const reverts = aimedReverts(messages, PRESETS[p]);
      if (reverts.length === 0) return;
      aimed++;
      const l = lanes(p, c);
      // the aimed revert, without a compaction cut (it could cut the reverted part off first)
      const s: ScheduleSpec = { ...schedule, compact: undefined, revert: reverts[pick % reverts.length] };
      const violations = replayAndCheck(messages, s, { label: `${PRESETS[p]}/c${c}/reverts`, pruner: l.a.get(), stateDir: l.dir, restart: { make: () => l.b.get(), dir: l.bDir }, sink }, stats);
      expect(violations, violations.join("\n")).toEqual([]);
    },
    timeoutFor(RUNS, 150) // a probe replay, then the checked one,
  );

  it("the replays were not vacuous: reverts were aimed, and decisions lifted", () => {
    if (RUNS < 10) return;
    expect(aimed).toBeGreaterThan(0);
    expect(stats.lifted).toBeGreaterThan(0);
  });
});
