// The replay harness of the property tests: a generated session is replayed call by call as the
// host calls the transform hook (tests/engine/corpus-invariants.test.ts does the same on the
// recorded corpus), with restarts from disk, repeated transforms, restores, compaction cuts and
// reverts as the schedule says, and every invariant of docs/reliability.md is checked on every call.
import { copyFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import type { AcpPruner } from "../../src/engine/pruner.js";
import { compileCondition } from "../../src/engine/compile.js";
import { compileKey } from "../../src/engine/key.js";
import { isIntroMessage } from "../../src/engine/intro.js";
import type { FactContext } from "../../src/engine/facts.js";
import { promptTokensOf } from "../../src/engine/prompt-size.js";
import { decisionsOf, type SessionState } from "../../src/engine/state.js";
import { stateFile, stateFiles } from "../../src/store/state-files.js";
import { buildGraph, type PartNode } from "../../src/graph/graph.js";
import { UseTracker } from "../../src/engine/use.js";
import type { Message, Part } from "../../src/graph/types.js";
import { deepCopy } from "../engine/session-gen.js";
import { buildCalls, callLabel, callMessages, SKIP, type Call, type ScheduleSpec } from "./arbitraries.js";
import { OPENCODE } from "../../src/host/profile.js";

/**
 * ACP_FUZZ_RUNS: generated sessions over the whole folder (default 150 for npm test; nightly:
 * ACP_FUZZ_RUNS=10000). Each property takes its share.
 */
export const TOTAL_RUNS = Math.max(1, Number(process.env.ACP_FUZZ_RUNS ?? 150));
export const SHARES = { presets: 0.4, rules: 0.3, faults: 0.15, garbage: 0.05, processes: 0.1, reverts: 0.2 } as const;
export const runsFor = (k: keyof typeof SHARES) => Math.max(5, Math.round(TOTAL_RUNS * SHARES[k]));
/** fast-check parameters; ACP_FUZZ_SEED (and ACP_FUZZ_PATH) replay a reported failure (under CI: tests/fuzz-seed.ts). */
export const fcParams = <T = any>(numRuns: number): T => ({
  numRuns,
  ...(process.env.ACP_FUZZ_SEED ? { seed: Number(process.env.ACP_FUZZ_SEED) } : {}),
  ...(process.env.ACP_FUZZ_PATH ? { path: process.env.ACP_FUZZ_PATH } : {}),
  endOnFailure: process.env.ACP_FUZZ_NO_SHRINK === "1",
}) as T;
/** A test's timeout for `runs` runs of about `msPerRun` each. */
/**
 * A restore pins a part until the thing is viewed again (src/engine/pins.ts): here, approximately
 * and independently of the engine's supersede keys, a part of the same type in a message
 * after `afterId`, the newest message when the part was restored. A pin that ends without one is a
 * violation; one that ends with one lets rules decide the part again.
 */
export const partById = (ms: Message[], id: string): Part | undefined => ms.flatMap((m) => m.parts ?? []).find((x) => x?.id === id);

export function viewedAgain(history: Message[], afterId: string | undefined, part: Part | undefined): boolean {
  const at = afterId === undefined ? -1 : history.findIndex((m) => m?.info?.id === afterId);
  if (at < 0 || !part) return false;
  // of the same type, any tool: a newer view may come from another tool (todo-latest: a todowrite after a todoread)
  return history.slice(at + 1).some((m) => m.parts?.some((x) => x?.type === part.type));
}

export const timeoutFor = (runs: number, msPerRun: number) => Math.max(30_000, runs * msPerRun * 3);

export interface ErrorRec {
  where: string;
  error: unknown;
}

/** Collects what pruners swallowed (their onError); the replay empties it call by call. */
export class ErrorSink {
  list: ErrorRec[] = [];
  readonly onError = (error: unknown, where: string) => void this.list.push({ error, where });
  take(): ErrorRec[] {
    const l = this.list;
    this.list = [];
    return l;
  }
}

/** Reuses a pruner for many sessions (createPruner costs ~40 ms of YAML and schema work). */
export class PrunerPool {
  private current?: AcpPruner;
  private uses = 0;
  constructor(private readonly make: () => AcpPruner, private readonly maxUses = 40) {}
  get(): AcpPruner {
    if (!this.current || this.uses >= this.maxUses) {
      this.current = this.make();
      this.uses = 0;
    }
    this.uses++;
    return this.current;
  }
}

export interface ReplaySetup {
  label: string;
  pruner: AcpPruner;
  /** The main pruner's state folder (none: state in memory, no restart lane). */
  stateDir?: string;
  /** A restarted process: a fresh pruner on `dir`, which gets a copy of the main state file. */
  restart?: { make: () => AcpPruner; dir: string };
  /** Fault injection: called on call k's input just before the transform. Errors at that call are expected. */
  inject?: { at: number; apply: (input: Message[]) => () => void };
  sink: ErrorSink;
}

export interface ReplayStats {
  calls: number;
  decided: number;
  restored: number;
  repeats: number;
  restartCalls: number;
  tagged: number;
  /** Tags shown, by kind: t (tool output), m (assistant text), r (reasoning, on its carrier). */
  tagKinds: Record<string, number>;
  maxTagBytes: number;
  bytesIn: number;
  bytesOut: number;
  /** Decisions committed, by action (shows which actions the runs exercised). */
  byAction: Record<string, number>;
  faults: number;
  faultsCaught: number;
  /** Decisions lifted because a revert took the newer view they stood for. */
  lifted: number;
}

export const newStats = (): ReplayStats => ({ calls: 0, decided: 0, restored: 0, repeats: 0, restartCalls: 0, tagged: 0, tagKinds: {}, maxTagBytes: 0, bytesIn: 0, bytesOut: 0, byAction: {}, faults: 0, faultsCaught: 0, lifted: 0 });

const DROPPED = "<dropped>";
const bytes = (s: string) => Buffer.byteLength(s, "utf8");
const clip = (s: string | undefined, n = 240) => (s === undefined ? "undefined" : s.length > n ? `${s.slice(0, n)}…(${s.length})` : s);
const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object" && !Array.isArray(x);
const ECHO = /\[acp:[tmr][0-9a-z]+\]/g;
/** Our tags at the end of a text: "\n[acp:r1a] [acp:m2b]". */
const SUFFIX = /\n((?:\[acp:[tmr][0-9a-z]+\] )*\[acp:[tmr][0-9a-z]+\])$/;
const tagIds = (suffix: string) => [...suffix.matchAll(/\[acp:([tmr][0-9a-z]+)\]/g)].map((m) => m[1]);

/** A part a committed decision removes from the request. */
/** Bytes a superseded older view may grow by when it is replaced beside its pruned newer view (the engine caps the note at 160 chars larger). */
export const MAX_NOTE_GROWTH = 1024;

const isDroppedPart = (state: SessionState, p: Part | undefined) => typeof p?.id === "string" && (state.decisions[p.id]?.output?.patch.drop === true || state.decisions[p.id]?.input?.patch.drop === true);

/** The session id the engine uses for a history: the first message's that has one. */
export const sessionOf = (messages: Message[]): string | undefined => messages.find((m) => m?.info?.sessionID)?.info.sessionID;

/** A user message the provider receives (ignored-only notices are not turns). */
const isUserMessage = (m: Message) => m?.info?.role === "user" && Array.isArray(m.parts) && m.parts.some((p) => p && !(p.type === "text" && p.ignored));

/** The opt-in code-block collapse may replace fenced blocks only: all text outside them is kept, in order. */
export function outsideFencesKept(before: string, after: string): boolean {
  let at = 0;
  for (const seg of before.split(/```[\w+-]*\n[\s\S]*?```/)) {
    const k = after.indexOf(seg, at);
    if (k < 0) return false;
    at = k + seg.length;
  }
  return true;
}

/**
 * Parts the preset's protect rules protect in this history (evaluated here, independently of the
 * phases). `idleTurns`, `idleCalls` and `userNamedTurns` are the engine's measure of use (UseTracker over the history
 * in order, as the interpreter feeds it): ageTurns in their place protected parts whose subject a
 * later call used, which the engine rightly does not.
 */
function protectionOf(pruner: AcpPruner): (messages: Message[]) => Set<Part> {
  const rules = pruner.resolved.rules.filter((r) => r.phase === "protect").map((r) => ({ test: compileCondition(r.when).test, params: r.params ?? {} }));
  const config = { protectedTools: pruner.config.protectedTools, protectedFiles: pruner.config.protectedFiles };
  return (messages) => {
    const out = new Set<Part>();
    if (rules.length === 0) return out;
    const g = buildGraph(messages, undefined, { host: OPENCODE });
    let size: number | undefined;
    const promptTokens = () => (size ??= promptTokensOf(g));
    const use = new UseTracker();
    for (const n of g.nodes) use.see(n);
    for (const n of g.nodes) {
      // decisions are keyed by part id and address the first part with it (a later part sharing
      // the id is never decided): whether a decision met a protected part is asked of that one
      if (g.byId.get(n.part.id) !== n) continue;
      for (const r of rules) {
        const ctx: FactContext = { config, params: r.params, isProtected: () => false, supersededRule: () => undefined, decidedRule: () => undefined, idleTurns: (n) => use.idleTurns(n), idleCalls: (n) => use.idleCalls(n), idleWorkCalls: (n) => use.idleWorkCalls(n), userNamedTurns: (n) => use.userNamedTurns(n), useTurns: (n) => use.useTurns(n), changeTurns: (n) => use.changeTurns(n), promptTokens, hostDrops: (n) => OPENCODE.dropsAtNextTurn(n.part) };
        if (r.test(n, ctx)) {
          out.add(n.part);
          break;
        }
      }
    }
    return out;
  };
}

const protectionCache = new WeakMap<AcpPruner, (messages: Message[]) => Set<Part>>();

/**
 * viewedAgain as the rule set sees views: a part in a message after `afterId` that one of the
 * pruner's supersede rules takes for a newer member of the part's group (its `by`, else its `when`,
 * holds on it, and the keys are equal). A user rule may let a part of another type supersede (a text
 * part superseding a tool output: random-rules.test.ts, seed 1064262130); range and overlap spares
 * are not looked at, so this may end a pin the engine keeps, never the reverse.
 */
function ruleViewOf(pruner: AcpPruner): (history: Message[], afterId: string | undefined, part: Part | undefined) => boolean {
  const config = { protectedTools: pruner.config.protectedTools, protectedFiles: pruner.config.protectedFiles };
  const rules = pruner.resolved.rules
    .filter((r) => r.phase === "supersede" && typeof r.key === "string")
    .map((r) => {
      // supersede rules read static facts only (ruleset.ts refuses others): no use facts are asked
      const ctx: FactContext = { config, params: r.params ?? {}, isProtected: () => false, supersededRule: () => undefined, decidedRule: () => undefined, idleTurns: () => 0, idleCalls: () => 0, idleWorkCalls: () => 0, userNamedTurns: () => Infinity, useTurns: () => 1, changeTurns: () => 0, hostDrops: (n: PartNode) => OPENCODE.dropsAtNextTurn(n.part) };
      return { when: compileCondition(r.when).test, by: isObject(r.then.by) ? compileCondition(r.then.by as never).test : undefined, key: compileKey(r.key as string), ctx };
    });
  return (history, afterId, part) => {
    if (rules.length === 0 || !part || typeof part.id !== "string") return false;
    const g = buildGraph(history, undefined, { host: OPENCODE });
    const at = afterId === undefined ? -1 : history.findIndex((m) => m?.info?.id === afterId);
    const older = g.byId.get(part.id);
    if (at < 0 || !older) return false;
    for (const { when, by, key: keyOf, ctx } of rules) {
      if (!when(older, ctx)) continue;
      const key = keyOf.get(older, ctx);
      if (key === undefined) continue;
      for (const n of g.nodes) if (n.msgIndex > at && (by ? by(n, ctx) : when(n, ctx)) && keyOf.get(n, ctx) === key) return true;
    }
    return false;
  };
}
const ruleViewCache = new WeakMap<AcpPruner, ReturnType<typeof ruleViewOf>>();

/** slot decisions as `id slot` → `rule@call`, to see which ones a call added. */
function decisionSigs(state: SessionState): Map<string, string> {
  const out = new Map<string, string>();
  for (const [id, slots] of Object.entries(state.decisions)) for (const [slot, d] of Object.entries(slots ?? {})) if (d) out.set(`${id}\u0000${slot}`, `${d.rule}@${d.call}`);
  return out;
}

/**
 * Parts of `history` with a decision whose superseding part (Decision.by) is not in it. A decision
 * belongs to the first part with its id, of its type and tool call (decisionsOf): a later part, or
 * one of another kind that shares the id, is not the decided part.
 */
export function revertedDecisions(state: SessionState, history: Message[]): Set<string> {
  const first = new Map<string, Part>();
  for (const m of history) for (const p of Array.isArray(m?.parts) ? m.parts : []) if (typeof p?.id === "string" && !first.has(p.id)) first.set(p.id, p);
  const out = new Set<string>();
  for (const [id, slots] of Object.entries(state.decisions)) {
    const part = first.get(id);
    if (!part || typeof part.type !== "string" || !decisionsOf(state.decisions, part as { id: string; type: string; callID?: string })) continue;
    if (Object.values(slots ?? {}).some((d) => d?.by !== undefined && !first.has(d.by))) out.add(id);
  }
  return out;
}

interface Tracker {
  /** First rendering of each decided raw part, with the decision signature it had then. */
  rendered: Map<Part, { json: string; sig: string; call: number }>;
  tags: Map<Part, string>;
  restored: Map<string, number>;
  /** Restored part → the newest message of the history when it was restored (viewedAgain). */
  restoredAfter: Map<string, string | undefined>;
  /** Restored parts whose pin the engine ended on a call where they had been viewed again: rules may decide them from then on, a revert of that view notwithstanding (sticky, invariant 13). */
  released: Set<string>;
  decidedEver: Set<Part>;
  /** Parts (raw) that some call's history held so far. */
  seen: WeakSet<Part>;
  /** Parts (raw) that came with a decision already made for another part with their id (see runCall). */
  inherited: WeakSet<Part>;
}

/**
 * Replays `raw` per `schedule`. Returns the violations (empty when every invariant holds);
 * `stats` accumulates counts over runs.
 */
export function replayAndCheck(raw: Message[], schedule: ScheduleSpec, setup: ReplaySetup, stats: ReplayStats = newStats()): string[] {
  const violations: string[] = [];
  const seen = new Set<string>();
  const fail = (key: string, msg: string) => {
    if (seen.has(key) || violations.length >= 12) return;
    seen.add(key);
    violations.push(msg);
  };
  const { pruner: a, sink, label } = setup;
  let protection = protectionCache.get(a);
  if (!protection) protectionCache.set(a, (protection = protectionOf(a)));
  const ruleView = ruleViewCache.get(a) ?? ruleViewOf(a);
  ruleViewCache.set(a, ruleView);
  const overrides = new Set(a.resolved.rules.filter((r) => r.then.overrideProtection === true).map((r) => r.id));
  const actionOf = new Map(a.resolved.rules.map((r) => [r.id, r.then.action]));
  const growth = new Set(a.resolved.rules.filter((r) => r.then.allowGrowth === true).map((r) => r.id));
  const tool = a.config.enabled && a.config.tool;
  const trackers = new Map<string, Tracker>();
  const trackerOf = (sid: string) => {
    let t = trackers.get(sid);
    if (!t) trackers.set(sid, (t = { rendered: new Map(), tags: new Map(), restored: new Map(), restoredAfter: new Map(), released: new Set(), decidedEver: new Set(), seen: new WeakSet(), inherited: new WeakSet() }));
    return t;
  };
  const rawJson = new Map<Part, string>();
  const jsonOf = (p: Part) => {
    let j = rawJson.get(p);
    if (j === undefined) rawJson.set(p, (j = JSON.stringify(p)));
    return j;
  };

  const calls = buildCalls(raw, schedule);
  const restartAt = schedule.restartAt === undefined ? -1 : schedule.restartAt % calls.length;
  let b: AcpPruner | undefined;
  const mainSid = sessionOf(raw);
  const persistent = setup.stateDir !== undefined && mainSid !== undefined && stateFile(setup.stateDir, mainSid) !== undefined;
  const sidsUsed = new Set<string>();

  function runCall(k: number, call: Call, final: boolean): void {
    const slice = callMessages(raw, call);
    if (slice.length === 0) return;
    const where = `${label} call ${k}${final ? " (after restoring all)" : ""} ${callLabel(call)}`;
    const sid = sessionOf(slice);
    if (sid) sidsUsed.add(sid);
    const input = deepCopy(slice);
    const inputJson = JSON.stringify(input);
    const toRaw = new Map<object, Part>();
    input.forEach((m, mi) => m.parts.forEach((p, pi) => toRaw.set(p, slice[mi].parts[pi])));
    const before = sid ? decisionSigs(a.state(sid)) : new Map<string, string>();
    // decisions that stand for a newer view this history no longer has (a revert): they go (src/engine/reverted.ts)
    const lifted = sid ? revertedDecisions(a.state(sid), slice) : new Set<string>();
    // parts new to this call whose id already has a decision: it was made for another part with that
    // id (a history that repeats an id, which OpenCode's never do, of a part a revert took)
    if (sid) {
      const had = a.state(sid).decisions;
      const t = trackerOf(sid);
      for (const m of slice) for (const p of Array.isArray(m?.parts) ? m.parts : []) if (p && typeof p === "object" && typeof p.id === "string" && !t.seen.has(p) && had[p.id]) t.inherited.add(p);
    }
    sink.take();
    stats.calls++;
    const faulty = setup.inject !== undefined && setup.inject.at % calls.length === k && !final;
    const disarm = faulty ? setup.inject!.apply(input) : undefined;
    try {
      a.transform(input);
    } catch (e) {
      fail("throw", `${where}: transform threw ${(e as Error)?.stack ?? e}`);
      return;
    } finally {
      disarm?.();
    }
    const errors = sink.take();
    const outJson = JSON.stringify(input);
    stats.bytesIn += bytes(inputJson);
    stats.bytesOut += bytes(outJson);
    if (faulty) {
      stats.faults++;
      // fail-open: a swallowed error leaves the messages as they came
      if (errors.length) {
        stats.faultsCaught++;
        const late = errors.some((e) => /\b(render|renderIds|stripEchoes|tagOutput|applySlots|applyPatch|applyDrops|saveState|persist)\b/.test(String((e.error as Error)?.stack)));
        if (outJson !== inputJson && !(late && SKIP.has("late-fault"))) fail("fail-open", `${where}: after the injected fault (${errors.map((e) => `${e.where}: ${(e.error as Error)?.stack}`).join("; ")}) the messages were not passed through unchanged: ${firstDiff(inputJson, outJson)}`);
        if (SKIP.has("fault-recovery")) stopped = true;
        return;
      }
    }
    if (errors.length) {
      fail(`error ${errors[0].where}`, `${where}: the pruner swallowed an error in ${errors[0].where}: ${(errors[0].error as Error)?.stack ?? errors[0].error}`);
      if (outJson !== inputJson) fail("fail-open", `${where}: after a swallowed error the messages were not passed through unchanged`);
      return;
    }
    if (!sid) {
      if (outJson !== inputJson) fail("no-session", `${where}: a history without a session id was changed`);
      return;
    }
    const state = a.state(sid);
    const tr = trackerOf(sid);
    const after = decisionSigs(state);
    const added: [string, string, string][] = [];
    for (const [k2, v] of after) if (before.get(k2) !== v) added.push([...(k2.split("\u0000") as [string, string]), v.split("@")[0]]);
    const tagOfPart = new Map<string, string>();
    for (const [t, partId] of Object.entries(state.ids ?? {})) {
      if (tagOfPart.has(partId)) fail(`id twice ${partId}`, `${where}: part ${partId} has two ids (${tagOfPart.get(partId)}, ${t})`);
      tagOfPart.set(partId, t);
    }
    if (!tool && Object.keys(state.ids ?? {}).length) fail("ids-off", `${where}: ids assigned with the prune tool off`);

    // No decision stands for a newer view the history no longer has (a revert took it: the part is the newest view again).
    for (const id of revertedDecisions(state, slice))
      fail(`reverted ${id}`, `${where}: part ${id} keeps a decision that stands for ${Object.values(state.decisions[id] ?? {}).map((d) => d?.by).join(", ")}, which this history no longer has`);
    for (const id of lifted) if (!state.decisions[id]) stats.lifted++;

    // Protection and pins hold for every decision this call added.
    const prot = protection!(slice);
    const protectedIds = new Set([...prot].map((p) => p.id));
    for (const id of tr.restored.keys())
      if (!tr.released.has(id) && state.pinned?.[id] === undefined && (viewedAgain(slice, tr.restoredAfter.get(id), partById(slice, id)) || ruleView(slice, tr.restoredAfter.get(id), partById(slice, id)))) tr.released.add(id);
    for (const [id, slot, rule] of added) {
      const action = actionOf.get(rule) ?? rule;
      stats.byAction[action] = (stats.byAction[action] ?? 0) + 1;
      if (protectedIds.has(id) && !overrides.has(rule)) fail(`protect ${id}`, `${where}: rule ${rule} decided ${slot} of protected part ${id}`);
      if (tr.restored.has(id) && !tr.released.has(id) && !(SKIP.has("pinned-collapse") && action === "collapse-code-blocks")) fail(`pinned ${id}`, `${where}: rule ${rule} decided ${slot} of part ${id}, restored at call ${tr.restored.get(id)}`);
    }

    // The one message the plugin adds: the prune tool's instructions, a user message after another message.
    const intros = input.flatMap((m, mi) => (isIntroMessage(m) ? [mi] : []));
    if (intros.length > 1 || intros[0] === 0) fail("intro", `${where}: instructions at messages ${intros.join(", ")}`);
    const output = input.filter((m) => !isIntroMessage(m));
    // Messages: same count, same infos, parts a subsequence of the input's.
    const carried = new Set<string>(); // reasoning tags shown in this call, by message
    if (output.length !== slice.length) fail("msg-count", `${where}: ${slice.length} messages became ${output.length}`);
    let lastUser = -1;
    slice.forEach((m, mi) => isUserMessage(m) && (lastUser = mi));
    for (let mi = 0; mi < Math.min(output.length, slice.length); mi++) {
      const rm = slice[mi];
      const om = output[mi];
      if (JSON.stringify(om.info) !== JSON.stringify(rm.info)) fail(`info ${mi}`, `${where}: message ${mi} info changed`);
      const role = rm.info?.role;
      // map output parts back to raw parts
      const present = new Map<Part, Part>();
      let lastIndex = -1;
      for (const op of om.parts) {
        let r = toRaw.get(op);
        if (!r) r = rm.parts.find((x) => typeof x === "object" && x !== null && x.id === op?.id && !present.has(x) && !om.parts.some((y) => toRaw.get(y) === x));
        if (!r) {
          fail(`extra ${mi}`, `${where}: message ${mi} has a part that is not in the input: ${clip(JSON.stringify(op))}`);
          continue;
        }
        const idx = rm.parts.indexOf(r);
        if (idx <= lastIndex) fail(`order ${mi}`, `${where}: message ${mi} parts reordered or doubled`);
        lastIndex = idx;
        present.set(r, op);
      }
      for (const r of rm.parts) {
        if (!r || typeof r !== "object") continue;
        tr.seen.add(r);
        const o = present.get(r);
        const rj = jsonOf(r);
        const rendered = o ? JSON.stringify(o) : DROPPED;
        const id = typeof r.id === "string" ? r.id : undefined;
        const slots = id !== undefined ? state.decisions[id] : undefined;
        const decided = slots !== undefined && (slots.output !== undefined || slots.input !== undefined);
        const pname = `${id ?? "(no id)"} (${r.type}${r.tool ? `:${r.tool}` : ""}, message ${mi})`;
        // expected rendering without a decision: the input, model echoes of ids stripped (a part
        // without a string id is no node of the graph: it passes through as it came)
        let expected = rj;
        if (tool && id !== undefined && role === "assistant" && r.type === "text" && typeof r.text === "string" && r.text.includes("[acp:")) {
          const stripped = r.text.replace(ECHO, "").replace(/[ \t]+\n/g, "\n");
          if (stripped.trim().length > 0) expected = JSON.stringify({ ...r, text: stripped });
        }
        // the id tags, if any, are an addition: comparisons remove them. A part shows its own tag
        // and the tags of the reasoning blocks before it in its message that it carries.
        let untagged = rendered;
        let shown: string | undefined;
        const shownText = o?.type === "tool" ? (isObject(o.state) && typeof o.state.output === "string" ? o.state.output : undefined) : o?.type === "text" && typeof o.text === "string" ? o.text : undefined;
        const suffix = shownText === undefined ? undefined : SUFFIX.exec(shownText)?.[1];
        const ours = (t: string) => {
          const owner = state.ids?.[t];
          if (owner === id) return true;
          const at = rm.parts.findIndex((x) => x?.id === owner);
          return at >= 0 && at < rm.parts.indexOf(r) && rm.parts[at].type === "reasoning";
        };
        if (o && suffix !== undefined && tagIds(suffix).every(ours)) {
          const cut = (x: string) => x.slice(0, -(suffix.length + 1));
          untagged = JSON.stringify(o.type === "tool" ? { ...o, state: { ...o.state, output: cut(shownText!) } } : { ...o, text: cut(shownText!) });
          if (untagged !== expected && rendered === expected) untagged = rendered; // the input already ended with the tag text
          else {
            shown = suffix;
            const n = tagIds(suffix).length;
            const tb = (bytes(rendered) - bytes(untagged)) / n;
            stats.tagged++;
            for (const t of tagIds(suffix)) stats.tagKinds[t[0]] = (stats.tagKinds[t[0]] ?? 0) + 1;
            stats.maxTagBytes = Math.max(stats.maxTagBytes, tb);
            if (tb > 16) fail(`tag size ${id}`, `${where}: ${pname}: id tags add ${tb} bytes each`);
            const rs = r.state;
            const chars = isObject(rs) ? (isObject(rs.time) && rs.time.compacted ? 0 : typeof rs.output === "string" ? rs.output.length : (JSON.stringify(rs.output) ?? "").length) : 0;
            const completed = r.type === "tool" && isObject(rs) && rs.status === "completed";
            const sentText = r.type === "text" && role === "assistant" && !r.synthetic && !r.ignored && typeof r.text === "string";
            const own = tagIds(suffix).filter((t) => state.ids?.[t] === id);
            if (own.length > 1) fail(`two tags ${id}`, `${where}: ${pname}: two own tags ${own.join(", ")}`);
            if (own.length && !((completed && chars >= 400) || (sentText && r.text!.length >= 400 && !rm.info?.summary)))
              fail(`tag on ${id}`, `${where}: ${pname}: own id tag on a part that is neither a completed tool call with 400+ characters of output nor assistant text of 400+ characters`);
            if (own.length < tagIds(suffix).length && !(completed || (sentText && r.text!.trim() !== "")))
              fail(`carrier ${id}`, `${where}: ${pname}: a reasoning id on a part that is neither a completed tool call nor assistant text`);
            for (const t of tagIds(suffix)) {
              if (own.includes(t)) continue;
              const k = `${mi}:${t}`;
              if (carried.has(k)) fail(`reasoning tag twice ${t}`, `${where}: reasoning id ${t} shown twice in message ${mi}`);
              carried.add(k);
            }
          }
        }
        // A part keeps what it shows from call to call; a reasoning tag may move to the next
        // carrier only when a part of its message was dropped (its old carrier).
        const first = tr.tags.get(r);
        if (first !== undefined && first !== shown && o && !rm.parts.some((x) => isDroppedPart(state, x) || (typeof x?.id === "string" && tr.restored.has(x.id))))
          fail(`tag change ${id}`, `${where}: ${pname}: id tags ${first} became ${shown ?? "none"}`);
        if (shown !== undefined) tr.tags.set(r, shown);
        else if (o) tr.tags.delete(r);

        // (a) decided parts render identically from call to call; undecided ones render as the input
        if (decided) {
          tr.decidedEver.add(r);
          const sig = `${slots.output?.rule ?? ""}/${slots.input?.rule ?? ""}`;
          const first = tr.rendered.get(r);
          if (first && first.sig === sig && first.json !== rendered)
            fail(`sticky ${id}`, `${where}: ${pname}: decided (${sig}) and rendered at call ${first.call} as ${clip(first.json)}, now ${clip(rendered)}`);
          if (!first || first.sig !== sig) tr.rendered.set(r, { json: rendered, sig, call: k });
        } else {
          if (tr.rendered.has(r) && !(id !== undefined && (tr.restored.has(id) || lifted.has(id)))) fail(`reappear ${id}`, `${where}: ${pname}: pruned at call ${tr.rendered.get(r)!.call}, its decision is gone without a restore or a revert of the view it stood for`);
          tr.rendered.delete(r);
          if (untagged !== expected) fail(`undecided ${id}`, `${where}: ${pname}: changed without a decision: ${clip(expected)} → ${clip(untagged)}`);
        }
        // user text is byte-identical, but for the opt-in code-block collapse (fences only)
        if (role === "user" && r.type === "text" && !r.synthetic && rendered !== rj) {
          const d = slots?.output;
          const fencesOnly = d?.action === "collapse-code-blocks" && o?.type === "text" && typeof o.text === "string" && typeof r.text === "string" && outsideFencesKept(r.text, o.text) && JSON.stringify({ ...o, text: r.text }) === rj;
          if (!fencesOnly) fail(`user ${id}`, `${where}: ${pname}: user text ${clip(rj)} became ${clip(rendered)} (decision ${d?.rule ?? "none"})`);
        }
        // the current turn's reasoning is byte-identical
        if (r.type === "reasoning" && mi > lastUser && rendered !== rj && !tr.inherited.has(r)) fail(`reasoning ${id}`, `${where}: ${pname}: current-turn reasoning became ${clip(rendered)}`);
        if (!o) continue;
        // every tool call keeps its call and its result
        if (r.type === "tool" && isObject(r.state)) {
          const rs = r.state;
          const os = o.state;
          if (o.type !== "tool" || !isObject(os)) fail(`tool ${id}`, `${where}: ${pname}: tool part lost its type or state: ${clip(rendered)}`);
          else {
            if (os.status !== rs.status) fail(`status ${id}`, `${where}: ${pname}: status ${rs.status} → ${os.status}`);
            if (o.callID !== r.callID || o.tool !== r.tool) fail(`call ${id}`, `${where}: ${pname}: callID or tool changed`);
            if (isObject(rs.input) && !isObject(os.input)) fail(`input ${id}`, `${where}: ${pname}: call input lost`);
            if (rs.status === "completed" && rs.output !== undefined && os.output === undefined) fail(`result ${id}`, `${where}: ${pname}: completed result lost`);
            if (rs.status === "error" && rs.error !== undefined && (os.error === undefined || (Boolean(rs.error) && !os.error))) fail(`error ${id}`, `${where}: ${pname}: error result lost`);
          }
        }
        // no empty text parts are created
        const blank = (p: Part) => p.type === "text" && (typeof p.text !== "string" || p.text.trim() === "");
        if (blank(o) && !blank(r)) fail(`empty ${id}`, `${where}: ${pname}: pruning left an empty text part (${clip(rendered)}), was ${clip(rj)}`);
        // never larger than the input (id tag aside; comparison baselines may grow on purpose)
        if (bytes(untagged) > bytes(rj)) {
          const rules = [slots?.output?.rule, slots?.input?.rule].filter((x): x is string => x !== undefined);
          const open = r.type === "tool" && isObject(r.state) && r.state.status !== "completed" && r.state.status !== "error";
          // a small older view replaced beside its pruned newer view (never stale over fresh): a note, not
          // content; it stays (sticky) if the newer view is restored later
          const by = slots?.output?.by;
          const besideNewer = by !== undefined && bytes(untagged) - bytes(rj) <= MAX_NOTE_GROWTH;
          if (!besideNewer && !rules.some((x) => growth.has(x)) && !(open && SKIP.has("pending-output"))) fail(`grow ${id}`, `${where}: ${pname}: ${bytes(rj)} → ${bytes(untagged)} bytes (decisions: ${rules.join(", ") || "none"}): ${clip(untagged)}`);
        }
      }
    }

    // a transform of its own output changes nothing
    if ((schedule.repeatMask >>> (k % 31)) & 1) {
      stats.repeats++;
      a.transform(input);
      const again = JSON.stringify(input);
      const errs = sink.take();
      if (errs.length) fail("repeat error", `${where}: the repeated transform swallowed ${(errs[0].error as Error)?.stack ?? errs[0].error}`);
      if (again !== outJson) fail("idempotent", `${where}: transforming the output again changed it: ${firstDiff(outJson, again)}`);
    }
    // a restarted process (state from disk) renders the same prompt
    if (b) {
      stats.restartCalls++;
      const copy = deepCopy(slice);
      b.transform(copy);
      const errs = sink.take();
      if (errs.length) fail("restart error", `${where}: the restarted pruner swallowed ${(errs[0].error as Error)?.stack ?? errs[0].error}`);
      const j = JSON.stringify(copy);
      if (j !== outJson) fail("restart", `${where}: the restarted pruner (from call ${restartAt}) renders differently: ${firstDiff(outJson, j)}`);
    }
  }

  let stopped = false;
  for (let k = 0; k < calls.length && !stopped; k++) {
    if (k === restartAt && setup.restart && persistent) {
      // every session id the calls used so far (a compaction or revert can change the first message)
      for (const sid of new Set([mainSid!, ...sidsUsed])) {
        const from = stateFiles(setup.stateDir!, sid);
        const to = stateFiles(setup.restart.dir, sid);
        to.forEach((f, i) => {
          rmSync(f, { force: true });
          if (existsSync(from[i])) copyFileSync(from[i], f);
        });
      }
      b = setup.restart.make();
    }
    runCall(k, calls[k], false);
    for (const r of schedule.restores) {
      if (r.at % calls.length !== k || !mainSid) continue;
      const ids = Object.keys(a.state(mainSid).decisions).sort();
      if (!ids.length) continue;
      const id = ids[r.pick % ids.length];
      // its pruned newer views of the same thing come back (and are pinned) with it
      const back = a.restoreReport(mainSid, id);
      if (!back.restored) fail(`restore ${id}`, `${label} after call ${k}: restore(${id}) returned false for a decided part`);
      b?.restore(mainSid, id);
      const lastId = callMessages(raw, calls[k]).at(-1)?.info?.id;
      for (const x of [id, ...back.newer]) {
        trackerOf(mainSid).restored.set(x, k);
        trackerOf(mainSid).restoredAfter.set(x, lastId);
        trackerOf(mainSid).released.delete(x);
      }
      stats.restored++;
    }
  }
  // restore everything: every part renders as the input again
  if (mainSid && !stopped) {
    const ids = Object.keys(a.state(mainSid).decisions);
    for (const id of ids) {
      if (!a.state(mainSid).decisions[id]) continue; // restored already, as a newer view of a part restored before
      const back = a.restoreReport(mainSid, id);
      if (!back.restored) fail(`restore ${id}`, `${label}: restore(${id}) returned false for a decided part`);
      b?.restore(mainSid, id);
      for (const x of [id, ...back.newer]) {
        trackerOf(mainSid).restored.set(x, calls.length);
        trackerOf(mainSid).released.delete(x);
      }
    }
    stats.restored += ids.length;
    const last = calls[calls.length - 1];
    runCall(calls.length, last, true);
    // the restored parts have no decision now: runCall checked they render as the input
  }
  for (const t of trackers.values()) stats.decided += t.decidedEver.size;
  for (const dir of [setup.stateDir, setup.restart?.dir])
    for (const sid of new Set([...(mainSid ? [mainSid] : []), ...sidsUsed])) {
      for (const f of dir ? stateFiles(dir, sid) : []) rmSync(f, { force: true });
    }
  return violations;
}

/** Where two JSON texts first differ, with context. */
export function firstDiff(a: string, b: string): string {
  let k = 0;
  while (k < a.length && a[k] === b[k]) k++;
  const win = (s: string) => JSON.stringify(s.slice(Math.max(0, k - 80), k + 120));
  return `at char ${k}: ${win(a)} vs ${win(b)}`;
}

/** Temp folders in memory where there is one (state is written on every call). */
export const TMP = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

/** A live pruner pool on its own state folder, and the pool of the process restarted beside it. */
export interface RestartLane {
  dir: string;
  a: PrunerPool;
  bDir: string;
  b: PrunerPool;
}

/** The lanes of a property test under `root`: one per key, made on first use from `make(stateDir)`. */
export function restartLanes(root: string): (key: string, make: (stateDir: string) => AcpPruner) => RestartLane {
  const lanes = new Map<string, RestartLane>();
  return (key, make) => {
    let l = lanes.get(key);
    if (!l) {
      const dir = join(root, key);
      const bDir = join(root, `${key}-restart`);
      mkdirSync(bDir, { recursive: true });
      lanes.set(key, (l = { dir, a: new PrunerPool(() => make(dir)), bDir, b: new PrunerPool(() => make(bDir)) }));
    }
    return l;
  };
}
