// One session's incremental evaluator. Static rule results, supersede groups and rule
// candidates are built once per part and extended as the history grows; when the prefix
// changes (compaction, revert, edited history) everything is rebuilt from scratch.
import { type Graph, type PartNode } from "../graph/graph.js";
import type { FactContext } from "./facts.js";
import type { CompiledRule, CompiledRuleSet } from "./ruleset.js";
import type { SessionState } from "./state.js";
import { getPath } from "./compile.js";

export interface SupersedeMark {
  rule: CompiledRule;
  by: string; // part id of the superseding part
}

interface ConfigFacts {
  protectedTools: string[];
  protectedFiles: string[];
}

const statusSig = (n: PartNode) => `${n.part.state?.status ?? ""}${n.part.state?.time?.compacted ? "c" : ""}`;

export class SessionRuntime {
  /** Part ids and status signatures already processed, in prompt order. */
  private seenIds: string[] = [];
  private seenSig: string[] = [];
  /** Per rule: node indexes whose static conditions hold (non-supersede phases). */
  candidates: number[][] = [];
  /** Per supersede rule: key → node indexes of `when` members, oldest first. */
  private groups: Map<string, number[]>[] = [];
  /** Parts superseded so far (first rule wins), by part id. */
  readonly marks = new Map<string, SupersedeMark>();
  /** Per rule index: rule-specific fact contexts (params differ per rule). */
  readonly ctxs: FactContext[];
  graph!: Graph;
  /** Shape of the last transformed history, to recognise a repeat of the same call. */
  lastCall?: { count: number; lastId?: string };
  /** Set when a manual request, sweep or restore changed state since the last call. */
  dirty = false;
  protectedBy = new Map<number, CompiledRule>();
  supersededNow = new Map<number, CompiledRule>();
  decidedNow = new Map<number, string>();

  constructor(
    readonly rules: CompiledRuleSet,
    config: ConfigFacts,
    readonly state: SessionState,
  ) {
    this.reset();
    this.ctxs = rules.rules.map((r) => ({
      config,
      params: r.params,
      isProtected: (n) => this.protectedBy.has(n.index),
      supersededRule: (n) => this.supersededNow.get(n.index)?.id,
      decidedRule: (n) => this.decidedNow.get(n.index) ?? this.committedRule(n),
    }));
  }

  private committedRule(n: PartNode): string | undefined {
    return this.state.decisions[n.part.id]?.output?.rule;
  }

  /** Brings the caches up to date with `graph`; returns true when they were rebuilt. */
  update(graph: Graph): boolean {
    this.graph = graph;
    const nodes = graph.nodes;
    let rebuilt = false;
    let same = this.seenIds.length <= nodes.length;
    for (let i = 0; same && i < this.seenIds.length; i++) same = nodes[i].part.id === this.seenIds[i] && statusSig(nodes[i]) === this.seenSig[i];
    if (!same) {
      this.reset();
      rebuilt = true;
    }
    for (let i = this.seenIds.length; i < nodes.length; i++) this.process(nodes[i]);
    return rebuilt;
  }

  private reset() {
    this.seenIds = [];
    this.seenSig = [];
    this.candidates = this.rules.rules.map(() => []);
    this.groups = this.rules.rules.map(() => new Map());
    this.marks.clear();
  }

  private process(n: PartNode) {
    this.seenIds.push(n.part.id);
    this.seenSig.push(statusSig(n));
    const tool = n.part.type === "tool" ? n.part.tool : undefined;
    for (const r of this.rules.rules) {
      const tools = r.staticWhen.tools;
      const ctx = this.ctxs[r.index];
      const whenOk = (!tools || (tool !== undefined && tools.has(tool))) && r.staticWhen.test(n, ctx);
      if (r.phase !== "supersede") {
        if (whenOk) this.candidates[r.index].push(n.index);
        continue;
      }
      const byOk = r.by ? r.by.test(n, ctx) : whenOk;
      if (!whenOk && !byOk) continue;
      const key = r.key!.get(n, ctx);
      if (key === undefined) continue;
      const group = this.groups[r.index].get(key);
      if (byOk && group) this.supersedeOlder(r, n, group, whenOk);
      if (whenOk) {
        if (group) group.push(n.index);
        else this.groups[r.index].set(key, [n.index]);
      }
    }
  }

  private supersedeOlder(r: CompiledRule, n: PartNode, group: number[], newerIsMember: boolean) {
    const nodes = this.graph.nodes;
    const keepNewest = r.options.keepNewest === true && !newerIsMember;
    const last = keepNewest ? group.length - 1 : group.length;
    for (let g = 0; g < last; g++) {
      const older = nodes[group[g]];
      if (this.marks.has(older.part.id)) continue;
      if (r.range && !covers(n, older, r.range)) continue;
      this.marks.set(older.part.id, { rule: r, by: n.part.id });
    }
  }
}

/** A newer view covers an older one when its line range contains the older range (no range = whole file). */
function covers(newer: PartNode, older: PartNode, range: { offset: string; limit: string }): boolean {
  const span = (n: PartNode): [number, number] | undefined => {
    const input = n.part.state?.input ?? {};
    const off = getPath(input, [range.offset]);
    const lim = getPath(input, [range.limit]);
    if (off === undefined && lim === undefined) return undefined;
    const start = typeof off === "number" ? off : 0;
    return [start, typeof lim === "number" ? start + lim : Infinity];
  };
  const a = span(newer);
  if (!a) return true;
  const b = span(older);
  if (!b) return a[0] <= 0 && a[1] === Infinity;
  return a[0] <= b[0] && a[1] >= b[1];
}
