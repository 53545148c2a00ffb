// The live regret signal (engine/regret.ts): re-runs of calls whose output was hidden, restores by
// the agent and by the user, kept in the session state, and the back-off of a rule that keeps
// causing regret.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { regretByRule } from "../../src/engine/regret.js";
import type { Message } from "../../src/graph/types.js";
import { assistant, bigText, replay, SID, toolPart, user } from "../helpers/session.js";

/** A rule that clears every output once a newer call exists, applied at once (minTokens 0). */
const config = (regretLimit: number) => ({ tool: false, commit: { minTokens: 0, regretLimit }, rules: { "mask-old-outputs": { with: { keepCalls: 1, text: "[cleared]" } } } });
const big = (id: string, command: string, label = command) => ({ tool: "bash", input: { command, description: "d" }, output: bigText(label), id });

/** go: cat one, cat two, then cat one again (a re-run of a cleared output), then a last answer. */
function history(): Message[] {
  return [user("go"), assistant([big("prt_a", "cat one")]), assistant([big("prt_b", "cat two")]), assistant([big("prt_a2", "cat one", "one again")]), assistant([], "done")];
}

const counts = (p: ReturnType<typeof createPruner>) => Object.fromEntries(regretByRule(p.state(SID)));

describe("regret: re-runs", () => {
  it("a call re-run with the same tool and input while its earlier output was hidden is one event of the rule that hid it", () => {
    const p = createPruner({ config: config(0) });
    const calls = replay(history(), (m) => p.transform(m));
    expect(toolPart(calls[2], "prt_a")?.state?.output).toBe("[cleared]"); // hidden when the model ran it again
    expect(Object.values(p.state(SID).regret ?? {})).toEqual([{ rule: "mask-old-outputs", kind: "rerun", part: "prt_a" }]);
    expect(counts(p)).toEqual({ "mask-old-outputs": { agent: 0, user: 0, rerun: 1 } });
  });

  it("a re-run of an output still sent in full, or of another input, is no event", () => {
    const h = [user("go"), assistant([big("prt_a", "cat one")]), assistant([big("prt_a2", "cat one")]), assistant([big("prt_c", "cat three")]), assistant([], "done")];
    const p = createPruner({ config: config(0) });
    replay(h, (m) => p.transform(m));
    expect(p.state(SID).regret ?? {}).toEqual({});
  });

  it("the same input with its keys in another order is the same call; another tool with the same input is not", () => {
    const reordered = { tool: "bash", input: { description: "d", command: "cat one" }, output: bigText("again"), id: "prt_a2" };
    const other = { tool: "shell", input: { command: "cat one", description: "d" }, output: bigText("shell"), id: "prt_s" };
    const h = [user("go"), assistant([big("prt_a", "cat one")]), assistant([big("prt_b", "cat two")]), assistant([other]), assistant([reordered]), assistant([], "done")];
    const p = createPruner({ config: config(0) });
    replay(h, (m) => p.transform(m));
    expect(Object.keys(p.state(SID).regret ?? {})).toEqual(["rerun:prt_a2"]);
  });

  it("a re-run of an output superseded by a newer part (a newer view stands in for it) is no event", () => {
    // the second `cat one` supersedes the first (identical-call, by the newer part); the third runs
    // while the second is in full
    const h = [user("go"), assistant([big("prt_a", "cat one")]), assistant([big("prt_a2", "cat one")]), assistant([big("prt_a3", "cat one")]), assistant([], "done")];
    const p = createPruner({ config: { tool: false, commit: { minTokens: 0 } } });
    const calls = replay(h, (m) => p.transform(m));
    expect(toolPart(calls[3], "prt_a")?.state?.output).toContain("superseded");
    expect(p.state(SID).regret ?? {}).toEqual({});
  });

  // a one-line fix: short strings, an output that shows nothing of the file
  const edit = (id: string, filePath: string) => ({ tool: "edit", input: { filePath, oldString: "a + b + 1", newString: "a + b" }, output: "Edit applied successfully.", id });
  const read = (id: string, filePath: string, label: string) => ({ tool: "read", input: { filePath }, output: bigText(label), id });

  it("a re-run after a call in between changed what it looks at is no event: the tests run again after an edit", () => {
    const test = (id: string, label: string) => big(id, "sh test.sh", label);
    const h = [user("go"), assistant([test("prt_t1", "FAIL")]), assistant([edit("prt_e", "src/calc.ts")]), assistant([test("prt_t2", "PASS")]), assistant([], "done")];
    const p = createPruner({ config: config(0) });
    const calls = replay(h, (m) => p.transform(m));
    expect(toolPart(calls[3], "prt_t1")?.state?.output).toBe("[cleared]"); // hidden when the model ran the tests again
    expect(p.state(SID).regret ?? {}).toEqual({});
  });

  it("a re-read counts unless its own file changed in between", () => {
    const run = (between: string) => {
      const h = [user("go"), assistant([read("prt_r1", "src/calc.ts", "calc")]), assistant([edit("prt_e", between)]), assistant([read("prt_r2", "src/calc.ts", "calc again")]), assistant([], "done")];
      const p = createPruner({ config: config(0) });
      replay(h, (m) => p.transform(m));
      return Object.keys(p.state(SID).regret ?? {});
    };
    expect(run("src/other.ts")).toEqual(["rerun:prt_r2"]);
    expect(run("src/calc.ts")).toEqual([]);
  });

  it("is counted once, however often the same history comes again, and survives a restart", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-regret-"));
    const h = history();
    const one = createPruner({ config: config(0), stateDir: dir });
    replay(h, (m) => one.transform(m));
    one.transform(structuredClone(h));
    const two = createPruner({ config: config(0), stateDir: dir });
    two.transform(structuredClone(h));
    expect(counts(two)).toEqual({ "mask-old-outputs": { agent: 0, user: 0, rerun: 1 } });
  });
});

