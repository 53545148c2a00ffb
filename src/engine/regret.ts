// The live regret signal: how often a prune was undone or worked around. A pruned part restored
// by the agent (context_prune restore) or the user (/acp restore), or a tool call re-run with the
// same tool and input while the earlier call's output was hidden, is one regret event of the rule
// that hid it, unless a call in between changed what it looks at (its file, or anything for a call
// that names no file: tests run again after an edit are not a work-around). Events live in the
// session state (state.ts), so a restart or another process keeps them. A rule with `regretLimit`
// events in a session backs off there: it decides no new parts (what it decided before stays, as
// every decision does, unless restored).
import type { PartNode } from "../graph/graph.js";
import { inputFingerprint, sameJson } from "./key.js";
import { addRegret, type DecisionSlots, type RegretKind, type SessionState } from "./state.js";
import { changedFiles, subjectFiles } from "./use.js";

/** The model's and the user's own prunes: counted, never backed off (they asked for them). */
export const MANUAL_RULE = "manual";

/**
 * Earlier calls of the same tool with the same input, per part: fingerprint of the tool name and
 * input → the node index of the one call seen with it, or of every call (oldest first) once there
 * are several. Filled as the runtime processes each new part; cleared on a rebuild.
 */
export class RerunIndex {
  private byPrint = new Map<number, number | number[]>();
  /** Node index → the node index of the newest earlier call with the same tool and input. */
  private previousCall = new Map<number, number>();

  clear(): void {
    this.byPrint.clear();
    this.previousCall.clear();
  }

  see(n: PartNode, nodes: PartNode[]): void {
    const p = n.part;
    if (p.type !== "tool" || typeof p.tool !== "string") return;
    const input = p.state?.input;
    if (!input || typeof input !== "object") return;
    const print = inputFingerprint([p.tool, input], 0);
    if (print === undefined) return;
    const seen = this.byPrint.get(print);
    if (seen === undefined) {
      this.byPrint.set(print, n.index);
      return;
    }
    const bucket = typeof seen === "number" ? [seen] : seen;
    for (let k = bucket.length - 1; k >= 0; k--) {
      const other = nodes[bucket[k]]?.part;
      if (other?.tool === p.tool && sameInput(input, other.state?.input)) {
        this.previousCall.set(n.index, bucket[k]);
        break;
      }
    }
    bucket.push(n.index);
    if (bucket !== seen) this.byPrint.set(print, bucket);
  }

  previous(index: number): number | undefined {
    return this.previousCall.get(index);
  }
}

function sameInput(a: unknown, b: unknown): boolean {
  const same = sameJson(a, b, 0);
  return same === undefined ? JSON.stringify(a) === JSON.stringify(b) : same;
}

/**
 * Re-runs among the parts the model has not been sent yet (its answer to the last request): a tool
 * call whose newest earlier twin (same tool, same input) completed and had its output hidden by a
 * committed decision. A supersede decision names a newer part that stands in for the hidden one
 * (`by`: a newer view of the same thing, such as a write after a read); its re-run is not counted.
 * `sentIdx`: the last message of the previous request. Returns the events added.
 */
export function noteReruns(state: SessionState, nodes: PartNode[], slots: readonly (DecisionSlots | undefined)[], index: RerunIndex, sentIdx: number): number {
  let added = 0;
  for (let i = nodes.length - 1; i >= 0 && nodes[i].msgIndex > sentIdx; i--) {
    const prev = index.previous(i);
    if (prev === undefined) continue;
    const p = nodes[prev];
    const d = slots[prev]?.output;
    if (!d || d.by !== undefined || p.part.state?.status !== "completed") continue;
    // a re-run after a change to what it looks at (the tests run again after an edit) has its own reason
    if (changedBetween(nodes, prev, i, subjectFiles(nodes[i].part.state?.input))) continue;
    if (addRegret(state, `rerun:${nodes[i].part.id}`, { rule: d.rule, kind: "rerun", part: p.part.id })) added++;
  }
  return added;
}

/**
 * Did a call between nodes `from` and `to` change what a re-run looks at: a file of `files`, or,
 * when it names none (a test command sees every file), anything?
 */
function changedBetween(nodes: PartNode[], from: number, to: number, files: string[]): boolean {
  for (let j = from + 1; j < to; j++) {
    const changed = changedFiles(nodes[j].part);
    if (changed !== undefined && (files.length === 0 || changed.some((f) => files.includes(f)))) return true;
  }
  return false;
}

/** A restore of a pruned part: one event per rule that had decided it (the agent's or user's own prune: "manual"). */
export function noteRestore(state: SessionState, partId: string, by: "agent" | "user"): void {
  const slots = state.decisions[partId];
  const rules = new Map<string, number>();
  for (const d of [slots?.output, slots?.input]) if (d && !rules.has(d.rule)) rules.set(d.rule, d.call);
  // asked for but not applied yet: the manual entry is what the restore undoes
  if (rules.size === 0 && state.manual?.[partId]) rules.set(MANUAL_RULE, state.calls);
  for (const [rule, call] of rules) addRegret(state, `${by}:${partId}:${call}:${rule}`, { rule, kind: by, part: partId });
}

export interface RegretCounts {
  agent: number;
  user: number;
  rerun: number;
}

export const regretTotal = (c: RegretCounts) => c.agent + c.user + c.rerun;

/** Regret events per rule. */
export function regretByRule(state: SessionState): Map<string, RegretCounts> {
  const out = new Map<string, RegretCounts>();
  for (const e of Object.values(state.regret ?? {})) {
    if (!e || typeof e.rule !== "string" || !KINDS.includes(e.kind)) continue;
    let c = out.get(e.rule);
    if (!c) out.set(e.rule, (c = { agent: 0, user: 0, rerun: 0 }));
    c[e.kind]++;
  }
  return out;
}

const KINDS: readonly RegretKind[] = ["agent", "user", "rerun"];

/** Rules that back off in this session: `limit` regret events or more (0: never). Manual prunes never back off. */
export function backedOffRules(state: SessionState, limit: number): Set<string> {
  const out = new Set<string>();
  if (!(limit > 0) || !state.regret) return out;
  for (const [rule, c] of regretByRule(state)) if (rule !== MANUAL_RULE && regretTotal(c) >= limit) out.add(rule);
  return out;
}

/**
 * backedOffRules of a session, kept between calls: counting the events walks every one of them, and
 * they change only when one is added (noteReruns, a restore: the runtime calls forget) or the record
 * is replaced (a state loaded or merged: the runtime rebuilds, and forgets).
 */
export class BackedOff {
  private memo?: { regret: object | undefined; limit: number; rules: Set<string> };

  /** The rules that back off (read only). */
  rules(state: SessionState, limit: number): ReadonlySet<string> {
    const m = this.memo;
    if (m !== undefined && m.regret === state.regret && m.limit === limit) return m.rules;
    const rules = backedOffRules(state, limit);
    this.memo = { regret: state.regret, limit, rules };
    return rules;
  }

  forget(): void {
    this.memo = undefined;
  }
}
