// The prune tool's instructions and where they go. A short session never sees them: until the
// prompt first reaches `idsFromTokens`, nothing is added (no system text, no id tags), so the
// plugin costs nothing where there is nothing old to prune. From then on the instructions are a
// text part of the message that was newest at that call — unsent then, so no cached byte changes —
// rendered identically at the same place on every later call. With `idsFromTokens: 0` they go
// into the system prompt from the first call instead.
import type { Graph } from "../graph/graph.js";
import type { Message } from "../graph/types.js";
import { setUndoable, type Undo } from "./render.js";
import type { SessionState } from "./state.js";

const LINES = [
  "Context pruning (opencode-acp): larger tool outputs (and your longer messages and reasoning) end with an id like [acp:t1a]. Call context_prune to discard what you no longer need, distill it to a summary, cut a span between two literal markers, or restore it.",
  "Older outputs may be replaced by a note naming the call (a newer call made them redundant, or they are from an earlier user turn); re-run the call if you need it again. Never write [acp:…] ids yourself.",
];

/** The instructions as a system prompt addition (`idsFromTokens: 0`). */
export const SYSTEM_PROMPT = LINES.join("\n");
/** The same, as a note in the conversation from the point ids start. */
export const INTRO_TEXT = `[Note from the opencode-acp plugin, not from the user] From here on: ${LINES.join("\n")}`;

/**
 * Marks our part (its id ends so) so a repeated hook pass over our own output can take it out
 * first. Not `metadata`: the host passes an assistant text's metadata on as provider options.
 */
const INTRO_SUFFIX = "_acp_intro";

/**
 * Fixes the message the instructions follow: the newest one on the first call whose prompt reaches
 * `threshold` tokens. An anchor that left the history (compaction, revert) is dropped, so a later
 * large prompt sets a new one.
 */
export function updateIntroAnchor(state: SessionState, graph: Graph, threshold: number, promptTokens: () => number): number {
  if (state.introAt !== undefined) {
    const at = introIndex(graph, state);
    if (at < Infinity) return at;
    state.introAt = undefined;
  }
  const last = graph.messages[graph.messages.length - 1]?.info?.id;
  if (typeof last !== "string" || promptTokens() < threshold) return Infinity;
  state.introAt = last;
  return introIndex(graph, state);
}

/** Message index from which parts get ids: the anchor, or Infinity while there is none. */
export function introIndex(graph: Graph, state: SessionState): number {
  if (state.introAt === undefined) return Infinity;
  const msgs = graph.messages;
  for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i]?.info?.id === state.introAt) return i;
  return Infinity;
}

/** Appends the instructions to the anchor message (undoable). */
export function renderIntro(messages: Message[], state: SessionState, undo: Undo, graph?: Graph): void {
  if (state.introAt === undefined) return;
  // the graph's walk found the anchor's first place when it looked for this id (no second pass over the messages)
  const m = graph?.messages === messages && graph.anchorIndex !== undefined && graph.anchorIndex >= 0 && messages[graph.anchorIndex]?.info?.id === state.introAt ? messages[graph.anchorIndex] : messages.find((x) => x?.info?.id === state.introAt);
  if (!m || !Array.isArray(m.parts)) return;
  const part = { id: `${state.introAt}${INTRO_SUFFIX}`, sessionID: m.info.sessionID, messageID: state.introAt, type: "text", text: INTRO_TEXT, synthetic: true };
  const parts = m.parts.slice(); // no spread: a message may hold 100k+ parts
  parts.push(part as Message["parts"][number]);
  setUndoable(m, "parts", parts, undo);
}

/** The instructions part this plugin added (tests and reports tell it from the host's parts). */
export function isIntroPart(part: unknown): boolean {
  const p = part as { id?: unknown; type?: unknown; text?: unknown } | undefined;
  return p?.type === "text" && typeof p.id === "string" && p.id.endsWith(INTRO_SUFFIX) && p.text === INTRO_TEXT;
}
