// Turns of the message graph (graph/graph.ts): what ageTurns and idleTurns count.
import { describe, expect, it } from "vitest";
import { buildGraph } from "../../src/graph/graph.js";
import type { Message } from "../../src/graph/types.js";
import { OPENCODE } from "../../src/host/profile.js";

const S = "ses_turns";
let k = 0;
const msg = (role: string, text: string, extra: Record<string, unknown> = {}): Message => {
  const id = `msg_${String(++k).padStart(4, "0")}`;
  return { info: { id, sessionID: S, role }, parts: [{ id: `prt_${id}`, sessionID: S, messageID: id, type: "text", text, ...extra }] } as Message;
};

describe("turns", () => {
  it("user messages one after another (queued, or a harness's notices) are one turn: the agent answers them together", () => {
    const h = [msg("user", "fix it"), msg("assistant", "on it"), msg("user", "<task-notification>a</task-notification>"), msg("user", "<task-notification>b</task-notification>"), msg("user", "also the docs"), msg("assistant", "done")];
    const g = buildGraph(h, undefined, { host: OPENCODE });
    expect(g.nodes.map((n) => n.turn)).toEqual([1, 1, 2, 2, 2, 2]);
    expect(g.nodes[0].ageTurns).toBe(1);
    // the reasoning the provider drops is still placed by the last user message
    expect(g.lastUserMsgIndex).toBe(4);
  });

  it("a notice the plugin posts (ignored parts only) is no turn and does not join two turns", () => {
    const h = [msg("user", "fix it"), msg("assistant", "on it"), msg("user", "acp: pruned 3 outputs", { ignored: true }), msg("assistant", "more"), msg("user", "next")];
    expect(buildGraph(h, undefined, { host: OPENCODE }).nodes.map((n) => n.turn)).toEqual([1, 1, 1, 1, 2]);
  });
});
