// The message graph: one node per part, in prompt order, with the positional facts
// (turn, age, newer tool tokens) that rules read. Built once per transform call in O(parts).
import type { HostProfile } from "./host.js";
import { textLength } from "./measure.js";
import { clearedByHost, textOf, tokensOf, toolResultText } from "./prompt.js";
import type { Message, Part } from "./types.js";

export { textOf, tokensOf };
export { textLength } from "./measure.js";

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
  /** Dynamic, filled by finishGraph: user turns after this part's message (consecutive user messages are one turn). */
  ageTurns: number;
  ageCalls: number;
  toolTokensNewer: number;
  /** Status signature; a reused node must still have it (a part that changed state is new). */
  sig: string;
  /** Length of the part's text when the node was built (-1: no text); reused nodes still have it. */
  readonly textLen: number;
}

export interface BuildOptions {
  /** The host whose placeholders a tool result is measured with (kept for the session's later graphs). */
  host: HostProfile;
  /** A message id whose first place the graph reports (Graph.anchorIndex), found by the walk. */
  anchor?: string;
  /** A second such id (Graph.anchorIndex2): the walk reads every message's id anyway. */
  anchor2?: string;
  /**
   * Called with each carried-over node's index and the copy's part at its place, while the walk
   * holds the part (the engine renders unchanged plans there: its objects are in cache then).
   */
  carried?: (index: number, part: Part) => void;
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
  /** Index of the first message whose id is BuildOptions.anchor; -1 if none (or none asked). */
  anchorIndex?: number;
  /** The same for the last such message, and the id it was asked for. */
  anchorLast?: number;
  anchor?: string;
  /** The same for BuildOptions.anchor2, with the id it was asked for. */
  anchorIndex2?: number;
  anchor2?: string;
  /** What the next walk compares for each node (buildGraph's graphs only; see WalkKeys). */
  keys?: WalkKeys;
}

/**
 * What the walk compares for each node, in flat arrays beside the nodes (by node index): checking a
 * carried-over part then reads a few sequential array slots instead of one node object per part,
 * about a fifth of the walk on a long history. Appended and cut with the node array.
 */
interface WalkKeys {
  ids: string[];
  sigs: string[];
  msgs: number[];
  places: number[];
  texts: number[];
  /** turn × 2, + 1 for a tool part (a stateless tool part's signature is a non-tool's). */
  turns: number[];
}

const noKeys = (): WalkKeys => ({ ids: [], sigs: [], msgs: [], places: [], texts: [], turns: [] });

function sliceKeys(k: WalkKeys, end: number): WalkKeys {
  return { ids: k.ids.slice(0, end), sigs: k.sigs.slice(0, end), msgs: k.msgs.slice(0, end), places: k.places.slice(0, end), texts: k.texts.slice(0, end), turns: k.turns.slice(0, end) };
}

function cutKeys(k: WalkKeys, end: number): void {
  k.ids.length = k.sigs.length = k.msgs.length = k.places.length = k.texts.length = k.turns.length = end;
}


/**
 * The text the provider receives as this tool part's result ("" for a part without a state). The
 * host's placeholders come from the profile the node's graph was built with.
 */
export function resultText(node: PartNode): string {
  return partResultText(node.part, hostOf(node));
}

/** The host the node's graph was built for (none: a node built by hand). */
export const hostOf = (node: PartNode): HostProfile | undefined => (node as Partial<Node>).clock?.host;

/** The same for a part of a graph built with `host` (none: a node built by hand, whose placeholders are ""). */
export function partResultText(part: Part, host: HostProfile | undefined): string {
  if (!part.state) return "";
  return toolResultText(part, host ?? NO_HOST);
}

/** Placeholders of a node not built by buildGraph (tests build such nodes for conditions). */
const NO_HOST = { clearedOutput: "", interruptedOutput: "" } as HostProfile;

/** Characters of a tool part's input as sent (its JSON; `{}` when absent), measured once per node. */
export function inputChars(node: PartNode): number {
  const n = node as Partial<Node> & PartNode; // a node built by hand caches it the same way
  let c = n.inChars;
  if (c === undefined) n.inChars = c = textLength(node.part.state?.input ?? {});
  return c;
}

/** A user message the provider receives: notices the plugin posts (ignored-only) are not turns. */
export function isUserMessage(m: Message): boolean {
  return m?.info?.role === "user" && Array.isArray(m.parts) && m.parts.some((p) => p && !(p.type === "text" && p.ignored));
}

/** A part the user typed: text neither ignored (notices) nor synthetic (host or plugin additions). */
export const typedByUser = (p: Part | undefined): p is Part & { text: string } => p?.type === "text" && !p.ignored && !p.synthetic && typeof p.text === "string";