describe("regret: restores", () => {
  it("counts the agent's context_prune restore and the user's /acp restore apart, against the rule that pruned the part", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-regret-"));
    const h = [user("go"), assistant([big("prt_a", "cat one")]), assistant([big("prt_b", "cat two")]), assistant([big("prt_c", "cat three")]), assistant([], "done")];
    const p = createPruner({ config: config(0), stateDir: dir });
    replay(h, (m) => p.transform(m));
    expect(p.state(SID).decisions.prt_a?.output?.rule).toBe("mask-old-outputs");
    expect(p.restore(SID, "prt_a", "user")).toBe(true);
    expect(p.manual(SID, { action: "restore", targets: ["prt_b"] }, h).text).toContain("restored");
    expect(p.restore(SID, "prt_a", "user")).toBe(false); // not pruned any more: no event
    expect(counts(p)).toEqual({ "mask-old-outputs": { agent: 1, user: 1, rerun: 0 } });
    // kept in the state on disk: a new process reads the same counts
    const again = createPruner({ config: config(0), stateDir: dir });
    expect(counts(again)).toEqual({ "mask-old-outputs": { agent: 1, user: 1, rerun: 0 } });
  });

  it("a restore of the agent's own prune counts against manual", () => {
    const h = [user("go"), assistant([big("prt_a", "cat one")]), assistant([], "ok")];
    const p = createPruner({ config: { tool: true, idsFromTokens: 0 } });
    replay(h, (m) => p.transform(m));
    p.manual(SID, { action: "discard", targets: ["prt_a"] }, h);
    p.transform(structuredClone(h));
    expect(p.state(SID).decisions.prt_a?.output?.rule).toBe("manual");
    p.manual(SID, { action: "restore", targets: ["prt_a"] }, h);
    expect(counts(p)).toEqual({ manual: { agent: 1, user: 0, rerun: 0 } });
  });
});

describe("regret: back-off", () => {
  it("a rule with regretLimit events in a session decides no new parts there; what it decided stays", () => {
    // at the last call prt_b is out of the window: cleared without back-off, left in full with it
    const off = createPruner({ config: config(0) });
    const plain = replay(history(), (m) => off.transform(m));
    expect(toolPart(plain[3], "prt_b")?.state?.output).toBe("[cleared]");

    const on = createPruner({ config: config(1) });
    const backed = replay(history(), (m) => on.transform(m));
    expect(toolPart(backed[3], "prt_b")?.state?.output).toBe(bigText("cat two"));
    expect(toolPart(backed[3], "prt_a")?.state?.output).toBe("[cleared]"); // decided before: sticky
    expect(toolPart(backed[3], "prt_a2")?.state?.output).toBe(bigText("one again"));
  });

  /** Two events: a limit of 3 leaves prt_c cleared, a limit of 2 backs the rule off before prt_c is. */
  function expectBackOffAtTwo(run: (limit: number) => { last: Message[]; events: number }): void {
    const below = run(3);
    expect(below.events).toBe(2);
    expect(toolPart(below.last, "prt_c")?.state?.output).toBe("[cleared]");
    const at = run(2);
    expect(at.events).toBe(2);
    expect(toolPart(at.last, "prt_c")?.state?.output).toBe(bigText("cat three"));
  }

  // The back-off set is kept between calls (regret.ts BackedOff): each event after the first goes
  // into the same record, so these fail if a later event does not recount it.
  it("a later re-run reaching the limit backs the rule off from the call that sees it", () => {
    // prt_a and prt_b re-run one after the other while cleared: two events
    const h = [user("go"), assistant([big("prt_a", "cat one")]), assistant([big("prt_b", "cat two")]), assistant([big("prt_a2", "cat one", "one again")]), assistant([big("prt_b2", "cat two", "two again")]), assistant([big("prt_c", "cat three")]), assistant([big("prt_d", "cat four")]), assistant([], "done")];
    const run = (limit: number) => {
      const p = createPruner({ config: config(limit) });
      const calls = replay(h, (m) => p.transform(m));
      return { last: calls[calls.length - 1], events: Object.keys(p.state(SID).regret ?? {}).length };
    };
    expectBackOffAtTwo(run);
  });

  it("a restore reaching the limit backs the rule off on the next call", () => {
    const h = [user("go"), assistant([big("prt_a", "cat one")]), assistant([big("prt_b", "cat two")]), assistant([big("prt_a2", "cat one", "one again")]), assistant([big("prt_c", "cat three")]), assistant([big("prt_d", "cat four")]), assistant([], "done")];
    const run = (limit: number) => {
      const p = createPruner({ config: config(limit) });
      const calls = replay(h, (m) => {
        // the call after prt_a2's re-run event: the user restores prt_b (cleared by then), a second event
        if (m.length === 5) expect(p.restore(SID, "prt_b", "user")).toBe(true);
        p.transform(m);
      });
      return { last: calls[calls.length - 1], events: Object.keys(p.state(SID).regret ?? {}).length };
    };
    expectBackOffAtTwo(run);
  });

  it("does not back off below the limit", () => {
    const p = createPruner({ config: config(2) });
    const calls = replay(history(), (m) => p.transform(m));
    expect(toolPart(calls[3], "prt_b")?.state?.output).toBe("[cleared]");
  });

  it("the default limit is 3 events per rule and session", () => {
    const p = createPruner({ config: { tool: false } });
    expect(p.resolved.commit.regretLimit).toBe(3);
  });
});
