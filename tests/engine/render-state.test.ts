import { describe, expect, it } from "vitest";
import { buildGraph } from "../../src/graph/graph.js";
import { OPENCODE } from "../../src/host/profile.js";
import { PLAN_UNSET, RenderState } from "../../src/engine/render-state.js";
import { generateSession } from "./session-gen.js";

describe("RenderState", () => {
  const g = buildGraph(generateSession({ seed: 2, turns: 6, stepsPerTurn: 1, toolsPerStep: 3 }), undefined, { host: OPENCODE });
  const at = (...is: number[]) => is.map((i) => g.nodes[i]);

  it("lists the positions with a view ascending, however they were added", () => {
    const rs = new RenderState();
    for (const n of at(5, 9)) rs.of(n);
    expect(rs.positions()).toEqual([5, 9]);
    for (const n of at(12, 3, 7, 9, 20)) rs.of(n); // older nodes (a first decision on a part seen before) and one already listed
    expect(rs.positions()).toEqual([3, 5, 7, 9, 12, 20]);
    for (const n of at(21, 22)) rs.of(n);
    expect(rs.positions()).toEqual([3, 5, 7, 9, 12, 20, 21, 22]);
    expect(rs.views.length).toBe(23);
    expect(rs.views.filter((v) => v !== undefined).length).toBe(8);
  });

  it("a change plans the node again and marks it for a fresh render; a view remembers the pass that made it", () => {
    const rs = new RenderState();
    const [n] = at(4);
    const v = rs.of(n);
    expect([v.since, v.dirty, v.kind, v.mi, v.pi]).toEqual([0, true, PLAN_UNSET, n.msgIndex, n.partIndex]);
    v.kind = 1;
    v.dirty = false;
    rs.pass = 3;
    rs.changed(n);
    expect(rs.of(n)).toBe(v);
    expect([v.since, v.dirty, v.kind]).toEqual([0, true, PLAN_UNSET]);
    expect(rs.of(at(6)[0]).since).toBe(3);
  });
});
