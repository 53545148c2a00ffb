// One call of the phases (phases.ts runPhases): what the walks and commit share, set up as protect,
// regret and the parked wants from the last call leave it. Made anew on every call; what lasts
// between calls is the runtime's.
import type { Graph, PartNode } from "../graph/graph.js";
import { lastUserIndex } from "../graph/prompt.js";
import type { CommitPolicy } from "../rules/types.js";
import type { Candidate } from "./candidate.js";
import { untouchable } from "./in-full.js";
import { DecidedNow, parking, type Decider, type ParkedWants, type SupersedeMark, type Wanted } from "./parked.js";
import { noteReruns } from "./regret.js";
import { sentMessageIndex } from "./sent-prefix.js";
import type { SessionRuntime } from "./session.js";
import type { DecisionSlots, SessionState } from "./state.js";

/** The model's own requests: applied on the call after it asked, wherever they are. */
export const MANUAL: Decider = { id: "manual", action: { name: "manual" } };

export interface CallResult {
  committed: number;
  pending: number;
  /** Parts whose decisions wait for a later call (their slot: output or input). */
  pendingParts: { partId: string; slot: "output" | "input" }[];
  pendingTokens: number;
  /** Blocked wants carried to the next call without being evaluated again (parked.ts). */
  parked: number;
  /** What the age and reduce rules leave out of their walks after this call: candidates waiting for time or for a supersede mark, and parts behind a parked want (sleepers.ts). */
  waiting: number;
  rebuilt: boolean;
  /** Carried-over nodes the graph walk rendered, which the render pass then skipped (render.ts carriedRenderer). */
  walked: number;
}

/** The protect phase alone: the time-dependent protection of the runtime's current graph. */
export function evaluateProtection(rt: SessionRuntime): void {
  rt.protectedBy.resetDynamic();
  const nodes = rt.graph.nodes;
  for (const r of rt.rules.byPhase.protect) {
    if (!r.dynamicWhen) continue; // static protection was settled when the part was processed
    for (const i of rt.candidates[r.index]) if (r.dynamicWhen(nodes[i], rt.ctxs[r.index])) rt.protectedBy.setDynamic(i, r);
  }
}

/** A want as commit found it, before settle moved, blocked or marked it. */
export function unsettled(w: Wanted): void {
  w.moved = w.blocked = w.blocker = w.mayRepay = w.insist = undefined;
}

/** What the walks and commit of one call share; its constructor runs protect and regret, and takes the parked wants in. */
export class PhaseCall {
  readonly graph: Graph;
  readonly state: SessionState;
  readonly nodes: PartNode[];
  readonly slotsOf: (DecisionSlots | undefined)[];
  /** The previous call's prompt ended at this message. */
  readonly sentIdx: number;
  /** Rules that sit out this call's phases after regret (their earlier decisions stay). */
  readonly backedOff: ReadonlySet<string>;
  readonly parked: ParkedWants<Wanted>;
  /** A baseline: one batch for everything, blind to the cache. */
  readonly plain: boolean;
  /** Blocked wants are parked for the next calls (parked.ts). */
  readonly parks: boolean;
  /** The wants of this call, in walk order. */
  readonly wanted: Wanted[] = [];
  /** Parked wants whose blocker got wanted on this call: commit takes them in again, in their place. */
  readonly woken = new Map<number, Wanted>();
  private lastUserSent: number | undefined;

  constructor(
    readonly rt: SessionRuntime,
    readonly policy: CommitPolicy,
    readonly promptTokens: number,
    readonly now: number,
  ) {
    const { graph, state } = rt;
    this.graph = graph;
    this.state = state;
    const nodes = (this.nodes = graph.nodes);
    rt.decidedNow = new DecidedNow();
    this.slotsOf = rt.slots;

    evaluateProtection(rt);

    // regret: the model's answer to the last request re-ran calls whose output it had hidden; a rule
    // with regretLimit events in this session decides no new parts (its earlier decisions stay)
    const sentIdx = (this.sentIdx = sentMessageIndex(graph, state)); // the previous call's prompt ended at this message
    if (noteReruns(state, nodes, rt.slots, rt.reruns, sentIdx) > 0) rt.backedOff.forget();
    const backedOff = (this.backedOff = rt.backedOff.rules(state, policy.regretLimit ?? 0));

    // Blocked wants carried from the last call (parked.ts) stand as wanted again, unless their part is
    // protected on this call or their rule backed off: then they are evaluated as any other.
    const parked = (this.parked = rt.parked);
    const plain = (this.plain = policy.plainBatch === true); // a baseline: one batch for everything, blind to the cache
    const parks = (this.parks = !plain && parking.on);
    if (!parks) parked.clear();
    // a view that stops being protected may let a parked chain go, whether it is the blocker or a
    // view further down (directly or through a forced view): evaluate them all again
    if (rt.protectedBy.endedSinceCheck() && parked.size > 0) parked.clear();
    if (parked.size > 0) {
      for (const i of [...rt.protectedBy.dynamic()]) if (parked.has(i)) parked.unpark(i);
      if (backedOff.size > 0) for (const i of parked.ofRules(backedOff)) parked.unpark(i);
      rt.decidedNow = new DecidedNow(parked.snapshot());
    }
  }

  /** Is `n`'s slot decided (decisions are sticky)? */
  taken(n: PartNode, slot: "output" | "input"): boolean {
    return (slot === "output" ? this.slotsOf[n.index]?.output : this.slotsOf[n.index]?.input) !== undefined;
  }

  /** The last user message the provider receives any content of (prompt.ts), once per call. */
  readonly providerLastUser = (): number => (this.lastUserSent ??= lastUserIndex(this.graph.messages, this.rt.host));

  /**
   * Is a decision on `n` free on this call: the provider has not been sent it yet, or receives
   * nothing of it now (reasoning of an earlier turn, which the host leaves out once a later user
   * message exists)? Such a decision changes no cached prefix, so it neither waits nor places the
   * first change.
   */
  unseen(n: PartNode): boolean {
    if (n.msgIndex > this.sentIdx) return true;
    if (n.part.type !== "reasoning" || !this.rt.host.dropsAtNextTurn(n.part)) return false;
    return n.msgIndex < this.providerLastUser();
  }

  want(n: PartNode, rule: Decider, c: Candidate, by?: string, mark?: SupersedeMark): void {
    const { rt, parked } = this;
    if (untouchable(rt, n, rule) !== undefined) return;
    const slot = c.patch.input !== undefined ? "input" : "output";
    if (slot === "output") {
      rt.decidedNow.set(n.index, rule.id);
      // parked wants blocked by this part may go through now: commit decides them again
      if (parked.blocks(n.index)) for (const w of parked.unpark(n.index)) this.woken.set(w.node.index, w);
    }
    this.wanted.push({ node: n, slot, rule, patch: c.patch, tokens: c.tokens, by, mark });
  }
}
