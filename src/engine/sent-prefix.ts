// What the previous call sent and what the provider holds cached of it: where the sent prefix ends,
// where it breaks on this call anyway, and what re-caching part of it costs (commit.ts, settle.ts).
import { inputChars, tokensOf, type Graph, type PartNode } from "../graph/graph.js";
import { lastUserIndex } from "../graph/prompt.js";
import type { CommitPolicy } from "../rules/types.js";
import type { SessionRuntime } from "./session.js";
import { cacheExpiredSince, type SessionState } from "./state.js";

/** Characters of a part the provider receives (output or text, plus a tool call's input); cached per node. */
export function sentChars(n: PartNode): number {
  const text = typeof n.part.text === "string" ? n.part.text.length : 0;
  if (n.part.type !== "tool") return n.outputChars + text;
  return n.outputChars + text + inputChars(n);
}

/**
 * Σ sentChars over nodes[first..end), from prefix sums kept by the runtime; the sums of nodes the
 * walk carried over stay valid (same parts), the rest are extended on demand.
 */
function sentBetween(rt: SessionRuntime, first: number, end: number): number {
  const pre = rt.sentPrefix;
  const nodes = rt.graph.nodes;
  if (pre.length === 0) pre.push(0);
  for (let i = pre.length - 1; i < end; i++) pre.push(pre[i] + sentChars(nodes[i]));
  return pre[end] - pre[first];
}

/** Characters of the whole prompt as built, before pruning (Σ sentChars), from the same prefix sums. */
export function sentTotal(rt: SessionRuntime): number {
  return sentBetween(rt, 0, rt.graph.nodes.length);
}

/** What taking the older view `o` in re-caches: the sent prefix from it up to the first change `from`. */
export function recacheTokens(rt: SessionRuntime, o: PartNode, from: number): number {
  return tokensOf(sentBetween(rt, o.index, Math.min(from, rt.graph.nodes.length)));
}

/**
 * Cache break-even: is freeing `freed` tokens worth re-caching everything from the first edit up
 * to `end` (the prefix break, or the end of the prompt)? Tool inputs are re-cached too.
 */
export function paysOff(rt: SessionRuntime, policy: CommitPolicy, first: number, freed: number, end: number): boolean {
  if (!(policy.breakEven > 0) || freed <= 0) return false;
  // Where the cache breaks anyway on this call, the re-cache runs only up to that break, and waiting
  // would make it run to the prompt's end: no wait there.
  const wait = end === Infinity ? policy.minTurnCalls ?? 0 : 0;
  if (wait > 0 && turnCalls(rt.graph, wait) < wait) return false;
  const after = sentBetween(rt, first, Math.min(end, rt.graph.nodes.length));
  const cached = callsSinceCached(rt.state);
  return freed * Math.max(1, cached) >= policy.breakEven * tokensOf(after);
}

/**
 * Calls the current turn has made (its assistant messages), counted up to `limit`. A turn's first
 * calls say nothing of how long it goes on, and a session often ends a call or two into a turn.
 */
function turnCalls(graph: Graph, limit: number): number {
  const msgs = graph.messages;
  let n = 0;
  for (let i = graph.lastUserMsgIndex + 1; i < msgs.length && n < limit; i++) if (msgs[i]?.info?.role === "assistant") n++;
  return n;
}

/** Calls to come before the cache expires again, estimated as the calls since it last did. */
export function callsSinceCached(state: SessionState): number {
  return state.calls - Math.min(state.calls, state.cachedSince ?? 0);
}

/** Is the previous call older than the cache lifetime? Then nothing is cached: the prefix breaks at the start. */
export function cacheExpired(state: SessionState, policy: CommitPolicy, now: number, sentIdx: number): boolean {
  return sentIdx >= 0 && cacheExpiredSince(state, policy.cacheTtlMinutes, now);
}

/**
 * Providers drop the reasoning of turns before the last user message. On the first call after a
 * new user message the cached prefix therefore ends at the previous turn's first reasoning part:
 * its node index, or Infinity when there is no such break on this call. `providerLastUser`: the
 * last user message the provider receives any content of (PhaseCall.providerLastUser, once per call).
 */
export function reasoningBreak(rt: SessionRuntime, sentIdx: number, providerLastUser: () => number): number {
  const { graph } = rt;
  const nodes = graph.nodes;
  const msgs = graph.messages;
  if (sentIdx < 0 || graph.lastUserMsgIndex <= sentIdx) return Infinity;
  // the provider's last user message is the last one it receives any content of (prompt.ts)
  if (providerLastUser() <= sentIdx) return Infinity; // no new user message it receives
  const sentUser = lastUserIndex(msgs, rt.host, sentIdx); // the last call sent the reasoning after this message
  let lo = 0; // nodes are in message order: the first node after sentUser
  for (let hi = nodes.length; lo < hi; ) {
    const mid = (lo + hi) >>> 1;
    if (nodes[mid].msgIndex <= sentUser) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < nodes.length; i++) {
    const n = nodes[i];
    if (n.msgIndex > sentIdx) break;
    if (n.part.type !== "reasoning" || !n.part.text || !rt.host.dropsAtNextTurn(n.part)) continue;
    const info = msgs[n.msgIndex]?.info;
    if (info?.role === "assistant" && (!info.error || (info.error as { name?: string }).name === rt.host.abortedError)) return n.index;
  }
  return Infinity;
}

/**
 * The index of the last message the previous call sent. A history may repeat message ids
 * (OpenCode's do not); then the first message with that id is taken: assuming less was sent
 * costs at most a cache write, while assuming more leaves decisions on unsent parts waiting
 * behind a change of the prefix (a later message reusing the id hid the new user turn's break).
 */
export function sentMessageIndex(graph: Graph, state: SessionState): number {
  if (state.sentUpTo === undefined) return -1; // nothing sent yet: everything is tail
  // the walk found it when it was asked for this id (no second pass over the messages)
  const i = graph.anchor2 === state.sentUpTo && graph.anchorIndex2 !== undefined ? graph.anchorIndex2 : graph.messages.findIndex((m) => m?.info?.id === state.sentUpTo);
  return i >= 0 ? i : graph.messages.length; // prefix unknown (compaction, revert): treat all as sent
}
