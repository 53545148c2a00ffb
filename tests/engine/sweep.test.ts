// /acp sweep (src/engine/sweep.ts): which outputs the user's sweep discards and how it counts those
// it leaves alone, on a graph and a state of its own (the host's replies are in tests/host/commands.test.ts).
import { describe, expect, it } from "vitest";
import { buildGraph } from "../../src/graph/graph.js";
import { OPENCODE } from "../../src/host/profile.js";
import { newState } from "../../src/engine/state.js";
import { applySweep } from "../../src/engine/sweep.js";
import type { Holder } from "../../src/engine/holders.js";
import { assistant, bigText, SID, user } from "../helpers/session.js";

const history = () => [
  user("go"),
  assistant([{ tool: "read", input: { filePath: "/w/old.ts" }, output: bigText("old"), id: "prt_old" }]),
  user("now this"),
  assistant([
    { tool: "bash", input: { command: "npm test" }, output: bigText("tests"), id: "prt_big" },
    { tool: "read", input: { filePath: "/w/.env" }, output: bigText("env"), id: "prt_env" },
    { tool: "bash", input: { command: "pwd" }, output: "/w", id: "prt_small" },
    { tool: "grep", input: { pattern: "x" }, output: bigText("grep"), id: "prt_done" },
    { tool: "read", input: { filePath: "/w/a.ts" }, output: bigText("a"), id: "prt_held" },
  ]),
];

const graph = () => buildGraph(history(), undefined, { host: OPENCODE });
const protection = (partId: string) => (partId === "prt_env" ? "protected-files" : undefined);
const none = () => [] as Holder[];

describe("applySweep", () => {
  it("discards the outputs since the user's last message, leaving alone what is pruned, protected, too small or held", () => {
    const state = newState(SID);
    state.manual = { prt_done: { action: "discard" } };
    const holder: Holder = { partId: "prt_old", why: "restored" };
    const r = applySweep(state, graph(), undefined, protection, (p) => (p === "prt_held" ? [holder] : []));
    expect(r).toMatchObject({ parts: 1, already: 1, protected: 1, small: 1, held: { parts: 1, holders: [holder] } });
    expect(r.tokens).toBeGreaterThan(1000);
    expect(state.manual).toEqual({ prt_done: { action: "discard" }, prt_big: { action: "discard", by: "user" } });
  });

  it("n: the newest n completed outputs, across the user's messages; a restored part is un-pinned", () => {
    const state = newState(SID);
    state.pinned = { prt_old: true };
    const r = applySweep(state, graph(), 6, () => undefined, none);
    expect(r).toMatchObject({ parts: 5, small: 1, already: 0, protected: 0 });
    expect(r.held).toBeUndefined();
    expect(Object.keys(state.manual ?? {}).sort()).toEqual(["prt_big", "prt_done", "prt_env", "prt_held", "prt_old"]);
    expect(state.pinned).toEqual({});
    // a second sweep counts each once: all of them are asked for already
    expect(applySweep(state, graph(), 6, () => undefined, none)).toMatchObject({ parts: 0, tokens: 0, already: 5, small: 1 });
  });
});
