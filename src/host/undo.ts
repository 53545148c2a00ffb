// OpenCode's /undo (TUI and app) reverts the session to its last user message and puts that
// message's text back in the prompt box; /redo moves the revert to the next user message, or
// removes it past the last. The plugin's notices (prune notifications, /acp replies) are user
// messages of ignored parts posted after a turn, so an undo would take the notice instead of the
// turn, and fill the prompt box with the notice. When a revert lands on such a notice, the plugin
// moves it on, as a second /undo (or /redo) would: to the user's own message before it (and puts
// that message's text in the prompt box), or, going forward, to the next one or past the last.
import { sentByUser, typedByUser } from "../graph/graph.js";
import type { Message } from "../graph/types.js";

export interface UndoHost {
  messages(sessionID: string): Promise<Message[]>;
  revert(sessionID: string, messageID: string): Promise<void>;
  unrevert(sessionID: string): Promise<void>;
  /** Replaces the prompt box's text in a TUI that shows the session (a no-op without one). */
  setPrompt(text: string): Promise<void>;
}

/** The session as a `session.updated` event carries it: its id and revert point. */
export interface RevertedSession {
  id?: unknown;
  revert?: { messageID?: unknown; partID?: unknown } | null;
}

/** Only ignored text: a notice (ours or another plugin's), not something the user sent. */
const noticeOnly = (m: Message) => m.info?.role === "user" && Array.isArray(m.parts) && m.parts.length > 0 && m.parts.every((p) => p?.type === "text" && p.ignored === true);

/** Tracks each session's revert point; `updated` handles one `session.updated` event. */
export function undoGuard(host: UndoHost) {
  /** Session → the revert point last seen (a later one is a /redo, an earlier one or none before an /undo). */
  const seen = new Map<string, string | undefined>();
  return {
    async updated(session: RevertedSession): Promise<void> {
      const sessionID = typeof session?.id === "string" ? session.id : undefined;
      if (!sessionID) return;
      const target = typeof session.revert?.messageID === "string" && session.revert.partID === undefined ? session.revert.messageID : undefined;
      const before = seen.get(sessionID);
      seen.set(sessionID, target);
      if (target === undefined || target === before) return;
      const messages = await host.messages(sessionID);
      const at = messages.findIndex((m) => m?.info?.id === target);
      if (at < 0 || !noticeOnly(messages[at])) return;
      // message ids ascend in time (the TUI compares them the same way)
      if (before !== undefined && target > before) {
        // /redo onto a notice: on to the next message the user sent, or past the last
        const next = messages.slice(at + 1).find(sentByUser);
        seen.set(sessionID, next?.info.id);
        if (next) await host.revert(sessionID, next.info.id);
        else await host.unrevert(sessionID);
        return;
      }
      let own: Message | undefined;
      for (let i = at - 1; i >= 0 && !own; i--) if (sentByUser(messages[i])) own = messages[i];
      if (!own) return;
      seen.set(sessionID, own.info.id);
      await host.revert(sessionID, own.info.id);
      await host.setPrompt(own.parts.filter(typedByUser).map((p) => p.text).join(""));
    },
    forget(sessionID: string): void {
      seen.delete(sessionID);
    },
  };
}
