// The prune tool's instructions and where they go. A short session never sees them: until the
// prompt first reaches `idsFromTokens`, nothing is added (no system text, no id tags), so the
// plugin costs nothing where there is nothing old to prune. From then on the instructions are a
// synthetic user message right after the message that was newest at that call — unsent then, so
// no cached byte changes — rendered identically at the same place on every later call. A user
// message, not a part of that (usually assistant) message: the model would read text in its own
// message as its own words. With `idsFromTokens: 0` they go into the system prompt from the first
// call instead.
import { lastMessageIndex, sentByUser, type Graph } from "../graph/graph.js";
import { lastUserIndex } from "../graph/prompt.js";
import type { HostProfile } from "../graph/host.js";
import type { Message } from "../graph/types.js";
import { setUndoable, type Undo } from "./write-log.js";
import type { SessionState } from "./state.js";

/** The instructions, naming the host's prune tool and id tags. */
function instructions(host: HostProfile): string {
  const tag = (id: string) => `${host.idTag.open}${id}${host.idTag.close}`;
  return [
    `Context pruning (opencode-acp): larger tool outputs (and your longer messages and reasoning) end with an id like ${tag("t1a")}. Call ${host.pruneTool} to discard what you no longer need, distill it to a summary, cut a span between two literal markers, or restore it.`,
    `Older outputs may be replaced by a note naming the call (a newer call made them redundant, or they are from an earlier user turn); re-run the call if you need it again. Never write ${tag("…")} ids yourself.`,
  ].join("\n");
}

/** Starts the note in the conversation: what tells our message from the host's. */
const INTRO_HEAD = "[Note from the opencode-acp plugin, not from the user] From here on: ";

/** The instructions as a system prompt addition (`idsFromTokens: 0`). */
export const systemPrompt = (host: HostProfile): string => instructions(host);
/** The same, as a note in the conversation from the point ids start. */
export const introText = (host: HostProfile): string => `${INTRO_HEAD}${instructions(host)}`;

/**
 * Marks our message and its part (their ids end so) so a repeated hook pass over our own output
 * can take it out first. Not `metadata`: the host passes a text part's metadata on as provider options.
 */
const INTRO_SUFFIX = "_acp_intro";

/**
 * Fixes the message the instructions follow: the newest one on the first call whose prompt reaches
 * `threshold` tokens and whose turn has no reasoning yet (see reasoningThisTurn). An anchor that
 * left the history (compaction, revert) is dropped, so a later large prompt sets a new one.
 */
export function updateIntroAnchor(state: SessionState, graph: Graph, threshold: number, promptTokens: () => number): number {
  if (state.introAt !== undefined) {
    const at = introIndex(graph, state);
    if (at < Infinity) return at;
    state.introAt = undefined;
  }
  const last = graph.messages[graph.messages.length - 1]?.info?.id;
  if (typeof last !== "string" || promptTokens() < threshold || reasoningThisTurn(graph)) return Infinity;
  state.introAt = last;
  return introIndex(graph, state);
}

/**
 * The current turn has reasoning the provider was sent. A user message in the middle of such a
 * turn makes providers that keep only the current turn's reasoning (Anthropic's thinking models)
 * drop it, which breaks the cached prefix once; so the instructions, and the ids, wait for the
 * next user message, where that reasoning is dropped anyway.
 */
function reasoningThisTurn(graph: Graph): boolean {
  const nodes = graph.nodes;
  // the turn starts at the last user message the provider receives anything of (one that sends
  // nothing, an empty text say, does not start one); a hand-built graph has no host to tell
  const host = graph.clock?.host;
  const lastUser = host ? lastUserIndex(graph.messages, host) : graph.lastUserMsgIndex;
  for (let i = nodes.length - 1; i >= 0 && nodes[i].msgIndex > lastUser; i--) {
    const n = nodes[i];
    // reasoning the provider sends back on every request is not dropped by a user message
    if (n.part.type === "reasoning" && typeof n.part.text === "string" && n.part.text !== "" && n.message.info?.role === "assistant" && (!host || host.dropsAtNextTurn(n.part))) return true;
  }
  return false;
}

/** Message index from which parts get ids: the anchor, or Infinity while there is none. */
export function introIndex(graph: Graph, state: SessionState): number {
  if (state.introAt === undefined) return Infinity;
  // the graph's walk found the anchor's last place when it looked for this id
  if (graph.anchor === state.introAt && graph.anchorLast !== undefined) return graph.anchorLast >= 0 ? graph.anchorLast : Infinity;
  const i = lastMessageIndex(graph, state.introAt);
  return i >= 0 ? i : Infinity;
}

/**
 * Inserts the instructions as a synthetic user message right after the anchor message
 * (undoable). Agent and model are those of the last real user message before it, as the host's
 * own messages carry them.
 */
export function renderIntro(messages: Message[], state: SessionState, undo: Undo, host: HostProfile, graph?: Graph): void {
  if (state.introAt === undefined) return;
  // the graph's walk found the anchor's first place when it looked for this id (no second pass over the messages)
  const known = graph?.messages === messages && graph.anchorIndex !== undefined && graph.anchorIndex >= 0 && messages[graph.anchorIndex]?.info?.id === state.introAt;
  const at = known ? graph!.anchorIndex! : messages.findIndex((x) => x?.info?.id === state.introAt);
  const anchor = messages[at];
  if (!anchor?.info) return;
  const id = `${state.introAt}${INTRO_SUFFIX}`;
  const sessionID = anchor.info.sessionID;
  const created = (anchor.info.time as { created?: unknown } | undefined)?.created;
  const info: Message["info"] = { id, sessionID, role: "user", time: { created: typeof created === "number" ? created : 0 } };
  const user = lastRealUser(messages, at);
  if (user?.info.agent !== undefined) info.agent = user.info.agent;
  if (user?.info.model !== undefined) info.model = user.info.model;
  const part = { id, sessionID, messageID: id, type: "text", text: introText(host), synthetic: true };
  const message: Message = { info, parts: [part as Message["parts"][number]] };
  messages.splice(at + 1, 0, message);
  undo.push(() => {
    const i = messages.indexOf(message);
    if (i >= 0) messages.splice(i, 1);
  });
}

/** The last message at or before `at` with something the user wrote (not only synthetic or ignored text). */
function lastRealUser(messages: Message[], at: number): Message | undefined {
  for (let i = at; i >= 0; i--) {
    const m = messages[i];
    if (sentByUser(m)) return m;
  }
  return undefined;
}

/** The instructions message a previous pass over this same array inserted. */
export function isIntroMessage(message: unknown): boolean {
  const m = message as Message | undefined;
  return m?.info?.role === "user" && typeof m.info.id === "string" && m.info.id.endsWith(INTRO_SUFFIX) && Array.isArray(m.parts) && m.parts.length === 1 && isIntroPart(m.parts[0]);
}

/** Takes out the instructions a previous pass over this same array inserted (undoable). */
export function stripIntro(messages: Message[], undo: Undo): void {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!isIntroMessage(m)) continue;
    messages.splice(i, 1);
    undo.push(() => messages.splice(i, 0, m));
  }
}

/** The instructions part this plugin added (tests and reports tell it from the host's parts). */
export function isIntroPart(part: unknown): boolean {
  const p = part as { id?: unknown; type?: unknown; text?: unknown } | undefined;
  return p?.type === "text" && typeof p.id === "string" && p.id.endsWith(INTRO_SUFFIX) && typeof p.text === "string" && p.text.startsWith(INTRO_HEAD);
}
