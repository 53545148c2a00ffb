// A restore pins a part: no rule prunes it (in-full.ts untouchable), and its newer views stay in
// full beside it ("never stale over fresh"). The pin lasts until the thing is viewed again after the
// restore: the part is then one more stale view and goes with that view's supersede like any other.
// A pin for good would keep every later view of the thing in full for the rest of the session.
import { lastMessageIndex, type Graph, type PartNode } from "../graph/graph.js";
import { notePinEnded, type SessionState } from "./state.js";

/** How long a pin lasts, as the replies to a restore and explain say it. */
export const PIN_LASTS = "until a later call views the same thing again";

/** What releasePins reads of the session runtime (session.ts calls it from update). */
export interface PinnedRuntime {
  readonly state: SessionState;
  readonly graph: Graph;
  readonly parked: { clear(): void };
  newerViews(partId: string): PartNode[];
}

/** What a restore pins a part with: the newest message of `messages` (a view after it ends the pin), or true (none: for good). */
export function pinAt(messages: readonly { info?: { id?: unknown } }[] | undefined): string | true {
  const id = messages?.[messages.length - 1]?.info?.id;
  return typeof id === "string" ? id : true;
}

/** Is the part pinned now (restored, and not viewed again since)? */
export const isPinned = (state: SessionState, partId: string): boolean => {
  const at = state.pinned?.[partId];
  return at === true || typeof at === "string";
};

/**
 * Ends the pins whose part has a newer view of the same thing (SessionRuntime.newerViews) in a
 * message after the one the pin names. A pin whose message is not in the history (compacted away,
 * say) stays. Runs once the runtime has processed a new graph, before the phases.
 */
export function releasePins(rt: PinnedRuntime): void {
  const pins = rt.state.pinned;
  if (!pins) return;
  let ended = false;
  for (const [partId, at] of Object.entries(pins)) {
    if (typeof at !== "string") continue;
    const newest = rt.newerViews(partId).at(-1);
    if (newest === undefined) continue;
    const restoredAt = lastMessageIndex(rt.graph, at);
    if (restoredAt < 0 || newest.msgIndex <= restoredAt) continue;
    delete pins[partId];
    notePinEnded(rt.state, partId);
    ended = true;
  }
  // a want parked behind the pinned view (parked.ts) is blocked no longer
  if (ended) rt.parked.clear();
}
