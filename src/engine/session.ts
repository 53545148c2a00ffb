// One session's incremental evaluator. Static rule results, supersede groups and rule
// candidates are built once per part and extended as the history grows; when the prefix
// changes (compaction, revert, edited history) everything is rebuilt from scratch.
import { type Graph, type PartNode } from "../graph/graph.js";
import { clearedByHost } from "../graph/prompt.js";
import type { HostProfile } from "../graph/host.js";
import type { Message } from "../graph/types.js";
import { idTags, type IdTags } from "./id-tags.js";
import type { FactContext } from "./facts.js";
import { promptTokensOf } from "./prompt-size.js";
import type { CompiledRule, CompiledRuleSet } from "./ruleset.js";
import { RenderState } from "./render-state.js";
import { releasePins } from "./pins.js";
import { decisionsOf, type DecisionSlots, type SessionState } from "./state.js";
import { leaves, type ConditionNode } from "../lang/condition.js";
import { inputFingerprint, sameJson } from "./key.js";
import { UseTracker } from "./use.js";
import { BackedOff, RerunIndex } from "./regret.js";
import { DecidedNow, ParkedWants, type SupersedeMark, type Wanted } from "./parked.js";
import { Sleepers } from "./sleepers.js";
import { Protection } from "./protection.js";
import { newerView, spareOf } from "./spares.js";

export type { SupersedeMark };

interface ConfigFacts {
  protectedTools: string[];
  protectedFiles: string[];
}

export class SessionRuntime {
  /** Nodes processed so far (a prefix of the graph), and the first node they were built for. */
  private seen = 0;
  private built?: PartNode;
  /** The decisions committed for each node, by position (the session state's records, shared). */
  slots: (DecisionSlots | undefined)[] = [];
  /** Render's views of the nodes (tags, suffixes, plans), by position; new whenever the caches are rebuilt. */
  view = new RenderState();
  /** Node indexes with committed decisions, and with id tags. */
  decided: number[] = [];
  tagged: number[] = [];
  idByPart = new Map<string, string>();
  /**
   * Node → the marks of the older parts it superseded (older views of the same thing; mark.node), for
   * commit's stale-over-fresh check. Keyed by the index of the first node of its part id (graph.byId),
   * as decisions are; the marks name the first node of theirs.
   */
  readonly olderViews = new Map<number, SupersedeMark[]>();
  /** When each part was last in use; only kept when a rule reads `idleTurns`. */
  private use?: UseTracker;
  private readonly tracksUse: boolean;
  /** Earlier calls of the same tool with the same input (regret.ts): re-runs of hidden outputs. */
  readonly reruns = new RerunIndex();
  /** The rules that back off in this session (regret.ts), recounted when regret events are added. */
  readonly backedOff = new BackedOff();
  /** Marks whose part has no committed output decision yet. */
  readonly pendingMarks = new Map<string, SupersedeMark>();
  /**
   * The pending marks the marks loop walks, in pendingMarks order: parked ones leave it (the loop
   * drops them, and those no longer pending) and come back when unparked (activeMarks()).
   */
  private active: SupersedeMark[] = [];
  private markSeq = 0;
  /** Per rule: node indexes whose static conditions hold (non-supersede phases), less the sleeping ones. */
  candidates: number[][] = [];
  /** Per age or reduce rule with a wake bound (wake.ts): its candidates waiting for time (sleepers.ts). */
  sleepers: (Sleepers | undefined)[] = [];
  /** The same, those that exist (a supersede mark wakes their candidates waiting for it: Sleepers.marked). */
  private sleeping: Sleepers[] = [];
  /**
   * Node index of a parked want (parked.ts) → the age and reduce rules (by index) whose candidate
   * lists it left: its output is wanted, so they skip it until it is unparked (walk-rules.ts).
   */
  readonly parkedOut = new Map<number, number[]>();

