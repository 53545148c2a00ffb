// The message graph: one node per part, in prompt order, with the positional facts
// (turn, age, newer tool tokens) that rules read. Built once per transform call in O(parts).
import type { Message, Part } from "./types.js";

export const TERMINAL = new Set(["completed", "error"]);

export interface PartNode {
  index: number; // position in prompt order
  msgIndex: number;
  partIndex: number;
  part: Part;
  message: Message;
  /** Turn number: count of user messages up to and including this part's message. */
  turn: number;
  /** Count of tool parts before this one. */
  callIndex: number;
  outputChars: number;
  /** Dynamic, filled by finishGraph: user messages after this part's message. */
  ageTurns: number;
  ageCalls: number;
  toolTokensNewer: number;
  /** Status signature; a reused node must still have it (a part that changed state is new). */
  sig: string;
  /** Decisions committed for this part (the session state's record), attached by the runtime. */
  slots?: import("../engine/state.js").DecisionSlots;
  /** The id tag rendered after this part's output, attached by the runtime. */
  tag?: string;
  /** Render's cache (render.ts): the decisions it last planned for, and the plan. */
  rOut?: unknown;
  rIn?: unknown;
  rKind?: number;
  rValue?: string;
}

export interface Graph {
  sessionID: string;
  messages: Message[];
  nodes: PartNode[];
  byId: Map<string, PartNode>;
  turns: number;
  calls: number;
  /** Index of the last user message, -1 if none. */
  lastUserMsgIndex: number;
  /** Leading nodes carried over from the previous graph (same ids and status, same order). */
  reused: number;
  /** Totals the nodes derive their dynamic facts from (shared with the graphs built from this one). */
  clock?: Clock;
}

export const tokensOf = (chars: number) => Math.ceil(chars / 4);

export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** The text the provider receives as this tool part's result. */
export function toolResultText(part: Part): string {
  const st = part.state;
  if (!st) return "";
  if (st.status === "completed") return st.time?.compacted ? "[Old tool result content cleared]" : textOf(st.output);
  if (st.status === "error") return textOf(st.error);
  return "[Tool execution was interrupted]";
}

/** A user message the provider receives: notices the plugin posts (ignored-only) are not turns. */
export function isUserMessage(m: Message): boolean {
  return m?.info?.role === "user" && Array.isArray(m.parts) && m.parts.some((p) => p && !(p.type === "text" && p.ignored));
}

/** Status signature without allocating in the common case (no compaction mark). */
function sigOf(part: Part): string {
  if (part.type !== "tool") return "";
  const st = part.state;
  const status = typeof st?.status === "string" ? st.status : "";
  return st?.time?.compacted ? `${status}c` : status;
}

/** The graph's totals, shared by the nodes of successive graphs of a session (see Node). */
interface Clock {
  turns: number;
  calls: number;
  /** Tokens of completed tool output over the whole graph. */
  tokens: number;
}

/**
 * A node. The dynamic facts are derived on read from the graph's totals, so a call that reuses
 * the nodes of the previous graph does not rewrite every node: ageTurns = turns - turn,
 * ageCalls = calls - calls up to and including this part, toolTokensNewer = tokens - tokens up to
 * and including this part (a status change makes the part new, so these prefix sums hold).
 */
class Node implements PartNode {
  slots?: import("../engine/state.js").DecisionSlots = undefined;
  tag?: string = undefined;
  rOut?: unknown = undefined;
  rIn?: unknown = undefined;
  rKind?: number = undefined;
  rValue?: string = undefined;
  constructor(
    public index: number,
    public msgIndex: number,
    public partIndex: number,
    public part: Part,
    public message: Message,
    public turn: number,
    public callIndex: number,
    public outputChars: number,
    public sig: string,
    /** The part id this node was built for (a reused node's part has the same). */
    readonly pid: string,
    /** The bound part is a tool part (rebinding may change it: the signature of a stateless tool part is a non-tool's). */
    public isTool: boolean,
    /** Completed tool output tokens of this part and every part before it. */
    public tokensThrough: number,
    readonly clock: Clock,
    /** Characters (tool output as sent + text) of this part and every part before it, this call. */
    public charsThrough: number,
  ) {}
  get ageTurns(): number {
    return this.clock.turns - this.turn;
  }
  get ageCalls(): number {
    return this.clock.calls - this.callIndex - (this.isTool ? 1 : 0);
  }
  get toolTokensNewer(): number {
    return this.clock.tokens - this.tokensThrough;
  }
}

