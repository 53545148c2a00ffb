// createPruner: the programmatic API shared by the plugin, the CLI and external measurement.
import { buildGraph, charsFrom, tokensOf, type Graph } from "../graph/graph.js";
import type { Message, Part } from "../graph/types.js";
import type { ExplainEntry, Pruner, TransformOptions } from "./api.js";
import { defaultConfig, layersSetTool, type ConfigLayer } from "../rules/config.js";
import type { Problem } from "../rules/problems.js";
import { resolveRules, type ResolvedRules } from "../rules/resolve.js";
import type { AcpConfig, CommitPolicy } from "../rules/types.js";
import { evaluateProtection, type CallResult } from "./call.js";
import { runPhases } from "./phases.js";
import { sentTotal } from "./sent-prefix.js";
import { carriedRenderer, Pass, render, renderRepeat, type RenderTarget } from "./render.js";
import { applyDrops, WriteLog, writeLog, type Undo } from "./write-log.js";
import { compileRuleSet, type CompiledRule, type CompiledRuleSet } from "./ruleset.js";
import { holdsOn } from "./compile.js";
import { SessionRuntime } from "./session.js";
import { decisionsOf, newState, touch, type SessionState } from "./state.js";
import type { SessionStore, StatsStore } from "./storage.js";
import { assignIds, idKind, updateAllSuffixes, updateSuffixes } from "./ids.js";
import { renderIntro, stripIntro, systemPrompt, updateIntroAnchor } from "./intro.js";
import { idTags } from "./id-tags.js";
import type { HostProfile } from "../graph/host.js";
import { applyManual, type ManualContext, type ManualRequest, type RestoreOutcome } from "./manual.js";
import { applySweep, type SweepResult } from "./sweep.js";
import { holdersOf } from "./holders.js";
import { explainCondition, type ExplainedCondition } from "./explain.js";
import { noteRestore } from "./regret.js";
import { liftReverted } from "./reverted.js";
import { isPinned, pinAt } from "./pins.js";
import { standingOf, type StandingRule } from "./why-not.js";
import { sessionTotals, type RuleTotals } from "./totals.js";
import type { Condition } from "../rules/types.js";
import type { PartNode } from "../graph/graph.js";


/** Part ids protected by rules that do not depend on time (tools, files). */
function staticallyProtected(rt: SessionRuntime): Set<string> {
  const out = new Set<string>();
  for (const i of rt.protectedBy.permanent.keys()) out.add(rt.graph.nodes[i].part.id);
  return out;
}

/** Parts worth an id (ids.ts idKind) that no rule protects for good (static protection: tools, files). */
function idEligible(rt: SessionRuntime, n: PartNode): boolean {
  if (idKind(n) === undefined) return false;
  const by = rt.protectedBy.get(n.index);
  return !by || by.dynamicWhen !== undefined;
}

export interface PrunerOptions {
  /** The host (src/host/profile.ts has OpenCode's): its placeholders, error names, prune tool and id tags. */
  host: HostProfile;
  /** compact | balanced | verbose, or a preset file path. Overrides config.preset. */
  preset?: string;
  /** Parsed configuration (acp.jsonc shape); missing keys take defaults. */
  config?: Partial<AcpConfig>;
  /** Extra rule files or folders. */
  rules?: string[];
  /** Where session states are kept (src/store: a state folder); without it state lives in memory only. */
  store?: SessionStore;
  /** Config layers and user rule folders as found by loadConfig (plugin use). */
  layers?: ConfigLayer[];
  ruleDirs?: string[];
  /**
   * Name of the host's prune tool. When a session's state is missing or unreadable, its calls in
   * the history are replayed to rebuild the manual decisions.
   */
  manualTool?: string;
  /**
   * The all-time stats (src/store/all-time.ts): each session's totals are recorded there when they
   * change. Without it there are no all-time stats.
   */
  stats?: StatsStore;
  /** Called with every error the pruner swallowed (it never throws from transform). */
  onError?: (error: unknown, where: string) => void;
}

export interface PartExplanation {
  partId: string;
  tool?: string;
  decisions: { slot: string; rule: string; action: string; tokens: number; call: number; by?: string }[];
  /** For each deciding rule: its `when` evaluated on the part, and the key it grouped by. */
  rules: { id: string; description: string; source?: string; key?: string; when: ExplainedCondition; by?: ExplainedCondition }[];
  /** A part no rule has pruned: the rules that consider it and where each stands (why-not.ts). */
  standing?: StandingRule[];
}

