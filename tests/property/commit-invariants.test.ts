// The commit invariants of the cache-aware policy (docs/architecture.md, "Commit"), checked on what
// the provider would receive, call by call, on generated and recorded sessions, under every preset
// and two commit orders (batched: supersedes wait for their batch while age rules may fire; eager:
// every decision applies at once), with calls spaced so that the prompt cache sometimes expires:
//   1. never stale over fresh: no call shows an older view of a thing in full while a newer view
//      of it (the same tool called with the same input, or a whole-file read of the same file) is
//      cleared or truncated;
//   2. where the sent prefix changes (a prune, the provider dropping earlier reasoning, a part
//      the user or the model restored) or the cache expired, no decision stays pending behind that
//      point: it would cost a second write.
import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message, Part } from "../../src/graph/types.js";
import type { AcpConfig } from "../../src/rules/types.js";
import { loadSession } from "../../src/sim/load.js";
import { commonPrefixLength } from "../../src/sim/metrics.js";
import { renderPrompt, type Unit } from "../../src/graph/prompt.js";
import { deepCopy } from "../engine/session-gen.js";
import { buildSession, flagsFromEnv, sessionSpecArb } from "./arbitraries.js";
import { fcParams, runsFor, timeoutFor } from "./invariants.js";
import { OPENCODE } from "../../src/host/profile.js";

const PRESETS = ["compact", "balanced", "verbose"];
const ORDERS: Record<string, Partial<AcpConfig>> = {
  batched: {},
  eager: { commit: { minTokens: 0, breakEven: 0 } },
};
const TTL_MS = 5 * 60_000;

/** Whole outputs as the provider gets them, by part id (tool parts only). */
function outputs(messages: Message[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of messages) for (const p of m.parts) if (p.type === "tool" && typeof p.state?.output === "string") out.set(p.id, p.state.output);
  return out;
}

/** The thing a completed tool call shows: same tool and same input, or a whole-file read of one file. */
function thingOf(p: Part): string | undefined {
  if (p.type !== "tool" || p.state?.status !== "completed" || typeof p.state.output !== "string" || p.state.time?.compacted) return undefined;
  const input = (p.state.input ?? {}) as Record<string, unknown>;
  if (p.tool === "read" && typeof input.filePath === "string" && input.offset === undefined && input.limit === undefined) return `file:${input.filePath}`;
  return `${p.tool}:${JSON.stringify(input)}`;
}

/** Output shown in full: unchanged, or with only an id tag after it. */
const inFull = (shown: string | undefined, original: string) => shown !== undefined && (shown === original || shown.startsWith(original + "\n[acp:") || shown.startsWith(original + " [acp:"));

/** After the `at`-th call (modulo the calls), restore the `pick`-th decided part (/acp restore). */
type Restore = { at: number; pick: number };