/** A message the user sent: a user message with something besides ignored or synthetic text (a file, say). */
export function sentByUser(m: Message): boolean {
  return m?.info?.role === "user" && Array.isArray(m.parts) && m.parts.some((p) => p && !(p.type === "text" && (p.ignored || p.synthetic)));
}

/** Status signature without allocating in the common case (no compaction mark). */
function sigOf(part: Part): string {
  if (part.type !== "tool") return "";
  const st = part.state;
  const status = typeof st?.status === "string" ? st.status : "";
  return clearedByHost(part) ? `${status}c` : status;
}

/** The graph's totals, shared by the nodes of successive graphs of a session (see Node). */
interface Clock {
  turns: number;
  calls: number;
  /** Tokens of completed tool output over the whole graph. */
  tokens: number;
  /** The host the session's graphs are built for. */
  readonly host: HostProfile;
}

/**
 * A node. The dynamic facts are derived on read from the graph's totals, so a call that reuses
 * the nodes of the previous graph does not rewrite every node: ageTurns = turns - turn,
 * ageCalls = calls - calls up to and including this part, toolTokensNewer = tokens - tokens up to
 * and including this part (a status change makes the part new, so these prefix sums hold).
 */
class Node implements PartNode {
  // The walk compares the copies of the first fields kept in the graph's WalkKeys, not these
  // (the part id this node was built for is there only: keys.ids).
  sig: string;
  msgIndex: number;
  partIndex: number;
  /** The part is a tool part (the signature of a stateless tool part is a non-tool's). */
  readonly isTool: boolean;
  /** Length of the part's text when it was first seen (-1: none). */
  readonly textLen: number;
  turn: number;
  readonly clock: Clock;
  /** Characters of the tool input's JSON (inputChars), once measured. */
  inChars?: number;
  index: number;
  part: Part;
  message: Message;
  callIndex: number;
  outputChars: number;
  /** Completed tool output tokens of this part and every part before it. */
  tokensThrough: number;
  /** Characters (tool output as sent + text) of this part and every part before it. */
  charsThrough: number;
  constructor(index: number, msgIndex: number, partIndex: number, part: Part, message: Message, turn: number, callIndex: number, outputChars: number, sig: string, isTool: boolean, tokensThrough: number, clock: Clock, charsThrough: number, textLen: number) {
    this.sig = sig;
    this.msgIndex = msgIndex;
    this.partIndex = partIndex;
    this.isTool = isTool;
    this.textLen = textLen;
    this.turn = turn;
    this.clock = clock;
    this.index = index;
    this.part = part;
    this.message = message;
    this.callIndex = callIndex;
    this.outputChars = outputChars;
    this.tokensThrough = tokensThrough;
    this.charsThrough = charsThrough;
  }
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

/** The index of the last message of `g` with id `id`; -1 when there is none. */
export function lastMessageIndex(g: Graph, id: string): number {
  const messages = g.messages;
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.info?.id === id) return i;
  return -1;
}

/**
 * Builds the graph of `messages`. With `prev` (the same session's previous graph), leading parts
 * with the same id, place, status and text length reuse their nodes, which keep the part object
 * they were built from (the engine never writes to it, so rules always read the part as the host
 * stored it); the walk only checks them.
 */
