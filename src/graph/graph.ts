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

export function buildGraph(messages: Message[]): Graph {
  const nodes: PartNode[] = [];
  const byId = new Map<string, PartNode>();
  let turn = 0;
  let calls = 0;
  let lastUserMsgIndex = -1;
  for (let mi = 0; mi < messages.length; mi++) {
    const m = messages[mi];
    if (!m || !Array.isArray(m.parts)) continue;
    if (isUserMessage(m)) {
      turn++;
      lastUserMsgIndex = mi;
    }
    for (let pi = 0; pi < m.parts.length; pi++) {
      const part = m.parts[pi];
      if (!part || typeof part !== "object" || typeof part.id !== "string") continue;
      const isTool = part.type === "tool";
      const node: PartNode = {
        index: nodes.length,
        msgIndex: mi,
        partIndex: pi,
        part,
        message: m,
        turn,
        callIndex: calls,
        outputChars: isTool ? toolResultText(part).length : 0,
        ageTurns: 0,
        ageCalls: 0,
        toolTokensNewer: 0,
      };
      if (isTool) calls++;
      nodes.push(node);
      if (!byId.has(part.id)) byId.set(part.id, node); // duplicate ids: the first wins
    }
  }
  let newerTokens = 0;
  for (let i = nodes.length - 1; i >= 0; i--) {
    const n = nodes[i];
    n.ageTurns = turn - n.turn;
    n.ageCalls = calls - n.callIndex - (n.part.type === "tool" ? 1 : 0);
    n.toolTokensNewer = newerTokens;
    if (n.part.type === "tool" && n.part.state?.status === "completed") newerTokens += tokensOf(n.outputChars);
  }
  const sessionID = messages.find((m) => m?.info?.sessionID)?.info.sessionID ?? "";
  return { sessionID, messages, nodes, byId, turns: turn, calls, lastUserMsgIndex };
}