  /** A rule's candidates, the waiting ones included (node indexes, in no order). */
  allCandidates(ruleIndex: number): number[] {
    const out = [...this.candidates[ruleIndex], ...(this.sleepers[ruleIndex]?.nodes() ?? [])];
    for (const [i, ris] of this.parkedOut) if (ris.includes(ruleIndex)) out.push(i);
    return out;
  }
  /** sentPrefix[i]: characters sent for nodes[0..i) (sent-prefix.ts sentBetween); valid for the carried-over nodes. */
  sentPrefix: number[] = [];
  /** Per supersede rule: key (its group name) → its group (the newest `when` member, and the members not marked yet). */
  private groups: Map<string, Group>[] = [];
  /** Per supersede rule whose key holds a whole input: prefix → fingerprint → the groups of that bucket (groupOf). */
  private prints: Map<string, Map<number, PrintEntry[]>>[] = [];
  /** Long strings of keyed inputs, interned for group names (CompiledKey.group). */
  private strings = new Map<string, number>();
  /** Rules whose static conditions can hold for a part type and tool name (undefined: not a tool part), in rule order. */
  private byType = new Map<string, Map<string | undefined, CompiledRule[]>>();
  /** Per rule: the part types its `when` and its `by` require (a top-level partType equal/in), if any. */
  private readonly types: { when?: Set<string>; by?: Set<string> }[];
  /** Per rule: slot of its key template in the per-part key cache (-1: its key reads the rule's params). */
  private readonly keySlot: number[];
  private readonly keyVals: (string | undefined)[];
  private readonly keyPart: (PartNode | undefined)[];
  /** Parts superseded so far (first rule wins), by part id. */
  readonly marks = new Map<string, SupersedeMark>();
  /** Per rule index: rule-specific fact contexts (params differ per rule). */
  readonly ctxs: FactContext[];
  /** The host's id tags (HostProfile.idTag). */
  readonly idTags: IdTags;
  graph!: Graph;
  /** Shape of the last transformed history, to recognise a repeat of the same call. */
  lastCall?: { count: number; lastId?: string };
  /**
   * The last request's history when transform failed on it: it went out as it came, newer than the
   * graph (the call before's), so a restore without a history pins at its newest message (pins.ts pinAt).
   */
  failedHistory?: Message[];
  /** Another process's decisions were merged into state: rebuild the caches on the next call. */
  stale = false;
  /** The state was missing or unreadable: rebuild manual decisions from the history once. */
  replayManual = false;
  /** Set when a manual request, sweep or restore changed state since the last call: it unparks every blocked want. */
  get dirty(): boolean {
    return this.changed;
  }
  set dirty(v: boolean) {
    if (v) this.parked.clear();
    this.changed = v;
  }
  private changed = false;
  /** Blocked supersede wants carried from call to call without being evaluated again (parked.ts). */
  readonly parked = new ParkedWants<Wanted>();
  readonly protectedBy = new Protection();
  /** Per rule: cached patch verdicts by part id (see verdicts.ts candidateFor). */
  patches: Map<string, { patch: import("./actions/index.js").Patch; tokens: number } | null>[] = [];
  decidedNow = new DecidedNow();
  /** Node indexes whose decisions this call committed (rendered after the phases). */
  committedNow: number[] = [];
  /**
   * The first node this call shows differently from the last request for a reason of its own (a
   * decision lifted after a revert, reverted.ts, or a part restored since, SessionState.restoredSent):
   * the cached prefix breaks there anyway (commit.ts).
   */
  changedFrom = Infinity;
  /** Node indexes restored since the last call: their messages' tags are recomputed. */
  touched: number[] = [];
  /**
   * The caches were rebuilt outside a transform (a prune request or sweep builds its own graph):
   * the nodes' tag suffixes are not computed yet, so the next transform renders everything anew.
   */
  viewsStale = true;