export interface AcpPruner extends Pruner {
  readonly resolved: ResolvedRules;
  readonly problems: Problem[];
  readonly config: AcpConfig;
  /** Result of the last transform per session in this process (for notifications). */
  lastCall(sessionID: string): (CallResult & { sessionID: string }) | undefined;
  /**
   * What the session's last request left waiting for the commit policy (prunes of the sent prefix
   * and the tokens they would free), whichever process made it: undefined when nothing waits.
   */
  waiting(sessionID: string): { parts: number; tokens: number } | undefined;
  /** Session state (decisions), loading it from disk if needed. */
  state(sessionID: string): SessionState;
  /**
   * restoreReport, answering only whether the part itself was pruned (and is restored now).
   */
  restore(sessionID: string, partId: string, by?: "agent" | "user", history?: Message[]): boolean;
  /**
   * Removes a part's decisions and prune request so it renders in full again from the next call,
   * and pins it: no rule prunes it until a later call views the same thing again (pins.ts; also
   * when it was not pruned, or its prune was only waiting for the commit policy). Its newer views
   * of the same thing whose output is pruned are restored and pinned with it. Counts a regret
   * event of the rule that had pruned the part, by the user (/acp restore, the default) or the
   * agent. `history`: the session's messages, for a part the last call did not see (a new process).
   */
  restoreReport(sessionID: string, partId: string, by?: "agent" | "user", history?: Message[]): RestoreOutcome;
  /**
   * Why a part is pruned (the decision, the rule's evaluated condition and its supersede key), or why
   * not yet (`standing`). `history`: the session's messages, for a part the last call did not see.
   */
  why(sessionID: string, partId: string, history?: Message[]): PartExplanation | undefined;
  /**
   * All sessions' totals per rule (this one's recorded first), and a problem with the file if it
   * was unreadable; undefined without a stats file.
   */
  allTime(sessionID: string): { sessions: number; rules: Record<string, RuleTotals>; problem?: string } | undefined;
  /** The user discards the tool outputs since their last message (or the newest n); protection holds. */
  sweep(sessionID: string, history: Message[], n?: number): SweepResult;
  /** A prune request from the model (the context_prune tool); `history` is the original session. */
  manual(sessionID: string, request: ManualRequest, history: Message[]): { ok: boolean; text: string };
}

