// /undo and /redo step over the plugin's notices (src/host/undo.ts). The host here is a session
// kept in memory that reverts as OpenCode does (a revert point; unrevert clears it), and the TUI's
// two commands pick their target as OpenCode's TUI does: /undo the last user message before the
// revert point, /redo the first user message after it, or unrevert past the last.
import { describe, expect, it } from "vitest";
import type { Message } from "../../src/graph/types.js";
import { undoGuard, type UndoHost } from "../../src/host/undo.js";

const SID = "ses_undo";
let n = 0;
const msg = (role: "user" | "assistant", parts: Record<string, unknown>[]): Message => {
  const id = `msg_${String(++n).padStart(4, "0")}`;
  return { info: { id, sessionID: SID, role }, parts: parts.map((p, i) => ({ id: `prt_${id}_${i}`, sessionID: SID, messageID: id, ...p })) } as Message;
};
const prompt = (text: string) => msg("user", [{ type: "text", text }]);
const answer = (text: string) => msg("assistant", [{ type: "text", text }]);
const notice = (text = "「 ⚙️ 1(22) ▼ 」 acp: pruned this turn") => msg("user", [{ type: "text", text, ignored: true }]);

/** A session in memory, and a guard wired to it as the plugin wires it to the host. */
function session(messages: Message[]) {
  let revert: string | undefined;
  const prompts: string[] = [];
  const guard = undoGuard({
    messages: async () => messages,
    revert: async (_s, id) => void (revert = id),
    unrevert: async () => void (revert = undefined),
    setPrompt: async (t) => void prompts.push(t),
  });
  /** The host's session.updated events carry the session after each change. */
  const emit = () => guard.updated({ id: SID, revert: revert === undefined ? undefined : { messageID: revert } });
  const change = async (to: string | undefined) => {
    revert = to;
    // the guard's own revert emits another event, as the host would
    for (let last: string | undefined = "?"; last !== revert; ) {
      last = revert;
      await emit();
    }
  };
  const users = () => messages.filter((m) => m.info.role === "user");
  return {
    prompts,
    revert: () => revert,
    /** The TUI's /undo. */
    undo: () => change(users().filter((m) => revert === undefined || m.info.id < revert).at(-1)?.info.id ?? revert),
    /** The TUI's /redo. */
    redo: () => change(users().find((m) => revert !== undefined && m.info.id > revert)?.info.id),
  };
}

/** Two turns, each followed by a prune notice; ids in history order, as the host's are. */
function twoTurns() {
  const t1 = prompt("read notes.txt");
  const h = [t1, answer("done"), notice()];
  const t2 = prompt("change line two");
  h.push(t2, answer("changed"), notice());
  return [t1, t2, session(h)] as const;
}

describe("/undo and /redo with the plugin's notices", () => {
  it("an /undo after a turn with a notice reverts the turn, and the prompt box gets the user's text", async () => {
    const [t1, t2, s] = twoTurns();
    await s.undo();
    expect(s.revert()).toBe(t2.info.id);
    expect(s.prompts).toEqual(["change line two"]);
    await s.undo(); // a second /undo goes on to turn 1, past its notice
    expect(s.revert()).toBe(t1.info.id);
    expect(s.prompts.at(-1)).toBe("read notes.txt");
  });

  it("/redo goes forward over the notices: to the next message the user sent, then past the last", async () => {
    const [t1, t2, s] = twoTurns();
    await s.undo();
    await s.undo();
    expect(s.revert()).toBe(t1.info.id);
    await s.redo();
    expect(s.revert()).toBe(t2.info.id);
    await s.redo();
    expect(s.revert()).toBeUndefined(); // everything is back
  });

  it("leaves a revert to a message the user sent alone, and a notice with nothing the user sent before it", async () => {
    const t1 = prompt("read notes.txt");
    const plain = session([t1, answer("done")]);
    await plain.undo();
    expect(plain.revert()).toBe(t1.info.id);
    expect(plain.prompts).toEqual([]);
    const first = notice("acp: configuration problems");
    const only = session([first]);
    await only.undo();
    expect(only.revert()).toBe(first.info.id);
  });

  it("a message with the user's text and an ignored part (the configuration notice) is the user's own", async () => {
    const t1 = msg("user", [{ type: "text", text: "read notes.txt" }, { type: "text", text: "acp: configuration problems", ignored: true }]);
    const s = session([t1, answer("done")]);
    await s.undo();
    expect(s.revert()).toBe(t1.info.id);
    expect(s.prompts).toEqual([]);
  });
});