  constructor(
    readonly rules: CompiledRuleSet,
    config: ConfigFacts,
    readonly state: SessionState,
    readonly host: HostProfile,
  ) {
    this.idTags = idTags(host.idTag);
    const slots = new Map<string, number>();
    this.keySlot = rules.rules.map((r) => {
      if (!r.key || /\{\s*params\b/.test(r.key.template)) return -1;
      let k = slots.get(r.key.template);
      if (k === undefined) slots.set(r.key.template, (k = slots.size));
      return k;
    });
    this.types = rules.rules.map((r) => ({ when: requiredTypes(r.ast.when), by: requiredTypes(r.ast.by) }));
    this.tracksUse = rules.rules.some((r) => readsUse(r.ast.when) || readsUse(r.ast.by));
    this.keyVals = new Array(slots.size).fill(undefined);
    this.keyPart = new Array(slots.size).fill(undefined);
    this.reset();
    this.ctxs = rules.rules.map((r) => ({
      config,
      params: r.params,
      isProtected: (n) => this.protectedBy.has(n.index),
      supersededRule: (n) => this.marks.get(n.part.id)?.rule.id,
      decidedRule: (n) => this.decidedNow.get(n.index) ?? this.committedRule(n),
      idleTurns: (n) => this.use?.idleTurns(n) ?? n.ageTurns,
      idleCalls: (n) => this.use?.idleCalls(n) ?? n.ageCalls,
      idleWorkCalls: (n) => this.use?.idleWorkCalls(n) ?? n.ageCalls,
      userNamedTurns: (n) => this.use?.userNamedTurns(n) ?? Infinity,
      useTurns: (n) => this.use?.useTurns(n) ?? 1,
      changeTurns: (n) => this.use?.changeTurns(n) ?? 0,
      hostDrops: (n) => this.host.dropsAtNextTurn(n.part),
      promptTokens: () => this.promptTokens(),
    }));
  }

  /** The `promptTokens` fact: measured once per call, and only when a rule reads it. */
  private promptSize?: { graph: Graph; tokens: number };
  private promptTokens(): number {
    if (this.promptSize?.graph !== this.graph) this.promptSize = { graph: this.graph, tokens: promptTokensOf(this.graph) };
    return this.promptSize.tokens;
  }

  /** The decisions committed for a node of the current graph. */
  slotsOf(n: PartNode): DecisionSlots | undefined {
    return this.slots[n.index];
  }

  private committedRule(n: PartNode): string | undefined {
    return this.slotsOf(n)?.output?.rule;
  }

  /**
   * The newer views of a part, nearest first: the part whose olderViews hold the part's mark (the
   * newer part that superseded it, where the rule counts it as a view of the same thing), then that
   * part's newer view, and so on. olderViews is the relation commit keeps "never stale over fresh"
   * by (a newer view is pruned only with its older views), and each part has at most one mark, so
   * this is the chain of parts that must be in full while this one is.
   */
  newerViews(partId: string): PartNode[] {
    const out: PartNode[] = [];
    const seen = new Set<string>([partId]);
    for (let mark = this.marks.get(partId); mark !== undefined; mark = this.marks.get(mark.byNode.part.id)) {
      const newer = mark.byNode;
      if (seen.has(newer.part.id) || !this.olderViews.get(newer.index)?.includes(mark)) break;
      seen.add(newer.part.id);
      out.push(newer);
    }
    return out;
  }

  /**
   * The older views of node `index` (olderViews) as the prompt shows them: one the host cleared
   * shows only its placeholder, so the views older than it stand in its place (a search, its
   * compacted re-run, and a third run: the first is an older view of the third).
   */
  olderViewsPast(index: number): readonly SupersedeMark[] {
    const views = this.olderViews.get(index);
    if (views === undefined) return NO_MARKS;
    if (!views.some((m) => clearedByHost(m.node.part) && !this.slots[m.node.index]?.output)) return views;
    const out: SupersedeMark[] = [];
    const seen = new Set<number>([index]);
    const walk = [...views].reverse();
    while (walk.length > 0) {
      const m = walk.pop()!;
      const o = m.node;
      if (seen.has(o.index)) continue;
      seen.add(o.index);
      if (!clearedByHost(o.part) || this.slots[o.index]?.output) out.push(m);
      else for (const older of [...(this.olderViews.get(o.index) ?? [])].reverse()) walk.push(older);
    }
    return out;
  }

  /** The newer view of a part that olderViewsPast lists it under: the part that superseded it, past those the host cleared. */
  newerViewPast(partId: string): PartNode | undefined {
    let newer = this.marks.get(partId)?.byNode;
    for (let hops = 0; newer !== undefined && clearedByHost(newer.part) && !this.slots[newer.index]?.output && hops < this.graph.nodes.length; hops++)
      newer = this.marks.get(newer.part.id)?.byNode;
    return newer;
  }

  /** The marks list the marks loop walks (and compacts), with the marks unparked since the last call back in their place. */
  activeMarks(): SupersedeMark[] {
    const back = this.parked.released;
    if (back.length === 0) return this.active;
    const marks = back.map((w) => w.mark).filter((m) => m !== undefined);
    marks.sort((a, b) => a.seq - b.seq);
    back.length = 0;
    let n = 0;
    for (const m of marks) if (n === 0 || marks[n - 1] !== m) marks[n++] = m; // unparked twice
    marks.length = n;
    const out: SupersedeMark[] = [];
    let j = 0;
    for (const m of this.active) {
      while (j < marks.length && marks[j].seq < m.seq) out.push(marks[j++]);
      if (j < marks.length && marks[j] === m) j++; // still listed: the loop had not dropped it yet
      out.push(m);
    }
    while (j < marks.length) out.push(marks[j++]);
    return (this.active = out);
  }

  /**
   * Set while update() runs on a session without any decision: attach then skips the lookup of
   * every part id in the record (a property lookup by a fresh string costs its interning), except
   * for the names the record inherits.
   */
  private inherited?: Set<string | symbol>;

  /** Brings the caches up to date with `graph`; returns true when they were rebuilt. */
  update(graph: Graph): boolean {
    const prevCount = this.graph === undefined ? 0 : this.seen;
    this.graph = graph;
    const nodes = graph.nodes;
    // graph.reused leading nodes are the previous call's, unchanged; anything else is a new history.
    const rebuilt = this.stale || graph.reused < prevCount || this.built !== graph.nodes[0];
    this.stale = false;
    if (rebuilt) this.reset();
    else if (this.sentPrefix.length > graph.reused + 1) this.sentPrefix.length = graph.reused + 1;
    this.inherited = nodes.length - this.seen > 64 && isEmptyRecord(this.state.decisions) ? new Set(Reflect.ownKeys(Object.prototype)) : undefined;
    try {
      for (let i = this.seen; i < nodes.length; i++) this.process(nodes[i]);
    } finally {
      this.inherited = undefined;
    }
    this.seen = nodes.length;
    this.built = nodes[0];
    this.view.reserve(nodes.length);
    releasePins(this);
    return rebuilt;
  }

  /** How many leading nodes of the current graph have been processed. */
  get processed(): number {
    return this.seen;
  }

  /**
   * Decisions and the id tag of a part, kept by its position (render and phases read them there),
   * and whether its text quotes ids (echoes are stripped from every assistant text). A part that
   * shares an earlier part's id gets neither decisions nor a tag: they belong to the first part.
   * (Histories may repeat part ids; OpenCode's do not.)
   */
  attach(n: PartNode): void {
    const p = n.part;
    const partId = p.id;
    const first = this.graph.byId.get(partId) === n;
    const slots = !first || (this.inherited && !this.inherited.has(partId)) ? undefined : decisionsOf(this.state.decisions, p);
    this.slots[n.index] = slots;
    if (slots) this.decided.push(n.index);
    let id = first ? this.idByPart.get(partId) : undefined;
    // an id names a part of one type (its first letter): a part of another type that shares the
    // id of a part cut off since (a history may repeat ids) does not show it. Not the part's size:
    // an output the host compacts later keeps its tag (the cached prefix stays the same).
    if (id !== undefined && ID_TYPES[id[0]] !== p.type) id = undefined;
    // ...nor does a tool call other than the one it was given to (the call ids differ)
    const call = id === undefined ? undefined : this.state.idCalls?.[id];
    if (call !== undefined && typeof p.callID === "string" && call !== p.callID) id = undefined;
    const tag = id === undefined ? undefined : this.idTags.make(id);
    if (tag) this.tagged.push(n.index);
    const echo = p.type === "text" && n.message.info?.role === "assistant" && typeof p.text === "string" && p.text.includes(this.idTags.marker);
    if (slots || tag || echo) {
      const v = this.view.of(n);
      v.tag = tag;
      v.echo = echo;
    }
  }

  private reset() {
    this.viewsStale = true;
    this.seen = 0;
    this.built = undefined;
    this.decided = [];
    this.slots = [];
    this.view = new RenderState();
    this.tagged = [];
    this.idByPart = new Map(Object.entries(this.state.ids ?? {}).map(([id, partId]) => [partId, id]));
    this.candidates = this.rules.rules.map(() => []);
    this.sleepers = this.rules.rules.map((r) => (r.wake && (r.phase === "age" || r.phase === "reduce") ? new Sleepers() : undefined));
    this.sleeping = this.sleepers.filter((s) => s !== undefined);
    this.sentPrefix = [];
    this.groups = this.rules.rules.map(() => new Map());
    this.prints = this.rules.rules.map(() => new Map());
    this.strings = new Map();
    this.marks.clear();
    this.use = this.tracksUse ? new UseTracker() : undefined;
    this.olderViews.clear();
    this.reruns.clear();
    this.backedOff.forget();
    this.pendingMarks.clear();
    this.parked.clear();
    this.parked.released.length = 0;
    this.parked.freed.length = 0;
    this.parkedOut.clear();
    this.active = [];
    this.patches = [];
    this.protectedBy.clear();
  }

  /** The rules that can apply to a part of this type and tool (undefined: a part that is not a tool call). */
  private rulesFor(type: string, tool: string | undefined): CompiledRule[] {
    let byTool = this.byType.get(type);
    if (!byTool) {
      if (this.byType.size > 1000) this.byType.clear(); // odd histories: types and tool names are data
      this.byType.set(type, (byTool = new Map()));
    }
    let list = byTool.get(tool);
    if (!list) {
      // Dispatch on a top-level `tool` / `partType` equal|in of `when` (and of a supersede rule's
      // `by`): a rule left out here would evaluate both to false on this part, so skipping it
      // changes nothing.
      const admits = (c: { tools?: Set<string> } | undefined, types: Set<string> | undefined) =>
        c !== undefined && (!c.tools || (tool !== undefined && c.tools.has(tool))) && (!types || types.has(type));
      list = this.rules.rules.filter((r) => admits(r.staticWhen, this.types[r.index].when) || (r.phase === "supersede" && (r.by ? admits(r.by, this.types[r.index].by) : false)));
      if (byTool.size > 1000) byTool.clear();
      byTool.set(tool, list);
    }
    return list;
  }

  /** The group name of a rule's supersede key for a part; rules sharing a template compute it once per part. */
  private keyOf(r: CompiledRule, n: PartNode, ctx: FactContext): string | undefined {
    const k = this.keySlot[r.index];
    if (k < 0) return r.key!.group(n, ctx, this.strings);
    if (this.keyPart[k] !== n) {
      this.keyVals[k] = r.key!.group(n, ctx, this.strings);
      this.keyPart[k] = n;
    }
    return this.keyVals[k];
  }

  /**
   * The group of `n`'s key under rule `r` (created empty when `create`); undefined when the part
   * has no key, or no group and `create` is false.
   */
  private groupOf(r: CompiledRule, n: PartNode, ctx: FactContext, create: boolean): Group | undefined {
    const key = r.key!;
    if (key.input === undefined) {
      const name = this.keyOf(r, n, ctx);
      if (name === undefined) return undefined;
      const groups = this.groups[r.index];
      let g = groups.get(name);
      if (g === undefined && create) groups.set(name, (g = { newest: n.index, open: [] }));
      return g;
    }
    // Keys holding a whole input: parts are bucketed by prefix and fingerprint, and full keys are
    // built only to tell apart the parts of a bucket (rarely more than identical calls). A prefix
    // with "{" may end anywhere in such a key (key.ts groupOfInput): those share one bucket.
    let prefix = key.prefix!(n, ctx);
    if (prefix === undefined) return undefined;
    const input = key.input!(n, ctx);
    let print = inputFingerprint(input, 0) ?? 0;
    const byInput = !prefix.includes("{");
    if (!byInput) [prefix, print] = ["{", 0];
    const prints = this.prints[r.index];
    let byPrint = prints.get(prefix);
    const bucket = byPrint?.get(print);
    if (bucket === undefined) {
      if (!create) return undefined;
      if (!byPrint) prints.set(prefix, (byPrint = new Map()));
      const g = { newest: n.index, open: [] };
      byPrint.set(print, [{ rep: n.index, name: undefined, group: g }]);
      return g;
    }
    // the same prefix: the same group when the inputs write the same JSON (key.ts sameJson)
    const nodes = this.graph.nodes;
    let name: string | undefined;
    for (const e of bucket) {
      const same = byInput ? sameJson(input, key.input!(nodes[e.rep], ctx), 0) : undefined;
      if (same === true) return e.group;
      if (same === false) continue;
      name ??= this.keyOf(r, n, ctx);
      if (name === undefined) return undefined;
      e.name ??= key.group(nodes[e.rep], ctx, this.strings);
      if (e.name === name) return e.group;
    }
    if (!create) return undefined;
    const g = { newest: n.index, open: [] };
    bucket.push({ rep: n.index, name, group: g });
    return g;
  }

  private process(n: PartNode) {
    this.attach(n);
    this.use?.see(n);
    this.reruns.see(n, this.graph.nodes);
    const type = n.part.type;
    const tool = type === "tool" ? n.part.tool : undefined;
    const rules = typeof type === "string" && (typeof tool === "string" || tool === undefined) ? this.rulesFor(type, tool) : this.rules.rules;
    for (let ri = 0; ri < rules.length; ri++) {
      const r = rules[ri];
      const tools = r.staticWhen.tools;
      const ctx = this.ctxs[r.index];
      // compile.ts holdsOn, written out: this loop runs for every rule on every new part, and the call measured 1.04-1.06 x here (bench:ab)
      const whenOk = (!tools || (tool !== undefined && tools.has(tool))) && r.staticWhen.test(n, ctx);
      if (r.phase === "protect" && !r.dynamicWhen) {
        if (whenOk && !this.protectedBy.permanent.has(n.index)) this.protectedBy.permanent.set(n.index, r);
        continue;
      }
      if (r.phase !== "supersede") {
        if (whenOk) this.candidates[r.index].push(n.index);
        continue;
      }
      const byOk = r.by ? (!r.by.tools || (tool !== undefined && r.by.tools.has(tool))) && r.by.test(n, ctx) : whenOk;
      if (!whenOk && !byOk) continue;
      const group = this.groupOf(r, n, ctx, whenOk);
      if (group === undefined) continue;
      if (byOk && group.open.length > 0) this.supersedeOlder(r, n, group, whenOk);
      if (whenOk) {
        group.open.push(n.index);
        group.newest = n.index;
      }
    }
    this.keyPart.fill(undefined); // no reference to the part's node stays behind
  }

  /** Marks the older members of `group` that `n` supersedes; marked members leave the group's open list. */
  private supersedeOlder(r: CompiledRule, n: PartNode, group: Group, newerIsMember: boolean) {
    const nodes = this.graph.nodes;
    const newer = newerView(r, n, newerIsMember); // once for the whole group
    const open = group.open;
    let kept = 0;
    for (let g = 0; g < open.length; g++) {
      const i = open[g];
      const older = nodes[i];
      if (this.marks.has(older.part.id)) continue; // marked for good (by any rule): never looked at again
      if (spareOf(r, older, i === group.newest, newer) !== undefined) {
        open[kept++] = i;
        continue;
      }
      const byId = this.graph.byId;
      const first = byId.get(older.part.id)!;
      const byNode = byId.get(n.part.id)!;
      const mark = { rule: r, by: n.part.id, node: first, byNode, seq: this.markSeq++ };
      this.marks.set(older.part.id, mark);
      for (const s of this.sleeping) s.marked(older.part.id);
      // an acknowledgement is no view of the subject: nothing stale is left in full beside the newer view
      if (r.options.views !== false) {
        const views = this.olderViews.get(byNode.index);
        if (views) views.push(mark);
        else this.olderViews.set(byNode.index, [mark]);
      }
      if (!this.slots[i]?.output) {
        this.pendingMarks.set(older.part.id, mark);
        this.active.push(mark);
      }
    }
    open.length = kept;
  }
}

/** Facts that read when parts were last in use (engine/use.ts): tracked only when a rule reads one. */
const USE_FACTS = new Set(["idleTurns", "idleCalls", "idleWorkCalls", "userNamedTurns", "useTurns", "changeTurns"]);

/** A condition reads a use fact: as a leaf's fact or as a fact its value refers to. */
function readsUse(cond: ConditionNode | undefined): boolean {
  return cond !== undefined && leaves(cond).some((l) => USE_FACTS.has(l.fact?.fact ?? "") || USE_FACTS.has(l.ref?.fact ?? ""));
}

/** The part type each id kind names (ids.ts idKind). */
const ID_TYPES: Record<string, string> = { t: "tool", m: "text", r: "reasoning" };

/** Part types a condition requires: a top-level `{fact: partType, operator: equal|in}` with literal strings. */
function requiredTypes(cond: ConditionNode | undefined): Set<string> | undefined {
  for (const leaf of cond?.kind === "all" ? cond.children : cond ? [cond] : []) {
    if (leaf.kind !== "leaf" || leaf.fact?.fact !== "partType" || leaf.path?.text) continue;
    if (leaf.operator === "equal" && typeof leaf.value === "string") return new Set([leaf.value]);
    if (leaf.operator === "in" && Array.isArray(leaf.value) && leaf.value.every((x) => typeof x === "string")) return new Set(leaf.value as string[]);
  }
  return undefined;
}

/** A plain object without own properties (an empty decision record). */
function isEmptyRecord(o: object): boolean {
  if (Object.getPrototypeOf(o) !== Object.prototype) return false;
  for (const _ in o) return false;
  return Reflect.ownKeys(o).length === 0;
}

/** A supersede group: members oldest first; only those no rule has marked yet are kept. */
interface Group {
  newest: number;
  open: number[];
}

/** A group in a fingerprint bucket: its first part, and its full key once a second part needed it. */
interface PrintEntry {
  rep: number;
  name: string | undefined;
  group: Group;
}

const NO_MARKS: readonly SupersedeMark[] = [];
