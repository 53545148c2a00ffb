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

describe("carrying nodes over", () => {
  const history = () => [msg("user", "fix it"), msg("assistant", "on it"), msg("user", "next"), msg("assistant", "done")];
  const shape = (g: ReturnType<typeof buildGraph>) => g.nodes.map((n) => [n.index, n.part.id, n.msgIndex, n.turn]);

  it("new parts after every carried-over node extend the graph; the nodes before are the previous graph's", () => {
    const h = history();
    const g1 = buildGraph(h.slice(0, 2), undefined, { host: OPENCODE });
    const g2 = buildGraph(h, g1, { host: OPENCODE });
    expect(g2.reused).toBe(2);
    expect(g2.nodes[0]).toBe(g1.nodes[0]);
    expect(shape(g2)).toEqual(shape(buildGraph(h, undefined, { host: OPENCODE })));
    expect(g2.byId.get(h[3].parts[0].id)).toBe(g2.nodes[3]);
  });

  it("a fault while new parts are added leaves the previous graph whole, and the next walk builds as from scratch", () => {
    const h = history();
    const g1 = buildGraph(h.slice(0, 2), undefined, { host: OPENCODE });
    const before = shape(g1);
    // the fourth message's parts throw once: the walk has added the third message's node by then
    const faulty = [...h];
    const parts = h[3].parts;
    let armed = true;
    faulty[3] = { info: h[3].info, get parts() { if (armed) { armed = false; throw new Error("injected fault"); } return parts; } } as Message;
    expect(() => buildGraph(faulty, g1, { host: OPENCODE })).toThrow("injected fault");
    expect(shape(g1)).toEqual(before);
    const g2 = buildGraph(faulty, g1, { host: OPENCODE });
    expect(g2.reused).toBe(before.length); // what the walk compares was cut back with the nodes
    expect(shape(g2)).toEqual(shape(buildGraph(h, undefined, { host: OPENCODE })));
    for (const n of g2.nodes) expect(g2.byId.get(n.part.id)).toBe(n);
  });
});

describe("anchors", () => {
  it("the walk reports the first place of each asked message id, carried-over or new, and -1 for one it does not meet", () => {
    const h = [msg("user", "go"), msg("assistant", "a"), msg("assistant", "b"), msg("user", "next")];
    // a later message repeating an id: the first place is the one reported
    h.push({ ...msg("assistant", "c"), info: { ...h[1].info } });
    const g = buildGraph(h, undefined, { host: OPENCODE, anchor: h[2].info.id, anchor2: h[1].info.id });
    expect([g.anchorIndex, g.anchorIndex2, g.anchor2]).toEqual([2, 1, h[1].info.id]);
    const next = buildGraph([...h, msg("assistant", "d")], g, { host: OPENCODE, anchor: "msg_none", anchor2: h[3].info.id });
    expect([next.anchorIndex, next.anchorIndex2]).toEqual([-1, 3]);
  });
});
