// Replays a recorded session call by call, as OpenCode would have sent it with a pruner installed
// (docs/simulate.md, Replay): each assistant message i is one model call whose context is messages[0..i).
import type { ExplainEntry, Pruner } from "../engine/api.js";
import type { Message } from "../graph/types.js";
import type { Session } from "./load.js";
import type { HostProfile } from "../graph/host.js";
import { renderPrompt, type Unit } from "../graph/prompt.js";

export interface ReplayOptions {
  /** The host whose prompt is replayed (its placeholders and error names; src/host/profile.ts OPENCODE). */
  host: HostProfile;
  /**
   * Creates the pruner under test. Called once per session replay, so per-session state persists between
   * calls (one OpenCode process); in `restart` mode called before every call instead. Omit for no pruning.
   */
  pruner?: () => Pruner;
  /** A new pruner for every call (a new OpenCode process per prompt): it must restore its state from disk. */
  restart?: boolean;
  /** Prompt-cache lifetime the cost figures assume (minutes; 0: never expires). Default 5. */
  cacheTtlMinutes?: number;
}

export interface ReplayedCall {
  /** Position of the call's assistant message in `session.messages`. */
  index: number;
  /** The assistant message this call produced, as recorded. */
  message: Message;
  /** The recorded context, messages[0..index); shared with the session, never mutate it. */
  context: Message[];
  /** The context after the pruner's transform (a deep copy); `context` itself when there is no pruner. */
  pruned: Message[];
  /** Text the pruner adds to the system prompt for this call ("" without a pruner). */
  systemText: string;
  /** The prompt as the provider receives it. */
  units: Unit[];
  /** Milliseconds spent inside `transform` (performance.now()); 0 without a pruner. */
  transformMs: number;
  /** The pruner's `explain` after this call; [] without a pruner. */
  explain: ExplainEntry[];
}

/** The session id a pruner sees: OpenCode's transform hook only has `messages[0].info.sessionID`. */
export function sessionIdOf(session: Session): string {
  return session.messages[0]?.info.sessionID ?? session.id;
}

/** When a call was made: its assistant message's recorded creation time (ms), if recorded. */
export function callTime(message: Message): number | undefined {
  const t = (message.info.time as { created?: unknown } | undefined)?.created;
  return typeof t === "number" ? t : undefined;
}

/** Yields one ReplayedCall per assistant message, in order. Lazily, so only one prompt is held at a time. */
export function* replaySession(session: Session, options: ReplayOptions): Generator<ReplayedCall> {
  const sessionID = sessionIdOf(session);
  let pruner: Pruner | undefined;
  for (let index = 0; index < session.messages.length; index++) {
    const message = session.messages[index];
    if (message.info.role !== "assistant") continue;
    const context = session.messages.slice(0, index);
    if (!options.pruner) {
      yield { index, message, context, pruned: context, systemText: "", units: renderPrompt(context, options.host), transformMs: 0, explain: [] };
      continue;
    }
    if (!pruner || options.restart) pruner = options.pruner();
    // OpenCode hands the hook a freshly loaded copy of the history on every step.
    const pruned = deepCopy(context);
    const start = performance.now();
    const now = callTime(message);
    pruner.transform(pruned, now !== undefined ? { now } : {});
    const transformMs = performance.now() - start;
    const systemText = pruner.systemPrompt(sessionID);
    const explain = pruner.explain(sessionID);
    yield { index, message, context, pruned, systemText, units: renderPrompt(pruned, options.host, systemText), transformMs, explain };
  }
}

/**
 * A deep copy of JSON data (what a session file holds): every object and array is new, strings are
 * shared because they are immutable. Same result as structuredClone for such data, about 5× faster on
 * the corpus, since structuredClone also copies every string's characters.
 */
export function deepCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(deepCopy) as T;
  if (value !== null && typeof value === "object") {
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) copy[key] = deepCopy((value as Record<string, unknown>)[key]);
    return copy as T;
  }
  return value;
}

export interface PromptMismatch {
  /** Index of the first call whose prompts differ. */
  index: number;
  messageId: string;
  /** Index of the first differing unit (or the shorter prompt's length). */
  unit: number;
}

/**
 * Replays a session twice in lockstep and reports the first call whose prompts differ, or null. Used to
 * check that restart mode (state restored from disk) gives the same prompts as one long-lived process.
 */
export function comparePrompts(session: Session, a: ReplayOptions, b: ReplayOptions): PromptMismatch | null {
  const left = replaySession(session, a);
  const right = replaySession(session, b);
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done || y.done) return null;
    const unit = firstDifference(x.value.units, y.value.units);
    if (unit !== -1) return { index: x.value.index, messageId: x.value.message.info.id, unit };
  }
}

function firstDifference(a: Unit[], b: Unit[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i].partId !== b[i].partId || a[i].text !== b[i].text) return i;
  }
  return a.length === b.length ? -1 : n;
}