/**
 * Σ outputChars + text length over nodes[first..]: the characters from a part to the end of the
 * prompt (commit policy), from the running totals of the walk instead of a pass over the parts.
 */
export function charsFrom(g: Graph, first: number): number {
  const nodes = g.nodes;
  if (first >= nodes.length) return 0;
  const last = nodes[nodes.length - 1] as Partial<Node>;
  const before = first > 0 ? (nodes[first - 1] as Partial<Node>).charsThrough : 0;
  if (typeof last.charsThrough === "number" && typeof before === "number") return last.charsThrough - before;
  let after = 0; // nodes not built by buildGraph
  for (let i = first; i < nodes.length; i++) after += nodes[i].outputChars + (typeof nodes[i].part.text === "string" ? nodes[i].part.text!.length : 0);
  return after;
}

/**
 * Builds the graph of `messages`. With `prev` (the same session's previous graph), leading parts
 * with the same id and status reuse their nodes — only the fresh part objects are rebound — so a
 * call costs little more than a walk over the parts.
 */
export function buildGraph(messages: Message[], prev?: Graph): Graph {
  const nodes: PartNode[] = [];
  const prevNodes = prev?.nodes ?? [];
  let reusing = prevNodes.length > 0;
  let turn = 0;
  let calls = 0;
  let tokens = 0;
  let lastUserMsgIndex = -1;
  let reused = 0; // leading nodes carried over from prev
  let chars = 0; // running total for charsThrough
  // Reused nodes read the totals from the clock they were built with: one clock per session.
  const clock: Clock = prev?.clock ?? { turns: 0, calls: 0, tokens: 0 };
  for (let mi = 0; mi < messages.length; mi++) {
    const m = messages[mi];
    if (!m || !Array.isArray(m.parts)) continue;
    if (isUserMessage(m)) {
      turn++;
      lastUserMsgIndex = mi;
    }
    const parts = m.parts;
    for (let pi = 0; pi < parts.length; pi++) {
      const part = parts[pi];
      if (!part || typeof part !== "object") continue;
      const id = part.id;
      if (typeof id !== "string") continue;
      const isTool = part.type === "tool";
      const sig = isTool ? sigOf(part) : "";
      const completed = isTool && part.state?.status === "completed"; // counts towards toolTokensNewer
      const i = nodes.length;
      if (reusing) {
        const old = prevNodes[i] as Node;
        if (old && old.pid === id && old.sig === sig && old.turn === turn && old.clock === clock) {
          old.part = part;
          old.message = m;
          old.msgIndex = mi;
          old.partIndex = pi;
          old.isTool = isTool;
          nodes.push(old);
          reused++;
          if (isTool) calls++;
          if (completed) tokens += tokensOf(old.outputChars);
          if (old.tokensThrough !== tokens) old.tokensThrough = tokens; // only if a signature hid a status change
          const text = part.text;
          chars += old.outputChars + (typeof text === "string" ? text.length : 0);
          old.charsThrough = chars;
          continue;
        }
        reusing = false;
      }
      const outputChars = isTool ? toolResultText(part).length : 0;
      if (completed) tokens += tokensOf(outputChars);
      const text = part.text;
      chars += outputChars + (typeof text === "string" ? text.length : 0);
      nodes.push(new Node(i, mi, pi, part, m, turn, calls, outputChars, sig, id, isTool, tokens, clock, chars));
      if (isTool) calls++;
    }
  }
  clock.turns = turn;
  clock.calls = calls;
  clock.tokens = tokens;
  let byId: Map<string, PartNode>;
  if (prev && reused === prevNodes.length) byId = prev.byId;
  else {
    byId = new Map();
    for (let i = 0; i < reused; i++) if (!byId.has(nodes[i].part.id)) byId.set(nodes[i].part.id, nodes[i]);
  }
  for (let i = reused; i < nodes.length; i++) {
    // duplicates: the first wins; an entry left by an aborted call (node not in this graph) is replaced
    const known = byId.get(nodes[i].part.id);
    if (!known || nodes[known.index] !== known) byId.set(nodes[i].part.id, nodes[i]);
  }
  const sessionID = messages.find((m) => m?.info?.sessionID)?.info.sessionID ?? "";
  return { sessionID, messages, nodes, byId, turns: turn, calls, lastUserMsgIndex, reused, clock };
}
