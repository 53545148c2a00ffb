// How an /acp command ends. OpenCode 1.18.33 gives a plugin no way to answer a slash command
// without a model call other than failing the command: `SessionPrompt.command`
// (packages/opencode/src/session/prompt.ts) triggers `command.execute.before` with `{ parts }` as
// its only output and then always calls `prompt()` without `noReply` (docs/plugin.md, "/acp from
// `opencode run`", has the evidence). So the plugin throws once it has stored its answer, and the
// client sees an error and `opencode run` exits 1.
//
// The error is made readable rather than "Unexpected server error" with a stack trace in the log:
// the host's server answers a failure whose `name` is one of its configuration errors with that
// error's own `toObject()` (status 400, nothing logged; `NamedError.isInstance` compares names),
// and `opencode run` prints the `message` of a body tagged `CliError` as `Error: <message>`. The
// body keeps the host's UnknownError shape, so other clients show `data.message`. If a later host
// changes either, the command still ends, with the host's generic error.

/** The name the host's server passes through (a configuration error, `ConfigFrontmatterError`). */
const PASSED_THROUGH = "ConfigFrontmatterError";

/** The error that ends a handled /acp command; `message` is what the user reads. */
export function commandHandled(message: string): Error {
  const body = { name: "UnknownError", _tag: "CliError", message, data: { message } };
  return Object.assign(new Error(message), { name: PASSED_THROUGH, toObject: () => body });
}

/** What the error says: the command was answered, and why it ends as an error. */
export function handledMessage(subcommand: string): string {
  return `acp: /acp ${subcommand} answered (the reply is above and in the session). OpenCode ends a plugin's command this way: it has no other means to skip the model call.`;
}

/**
 * Lets the host's event stream deliver the stored answer before the command fails: without a
 * pause `opencode run` received the failure first and exited without printing the answer (0 of
 * 6 runs); after one macrotask it printed it every time (6 of 6).
 */
export const beforeFailing = () => new Promise<void>((resolve) => setTimeout(resolve, 50));

/** The longest a handled command waits for its answer to be published (a later host may not say). */
export const NOTICE_WAIT_MS = 2000;

/**
 * Waits for the host to publish a stored answer (`message.part.updated` of its finished text part)
 * before the command fails: under load the publication came later than a fixed pause, and
 * `opencode run` exited without printing the answer (1 run in 17 in the session-24 live audit).
 */
export class NoticeWatch {
  private readonly waiting = new Map<string, { text: string; done: () => void }[]>();

  /** Resolves once `seen` gets the finished text part `text` of the session, or after `capMs`. */
  expect(sessionID: string, text: string, capMs = NOTICE_WAIT_MS): Promise<void> {
    return new Promise<void>((resolve) => {
      const list = this.waiting.get(sessionID) ?? [];
      const entry = { text, done: () => finish() };
      const timer = setTimeout(() => finish(), capMs);
      const finish = () => {
        clearTimeout(timer);
        const rest = (this.waiting.get(sessionID) ?? []).filter((e) => e !== entry);
        if (rest.length > 0) this.waiting.set(sessionID, rest);
        else this.waiting.delete(sessionID);
        resolve();
      };
      list.push(entry);
      this.waiting.set(sessionID, list);
    });
  }

  /** A part the host published (the `message.part.updated` event's `part`). */
  seen(part: unknown): void {
    const p = part as { sessionID?: unknown; type?: unknown; text?: unknown; time?: { end?: unknown } } | undefined;
    if (!p || p.type !== "text" || typeof p.sessionID !== "string" || p.time?.end === undefined) return;
    for (const e of this.waiting.get(p.sessionID) ?? []) if (e.text === p.text) e.done();
  }
}