export function buildGraph(messages: Message[], prev: Graph | undefined, opts: BuildOptions): Graph {
  const prevNodes = prev?.nodes ?? [];
  const prevCount = prevNodes.length;
  // The previous graph's array is shared while every part is carried over. New parts after all of
  // them are appended to it in place (copying it would cost more than the rest of the walk: a
  // long session's array lands in V8's large-object space, fresh pages on every call); any other
  // change copies it first. Either way a call that fails midway leaves the previous graph whole
  // (the runtime keeps it, with its id map, until a call succeeds): the catch below cuts the
  // appended nodes off again.
  const prevKeys = prev?.keys;
  // nodes not built by this walk (tests build graphs by hand) have no keys: nothing is carried over
  let reusing = prevCount > 0 && prevKeys !== undefined && prevKeys.ids.length === prevCount;
  let appending = false;
  let nodes: PartNode[] = reusing ? prevNodes : [];
  let keys = reusing ? prevKeys! : noKeys();
  let kIds = keys.ids;
  let kSigs = keys.sigs;
  let kMsgs = keys.msgs;
  let kPlaces = keys.places;
  let kTexts = keys.texts;
  let kTurns = keys.turns;
  let turn = 0;
  let calls = 0;
  let tokens = 0;
  let lastUserMsgIndex = -1;
  // Consecutive user messages (queued while the agent worked, or notices a harness posts one after
  // another) are one turn: the agent answers them together.
  let afterUser = false;
  let reused = 0; // leading nodes carried over from prev
  let chars = 0; // running total for charsThrough
  // Reused nodes read the totals from the clock they were built with: one clock per session.
  const clock: Clock = prev?.clock ?? { turns: 0, calls: 0, tokens: 0, host: opts.host };
  const { anchor, anchor2, carried } = opts;
  let anchorIndex = -1;
  let anchorLast = -1;
  let anchorIndex2 = -1;
  let sessionID: string;
  let byId: Map<string, PartNode>;
  try {
    for (let mi = 0; mi < messages.length; mi++) {
      const m = messages[mi];
      if (anchor !== undefined || (anchor2 !== undefined && anchorIndex2 < 0)) {
        const id = m?.info?.id;
        if (anchorIndex < 0 && id === anchor) anchorIndex = mi;
        if (anchor !== undefined && id === anchor) anchorLast = mi;
        if (anchorIndex2 < 0 && id === anchor2) anchorIndex2 = mi;
      }
      if (!m || !Array.isArray(m.parts)) continue;
      const parts = m.parts;
      if (isUserMessage(m)) {
        if (!afterUser) turn++;
        afterUser = true;
        lastUserMsgIndex = mi;
      } else if (m.info?.role === "assistant") afterUser = false;
      for (let pi = 0; pi < parts.length; pi++) {
        const part = parts[pi];
        if (!part || typeof part !== "object") continue;
        const id = part.id;
        if (typeof id !== "string") continue;
        const isTool = part.type === "tool";
        const sig = isTool ? sigOf(part) : "";
        const text = part.text;
        const textLen = typeof text === "string" ? text.length : -1;
        const turnKey = isTool ? turn * 2 + 1 : turn * 2;
        if (reusing) {
          const r = reused;
          if (r < prevCount && kIds[r] === id && kSigs[r] === sig && kMsgs[r] === mi && kPlaces[r] === pi && kTexts[r] === textLen && kTurns[r] === turnKey) {
            reused++;
            if (carried !== undefined) carried(r, part);
            continue;
          }
          reusing = false;
          if (reused === prevCount) appending = true;
          else {
            nodes = prevNodes.slice(0, reused);
            keys = sliceKeys(prevKeys!, reused);
            ({ ids: kIds, sigs: kSigs, msgs: kMsgs, places: kPlaces, texts: kTexts, turns: kTurns } = keys);
          }
          const last = nodes[reused - 1] as Node | undefined;
          if (last) {
            calls = last.callIndex + (last.isTool ? 1 : 0);
            tokens = last.tokensThrough;
            chars = last.charsThrough;
          }
        }
        const completed = isTool && part.state?.status === "completed"; // counts towards toolTokensNewer
        const outputChars = isTool ? partResultText(part, clock.host).length : 0;
        if (completed) tokens += tokensOf(outputChars);
        chars += outputChars + (textLen > 0 ? textLen : 0);
        const i = nodes.length;
        nodes.push(new Node(i, mi, pi, part, m, turn, calls, outputChars, sig, isTool, tokens, clock, chars, textLen));
        kIds.push(id);
        kSigs.push(sig);
        kMsgs.push(mi);
        kPlaces.push(pi);
        kTexts.push(textLen);
        kTurns.push(turnKey);
        if (isTool) calls++;
      }
    }
    sessionID = messages.find((m) => m?.info?.sessionID)?.info.sessionID ?? "";
    if (reusing) {
      // every part was a reused node: the totals are the last one's; nodes past the history are gone
      if (reused < prevCount) {
        nodes = prevNodes.slice(0, reused);
        keys = sliceKeys(prevKeys!, reused);
      }
      const last = nodes[reused - 1] as Node | undefined;
      if (last) {
        calls = last.callIndex + (last.isTool ? 1 : 0);
        tokens = last.tokensThrough;
      }
    }
    // ids as the walk read them (keys.ids): reading the host's parts again could fail after the walk
    const ids = keys.ids;
    if (prev && reused === prevCount) byId = prev.byId;
    else {
      byId = new Map();
      for (let i = 0; i < reused; i++) if (!byId.has(ids[i])) byId.set(ids[i], nodes[i]);
    }
    for (let i = reused; i < nodes.length; i++) {
      // duplicates: the first wins; an entry left by an aborted call (node not in this graph) is replaced
      const known = byId.get(ids[i]);
      if (!known || nodes[known.index] !== known) byId.set(ids[i], nodes[i]);
    }
  } catch (e) {
    if (appending) {
      prevNodes.length = prevCount;
      cutKeys(prevKeys!, prevCount);
    }
    throw e;
  }
  clock.turns = turn;
  clock.calls = calls;
  clock.tokens = tokens;
  return { sessionID, messages, nodes, byId, turns: turn, calls, lastUserMsgIndex, reused, clock, anchorIndex, anchorLast, anchor, anchorIndex2, anchor2, keys };
}