function replayAndCheck(messages: Message[], preset: string, config: Partial<AcpConfig>, label: string, restores: Restore[] = []): string[] {
  const pruner = createPruner({ preset, config: { ...config, protectedTools: [], protectedFiles: [] } });
  const problems: string[] = [];
  let previous: Unit[] | undefined;
  let previousAt: number | undefined;
  const calls = messages.filter((m, i) => i > 0 && m.info.role === "assistant").length;
  let callNo = 0;
  for (let i = 0; i < messages.length; i++) {
    const call = messages[i];
    if (call.info.role !== "assistant" || i === 0) continue;
    const context = messages.slice(0, i);
    const copy = deepCopy(context);
    const now = (call.info.time as { created: number }).created;
    pruner.transform(copy, { now });
    const units = renderPrompt(copy, OPENCODE);
    const where = `${label} call ${call.info.id}`;

    // 1. never stale over fresh, among the parts the provider receives (an assistant message with
    // an error other than an abort never reaches it: seed 881779079, a read in an APIError message)
    const shown = outputs(copy);
    const sent = new Set(units.map((u) => u.partId));
    const things = new Map<string, Part[]>();
    for (const m of context) for (const p of m.parts) {
      if (!sent.has(p.id)) continue;
      const t = thingOf(p);
      if (t !== undefined) (things.get(t) ?? things.set(t, []).get(t)!).push(p);
    }
    for (const [thing, views] of things)
      for (let b = 1; b < views.length; b++) {
        const newer = views[b];
        if (inFull(shown.get(newer.id), newer.state!.output as string)) continue;
        for (const older of views.slice(0, b))
          if (inFull(shown.get(older.id), older.state!.output as string)) problems.push(`${where}: ${thing}: older ${older.id} in full, newer ${newer.id} pruned`);
      }

    // 2. nothing pending behind a change of the sent prefix, nothing pending on an expired cache
    const sessionID = context.find((m) => m?.info?.sessionID)?.info.sessionID;
    const result = sessionID === undefined ? undefined : pruner.lastCall(sessionID);
    const pending = result?.pendingParts ?? [];
    if (previous && pending.length > 0) {
      const expired = previousAt !== undefined && now - previousAt > TTL_MS;
      const common = commonPrefixLength(previous, units);
      const breakAt = expired ? 0 : common < previous.length ? common : Infinity;
      const firstUnit = new Map<string, number>();
      units.forEach((u, k) => firstUnit.has(u.partId) || firstUnit.set(u.partId, k));
      // a pending decision is on the first part with its id; where the history repeats the id
      // (OpenCode's never do), the unit found by the id may be another part's (seed 299683136: a
      // write in a failed message the provider never gets, and a text sent later with its id)
      const seenIds = new Set<string>();
      const repeated = new Set<string>();
      for (const m of context) for (const part of m.parts) if (typeof part?.id === "string") (seenIds.has(part.id) ? repeated : seenIds).add(part.id);
      for (const p of pending) {
        if (repeated.has(p.partId)) continue;
        const k = firstUnit.get(p.partId);
        if (k !== undefined && k >= breakAt) problems.push(`${where}: ${p.partId} (${p.slot}) still pending behind the ${expired ? "expired cache" : `prefix change at unit ${breakAt}`}`);
      }
    }
    previous = units;
    previousAt = now;
    if (sessionID !== undefined)
      for (const r of restores) {
        if (r.at % calls !== callNo) continue;
        const ids = Object.keys(pruner.state(sessionID).decisions).sort();
        if (ids.length > 0) pruner.restore(sessionID, ids[r.pick % ids.length], "user", context);
      }
    callNo++;
  }
  return problems;
}

/** Spaces the messages out: after each user message flagged in `gaps`, ten minutes pass (the cache expires). */
function withGaps(messages: Message[], gaps: boolean[]): Message[] {
  let shift = 0;
  let users = 0;
  return messages.map((m) => {
    if (m.info.role === "user" && gaps[users++ % Math.max(1, gaps.length)]) shift += 10 * 60_000;
    const created = ((m.info.time as { created?: number } | undefined)?.created ?? 0) + shift;
    return { ...m, info: { ...m.info, time: { ...(m.info.time as object), created } } };
  });
}

const RUNS = runsFor("presets");

describe("commit invariants", () => {
  const restoresArb = fc.array(fc.record({ at: fc.nat(60), pick: fc.nat(50) }), { maxLength: 3 });
  test.prop([fc.nat(PRESETS.length - 1), fc.constantFrom(...Object.keys(ORDERS)), sessionSpecArb(flagsFromEnv()), fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), restoresArb], fcParams(RUNS))(
    "generated sessions: never stale over fresh, nothing pending behind a change",
    (p, order, spec, gaps, restores) => {
      const messages = withGaps(buildSession(spec), gaps);
      const problems = replayAndCheck(messages, PRESETS[p], ORDERS[order], `${PRESETS[p]}/${order}`, restores);
      expect(problems.slice(0, 5), problems.slice(0, 5).join("\n")).toEqual([]);
    },
    timeoutFor(RUNS, 80),
  );

  // Recorded sessions, both folders: the first messages of a few sessions of each, as recorded
  // (their own timestamps decide when the cache expired).
  const root = fileURLToPath(new URL("../../../shared/corpus/", import.meta.url));
  const slices: [string, Message[]][] = [];
  for (const folder of ["sessions", "sessions-multiturn"]) {
    const dir = root + folder;
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((x) => x.endsWith(".json")).sort().slice(0, 4)) slices.push([`${folder}/${f}`, loadSession(`${dir}/${f}`).messages.slice(0, 160)]);
  }
  it.skipIf(slices.length === 0).each(PRESETS.flatMap((p) => Object.keys(ORDERS).map((o) => [p, o])))("corpus slices under %s, %s: never stale over fresh, nothing pending behind a change", (preset, order) => {
    for (const [name, messages] of slices) {
      const problems = replayAndCheck(messages, preset, ORDERS[order], `${name} ${preset}/${order}`);
      expect(problems.slice(0, 5), problems.slice(0, 5).join("\n")).toEqual([]);
    }
  }, 120_000);
});