export function createPruner(options: PrunerOptions): AcpPruner {
  const config: AcpConfig = { ...defaultConfig(), ...options.config };
  // acp.jsonc may say what the provider does with earlier reasoning where the metadata cannot tell
  const said = config.earlierReasoning;
  const host: HostProfile = said === "dropped" || said === "sent" ? { ...options.host, dropsAtNextTurn: (part) => part.type === "reasoning" && said === "dropped" } : options.host;
  const tags = idTags(host.idTag);
  if (options.preset) config.preset = options.preset;
  if (options.rules) config.ruleFiles = [...config.ruleFiles, ...options.rules];
  const resolved = resolveRules({ config, layers: options.layers, ruleDirs: options.ruleDirs });
  // unless the configuration says, the preset decides whether the model is offered context_prune
  if (options.config?.tool === undefined && !layersSetTool(options.layers)) config.tool = resolved.presetTool ?? true;
  const problems = [...resolved.problems];
  let ruleSet: CompiledRuleSet;
  try {
    ruleSet = compileRuleSet(resolved.rules);
  } catch (e) {
    problems.push({ file: "<rules>", line: 1, col: 1, severity: "error", message: (e as Error).message, ruleId: "compile" });
    ruleSet = compileRuleSet([]);
  }
  const configFacts = { protectedTools: config.protectedTools, protectedFiles: config.protectedFiles };
  const sessions = new Map<string, SessionRuntime>();
  const last = new Map<string, CallResult & { sessionID: string }>();
  const onError = options.onError ?? (() => {});
  /** Arrays this pruner rendered: one coming back holds our own output (tags already there). */
  const rendered = new WeakSet<Message[]>();
  /** Ids and instructions wait until the prompt is large enough to have something to prune. */
  const deferIds = config.tool && config.idsFromTokens > 0;

  function runtime(sessionID: string): SessionRuntime {
    let rt = sessions.get(sessionID);
    if (!rt) {
      const { state, fresh } = options.store ? options.store.load(sessionID, (m) => onError(new Error(m), "state")) : { state: newState(sessionID), fresh: true };
      rt = new SessionRuntime(ruleSet, configFacts, state, host);
      rt.replayManual = fresh && options.manualTool !== undefined;
      sessions.set(sessionID, rt);
    }
    return rt;
  }

  /**
   * Finds a part: the runtime whose graph holds it, and its node. The session's runtime (as the last
   * request left it), or else, with `history`, one of its own over a copy of the state (a new
   * process, or a part newer than the last request), so neither the session's runtime nor its state
   * changes; that one is made at most once per finder, so a finder serves one request.
   */
  function finder(rt: SessionRuntime, history?: Message[]): (partId: string) => { rt: SessionRuntime; node: PartNode } | undefined {
    let own: SessionRuntime | undefined;
    return (partId) => {
      const live = rt.graph?.byId.get(partId);
      if (live) return { rt, node: live };
      if (!history) return undefined;
      own ??= runtimeFrom(rt.state, history);
      const node = own.graph.byId.get(partId);
      return node && { rt: own, node };
    };
  }

  /** A runtime of its own over a copy of `state`, with `history`'s facts and protection (never saved). */
  function runtimeFrom(state: SessionState, history: Message[]): SessionRuntime {
    const copy = structuredClone(state);
    const own = new SessionRuntime(ruleSet, configFacts, copy, host);
    own.update(buildGraph(history, undefined, { host, anchor: copy.introAt }));
    evaluateProtection(own);
    return own;
  }

  /** Is the part's output (or its input) pruned, or asked to be by the model or the user? */
  const prunedNow = (state: SessionState, partId: string, outputOnly = false) => Boolean((outputOnly ? state.decisions[partId]?.output : state.decisions[partId]) || state.manual?.[partId]);

  /**
   * /acp restore and context_prune restore. The part is sent in full from the next request and
   * pinned: no rule prunes it until a later call views the same thing again (pins.ts). Also
   * restored and pinned: its newer views of the same thing whose output is pruned (commit prunes a
   * newer view only with its older views, so with this one in full they must be too). Only the
   * part itself counts a regret event: the newer views come back because it did, not because their
   * rules were wrong.
   */
  function restoreReport(sessionID: string, partId: string, by: "agent" | "user" = "user", history?: Message[]): RestoreOutcome {
    const rt = runtime(sessionID);
    const state = rt.state;
    const had = prunedNow(state, partId);
    const wasPinned = isPinned(state, partId);
    // a finder of its own: the copy of the state it may make must hold the pins of earlier restores
    const facts = finder(rt, history)(partId);
    const waiting = had || !facts ? [] : standingOf(facts.rt, ruleSet, facts.node, resolved.commit.regretLimit ?? 0).filter((s) => s.standing === "waiting").map((s) => (s.tokens ? { rule: s.id, tokens: s.tokens } : { rule: s.id }));
    const newer = (facts?.rt.newerViews(facts.node.part.id) ?? []).map((n) => n.part.id).filter((id) => prunedNow(state, id, true));
    if (had) {
      noteRestore(state, partId, by);
      rt.backedOff.forget();
    }
    // pinned until the thing is viewed again after this request's newest message (pins.ts): the
    // last request's, also when it failed (the model saw it, as it came)
    const at = pinAt(history ?? rt.failedHistory ?? rt.graph?.messages);
    for (const id of [partId, ...newer]) {
      // a decision was sent with the call that committed it: the next prompt changes at this part
      if (state.decisions[id] && !state.restoredSent?.includes(id)) (state.restoredSent ??= []).push(id);
      unprune(rt, id, at);
    }
    const unpruned = had || newer.length > 0;
    // the caches dropped a decided part for good (its mark, its place in the rules' lists): rebuild
    // them as a process started from the state file would, so the part is wanted again once the
    // pin ends (the live process kept it in full where a restarted one pruned it)
    if (unpruned) rt.stale = true;
    rt.dirty = true;
    persist(rt);
    if (unpruned) scheduleTotals(rt, true);
    return { restored: had, waiting, newer, wasPinned };
  }

  /** The part's decisions and prune request go, and it is pinned (`at`: pins.ts pinAt). */
  function unprune(rt: SessionRuntime, partId: string, at: string | true): void {
    delete rt.state.decisions[partId];
    if (rt.state.manual) delete rt.state.manual[partId];
    const node = rt.graph?.byId.get(partId);
    if (node && rt.graph.nodes[node.index] === node) {
      rt.slots[node.index] = undefined;
      if (rt.view.views[node.index]) rt.view.changed(node);
      rt.touched.push(node.index); // its message's tags may move back onto it
    }
    touch(rt.state, partId);
    (rt.state.pinned ??= {})[partId] = at;
  }

  function failed(messages: Message[]): SessionRuntime | undefined {
    try {
      const id = messages.find((m) => m?.info?.sessionID)?.info.sessionID;
      return id ? sessions.get(id) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Per session: the totals last recorded in the stats file (JSON), and the regret events then. */
  const recorded = new Map<string, { json: string; regret: number }>();
  /** Sessions whose totals may have changed, recorded together once the current call has returned. */
  const unrecorded = new Set<SessionRuntime>();

  const regretCount = (rt: SessionRuntime) => (rt.state.regret ? Object.keys(rt.state.regret).length : 0);

  /**
   * Records the session's totals in the all-time stats file soon, if they may have changed: after
   * the hook has returned, so a request never waits for the file (the file is read and written
   * whole, under its lock).
   */
  function scheduleTotals(rt: SessionRuntime, changed: boolean): void {
    if (!options.stats) return;
    const last = recorded.get(rt.state.sessionID);
    if (last && !changed && last.regret === regretCount(rt)) return;
    if (unrecorded.size === 0) setImmediate(recordPending);
    unrecorded.add(rt);
  }

  function recordPending(): void {
    for (const rt of unrecorded) recordTotals(rt);
    unrecorded.clear();
  }

  /** Records the session's totals in the all-time stats file if they differ from what it recorded last (fail-open: a problem is logged). */
  function recordTotals(rt: SessionRuntime): void {
    const stats = options.stats;
    if (!stats) return;
    try {
      const id = rt.state.sessionID;
      const last = recorded.get(id);
      const totals = sessionTotals(rt.state);
      const json = JSON.stringify(totals);
      // a session never pruned gets no entry (nor a write)
      if (last?.json !== json && (last || json !== "{}")) stats.record(id, totals, Date.now(), (m) => onError(new Error(m), "stats"));
      recorded.set(id, { json, regret: regretCount(rt) });
    } catch (e) {
      onError(e, "stats");
    }
  }

  /** Saves the session's state; merged foreign writes invalidate the runtime's caches. */
  function persist(rt: SessionRuntime): boolean {
    const foreign = options.store !== undefined && options.store.save(rt.state);
    if (foreign) rt.stale = true;
    return foreign;
  }

  /**
   * The protect rule that holds a part of `graph`, a graph of the history a prune request or a
   * sweep comes with: the rules' conditions evaluated on that part directly. The runtime keeps
   * its own graph, whose nodes hold the parts as stored; the history handed to a tool may be the
   * last request as this pruner rendered it.
   */
  function protectionIn(rt: SessionRuntime, graph: Graph): (partId: string) => CompiledRule | undefined {
    return (partId) => {
      const n = graph.byId.get(partId);
      if (!n) return undefined;
      const tool = n.part.type === "tool" ? n.part.tool : undefined;
      for (const r of ruleSet.byPhase.protect) {
        const ctx = rt.ctxs[r.index];
        if (holdsOn(r.staticWhen, n, tool, ctx) && (!r.dynamicWhen || r.dynamicWhen(n, ctx))) return r;
      }
      return undefined;
    };
  }

  /**
   * why() for a part the last call did not see (a new process: `opencode run --command acp`; or a
   * part newer than the last request): the facts of `history`, in a runtime of its own over a copy
   * of the state, so neither the session's runtime nor its state changes.
   */
  function whyNotFrom(sessionID: string, partId: string, history: Message[]): PartExplanation | undefined {
    const state = runtime(sessionID).state;
    if (state.decisions[partId]) return undefined;
    const rt = runtimeFrom(state, history);
    const node = rt.graph.byId.get(partId);
    return node && notPruned(rt, node);
  }

  /** why() for a part no rule has pruned: where each rule that considers it stands. */
  function notPruned(rt: SessionRuntime, node: PartNode): PartExplanation {
    return { partId: node.part.id, tool: node.part.tool, decisions: [], rules: [], standing: standingOf(rt, ruleSet, node, resolved.commit.regretLimit ?? 0) };
  }

  /**
   * ManualContext.holders for a request that comes with `history`: the older views that would keep
   * a part in full (holders.ts), from the session's runtime as the last request left it, or, for a
   * part it has not seen (a new process, or a part newer than the last request), from a runtime of
   * its own over `history` (made once per request).
   */
  function holdersIn(rt: SessionRuntime, history: Message[]): ManualContext["holders"] {
    const find = finder(rt, history);
    const backedOff = rt.backedOff.rules(rt.state, resolved.commit.regretLimit ?? 0);
    return (partId, q) => {
      const found = find(partId);
      return found ? holdersOf(found.rt, found.node, { ...q, backedOff }) : [];
    };
  }

  /** Rebuilds the model's prune requests from its tool calls in the history (state was lost). */
  function replayManualCalls(rt: SessionRuntime, messages: Message[]): void {
    rt.replayManual = false;
    const calls = rt.graph.nodes.filter((n) => n.part.type === "tool" && n.part.tool === options.manualTool && n.part.state?.status === "completed");
    if (calls.length === 0) return;
    evaluateProtection(rt);
    assignIds(rt, 0, (n) => idEligible(rt, n));
    const protectedIds = staticallyProtected(rt);
    for (const call of calls) {
      const input = call.part.state?.input as unknown as ManualRequest | undefined;
      if (!input || typeof input !== "object") continue;
      applyManual(input, { state: rt.state, host, history: messages, protection: (id) => (protectedIds.has(id) ? "protected" : undefined), protectedHelp: "", restore: (id) => restoreReport(rt.state.sessionID, id, "agent", messages), holders: holdersIn(rt, messages) });
    }
  }

  /** The prompt as the last call rendered it: what context pressure is about. */
  function renderedTokens(rt: SessionRuntime): number {
    const chars = sentTotal(rt);
    let saved = 0;
    for (const i of rt.decided) {
      const slots = rt.slots[i];
      if (slots) saved += (slots.output?.tokens ?? 0) + (slots.input?.tokens ?? 0);
    }
    return Math.max(0, tokensOf(chars) - saved);
  }

  /** The commit policy of a call: the host's pressure point, when lower, replaces the configured one. */
  function policyFor(pressure: number | undefined): CommitPolicy {
    const own = resolved.commit.pressureTokens;
    if (!(typeof pressure === "number" && pressure > 0) || (own > 0 && own <= pressure)) return resolved.commit;
    return { ...resolved.commit, pressureTokens: pressure };
  }

  /**
   * Decides this call: the graph (the walk carries nodes over), the runtime's caches, the phases and
   * the ids. It writes the runtime and the session state, never the copy: render comes after the
   * state is saved.
   */
  function decide(rt: SessionRuntime, messages: Message[], lastId: string | undefined, tool: boolean, now: number, policy: CommitPolicy, compaction: boolean, carried?: (i: number, part: Part) => void) {
    rt.lastCall = { count: messages.length, lastId };
    rt.failedHistory = undefined;
    rt.dirty = false;
    const graph = buildGraph(messages, rt.graph, { host, anchor: rt.state.introAt, anchor2: rt.state.sentUpTo, carried });
    const seenBefore = rt.processed;
    const rebuilt = rt.update(graph);
    rt.changedFrom = Infinity;
    // a history that does not continue the last one may have lost the newer view a supersede stands
    // for (a revert); not the copy the host's compaction summarises, which is the history's head only
    const lifted = rebuilt && !compaction ? liftReverted(rt) : [];
    if (lifted.length > 0) {
      rt.stale = true;
      rt.update(graph);
    }
    // the lifted parts and the parts restored since the last call are sent in full again: the cache
    // breaks at the first of them (the compaction's copy is not that call's prompt)
    const restored = compaction ? [] : (rt.state.restoredSent ?? []);
    for (const id of [...lifted, ...restored]) rt.changedFrom = Math.min(rt.changedFrom, graph.byId.get(id)?.index ?? Infinity);
    if (!compaction) delete rt.state.restoredSent;
    if (rt.replayManual) replayManualCalls(rt, messages);
    const tokens = policy.pressureTokens > 0 ? renderedTokens(rt) : 0;
    const taggedBefore = rt.tagged.length;
    const result = runPhases(rt, policy, tokens, now);
    rt.state.lastCallAt = now;
    if (result.pending > 0) rt.state.waiting = { parts: result.pending, tokens: result.pendingTokens };
    else delete rt.state.waiting;
    if (tool) {
      const idsFrom = deferIds ? updateIntroAnchor(rt.state, graph, config.idsFromTokens, () => tokensOf(charsFrom(graph, 0))) : 0;
      if (idsFrom < Infinity) assignIds(rt, rebuilt ? 0 : seenBefore, (n) => n.msgIndex >= idsFrom && idEligible(rt, n));
    }
    rt.state.calls++;
    rt.state.sentUpTo = lastId;
    return { graph, rebuilt, result, taggedBefore };
  }

  function transform(messages: Message[], options: TransformOptions = {}): void {
    if (!config.enabled || !Array.isArray(messages) || messages.length === 0) return;
    const undo: Undo = [];
    // ids exist for the prune tool: none where the agent has no such tool (a subagent)
    const tool = config.tool && options.tool !== false;
    const to: RenderTarget = { log: writeLog(undo), drops: new Map(), idTags: tags, ids: tool, tags: tool && !options.compaction, fresh: !rendered.has(messages) };
    try {
      // our note from an earlier pass over this same array
      if (deferIds && !to.fresh) stripIntro(messages, undo);
      const sessionID = messages.find((m) => m?.info?.sessionID)?.info.sessionID;
      if (!sessionID) return;
      const rt = runtime(sessionID);
      const lastId = messages[messages.length - 1]?.info?.id;
      if (!rt.dirty && rt.lastCall && rt.lastCall.count === messages.length && rt.lastCall.lastId === lastId && rt.state.sentUpTo === lastId) {
        // The same history again (a second hook pass, or our own output): re-render the
        // committed decisions only, so a repeat can neither commit nor shift anything.
        const copy = buildGraph(messages, undefined, { host, anchor: rt.state.introAt });
        renderRepeat(copy, rt.state.decisions, rt.graph, rt.view, to);
        applyDrops(to.drops, undo);
        if (deferIds && to.tags) renderIntro(messages, rt.state, undo, host, copy);
        rendered.add(messages);
        return;
      }
      const incremental = !rt.viewsStale && !rt.stale;
      const now = typeof options.now === "number" ? options.now : Date.now();
      // the walk renders carried-over nodes whose plan is unchanged (render.ts carriedRenderer);
      // its writes are undone last on a failure, and at once if the pass turns out to be a full one
      const walkLog = new WriteLog();
      undo.unshift(() => walkLog.undo());
      const carried = incremental ? carriedRenderer(rt.view, to, walkLog) : undefined;
      const { graph, rebuilt, result, taggedBefore } = decide(rt, messages, lastId, tool, now, policyFor(options.pressureTokens), options.compaction === true, carried);
      const state = rt.state;
      const nodes = graph.nodes;
      for (const i of rt.committedNow) rt.view.changed(nodes[i]); // their render plans are made again
      // a failed write throws before anything is rendered
      const foreign = persist(rt);
      const full = rebuilt || !incremental || foreign;
      if (full) walkLog.undo();
      if (foreign && !rebuilt && incremental) {
        // another process's decisions were merged into ours (in place): the nodes take them
        for (const n of nodes) {
          if (graph.byId.get(n.part.id) !== n) continue;
          const slots = (rt.slots[n.index] = decisionsOf(state.decisions, n.part));
          if (slots || rt.view.views[n.index]) rt.view.changed(n);
        }
      }
      // render: suffixes (where tags sit) of every message, or of those this call changed (new
      // parts, new decisions and tags, restored parts: a reasoning tag rides on a neighbour)
      if (full) updateAllSuffixes(nodes, rt.slots, rt.view);
      else {
        const from = [...rt.committedNow, ...rt.tagged.slice(taggedBefore), ...rt.touched];
        for (let i = graph.reused; i < nodes.length; i++) if (i === graph.reused || nodes[i].msgIndex !== nodes[i - 1].msgIndex) from.push(i);
        updateSuffixes(nodes, rt.slots, rt.view, from);
      }
      const walked = render(messages, graph, rt.slots, rt.view, to, full ? Pass.Full : Pass.Incremental);
      rt.touched = [];
      rt.viewsStale = false;
      rendered.add(messages);
      applyDrops(to.drops, undo);
      if (deferIds && to.tags) renderIntro(messages, rt.state, undo, host, graph);
      last.set(graph.sessionID, { ...result, rebuilt, walked, sessionID: graph.sessionID });
      scheduleTotals(rt, result.committed > 0 || foreign);
    } catch (e) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i](); // fail open: the copy goes out as it came
      // The request goes out unpruned rather than failing the user's turn; the runtime's caches
      // may be half-updated, so they are rebuilt on the next call.
      const rt = failed(messages);
      if (rt) {
        rt.stale = true;
        rt.lastCall = undefined;
        rt.failedHistory = messages;
      }
      onError(e, "transform");
    }
  }

  return {
    resolved,
    problems,
    config,
    transform,
    systemPrompt: () => (config.enabled && config.tool && !deferIds ? systemPrompt(host) : ""),
    explain(sessionID: string): ExplainEntry[] {
      // runtime() loads the state from disk: a new process (/acp stats after a restart) sees it too.
      const rt = runtime(sessionID);
      const out: ExplainEntry[] = [];
      for (const [partId, slots] of Object.entries(rt.state.decisions)) {
        const node = rt.graph?.byId.get(partId);
        for (const slot of ["output", "input"] as const) {
          const d = slots[slot];
          if (d) out.push({ partId, messageId: node?.message.info.id ?? "", rule: d.rule, action: d.action, tokensSaved: d.tokens, tool: node?.part.tool, slot });
        }
      }
      return out;
    },
    lastCall: (id) => last.get(id),
    waiting(sessionID) {
      const w = runtime(sessionID).state.waiting; // loaded from disk in a new process
      return w && typeof w.parts === "number" && w.parts > 0 ? { parts: w.parts, tokens: typeof w.tokens === "number" ? w.tokens : 0 } : undefined;
    },
    allTime(sessionID) {
      if (!options.stats) return undefined;
      recordPending();
      recordTotals(runtime(sessionID));
      return options.stats.totals();
    },
    state: (id) => runtime(id).state,
    restore: (sessionID, partId, by, history) => restoreReport(sessionID, partId, by, history).restored,
    restoreReport,
    why(sessionID, partId, history) {
      const rt = sessions.get(sessionID);
      const node = rt?.graph?.byId.get(partId);
      const slots = rt?.state.decisions[partId];
      if (!rt || !node) return history ? whyNotFrom(sessionID, partId, history) : undefined;
      if (!slots) return notPruned(rt, node);
      const decisions = Object.entries(slots).map(([slot, d]) => ({ slot, rule: d!.rule, action: d!.action, tokens: d!.tokens, call: d!.call, by: d!.by }));
      const rules = decisions.flatMap((d) => {
        const r = ruleSet.rules.find((x) => x.id === d.rule);
        if (!r) return [];
        const ctx = rt.ctxs[r.index];
        // a reduce rule that follows a supersede records the superseding part too: only a supersede rule has a `by` to explain
        const byNode = d.by && r.phase === "supersede" ? rt.graph.byId.get(d.by) : undefined;
        return [{
          id: r.id,
          description: r.spec.description,
          source: r.spec.source ? `${r.spec.source.file}:${r.spec.source.line}:${r.spec.source.col}` : undefined,
          key: r.key?.get(node, ctx),
          when: explainCondition(r.ast.when, node, ctx),
          by: byNode ? explainCondition(r.ast.by ?? r.ast.when, byNode, ctx) : undefined,
        }];
      });
      return { partId, tool: node.part.tool, decisions, rules };
    },
    sweep(sessionID, history, n) {
      const rt = runtime(sessionID);
      const graph = buildGraph(history, undefined, { host });
      const result = applySweep(rt.state, graph, n, protectionIn(rt, graph), holdersIn(rt, history));
      rt.dirty = true;
      persist(rt);
      return result;
    },
    manual(sessionID, request, history) {
      const rt = runtime(sessionID);
      const graph = buildGraph(history, undefined, { host });
      const protectedBy = protectionIn(rt, graph);
      const result = applyManual(request, {
        state: rt.state,
        host,
        history,
        graph,
        // static and time-dependent protection alike: protect rules hold for manual prunes too
        protection: (id) => {
          const by = protectedBy(id);
          return by && `by rule "${by.id}": ${by.spec.description}`;
        },
        protectedHelp: `protected tools: ${config.protectedTools.join(", ")}; protected files: ${config.protectedFiles.join(", ")} (change protectedTools / protectedFiles in acp.jsonc)`,
        restore: (id) => restoreReport(sessionID, id, "agent", history),
        holders: holdersIn(rt, history),
      });
      rt.dirty = true;
      persist(rt);
      return result;
    },
  };
}
