// Why a part is not pruned: the rules that consider it and where each stands on the last call.
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message } from "../../src/graph/types.js";
import { describeStanding, failingLeaves } from "../../src/engine/why-not.js";
import { newState, type SessionState } from "../../src/engine/state.js";
import { assistant, bigText, editLastTurn, SID, user } from "../helpers/session.js";

/** Every call of the session, as the host makes them; the pruner keeps its runtime for why(). */
function run(p: ReturnType<typeof createPruner>, h: Message[]): void {
  for (let i = 0; i <= h.length; i++) if (i === h.length || h[i].info.role === "assistant") p.transform(structuredClone(h.slice(0, i)));
}
// no prefix change may commit inside the turn: pending decisions wait
const held = { idsFromTokens: 0, tool: false, commit: { minTokens: 1_000_000, breakEven: 0, pressureTokens: 0 } };

describe("why a part is not pruned", () => {
  const session = (): Message[] => [
    user("go"),
    assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls one", 40), id: "prt_ls1" }]),
    assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls two", 40), id: "prt_ls2" }]),
    assistant([{ tool: "bash", input: { command: "pwd" }, output: "/w", id: "prt_pwd1" }]),
    assistant([{ tool: "bash", input: { command: "pwd" }, output: "/w", id: "prt_pwd2" }]),
    assistant([{ tool: "todowrite", input: { todos: [] }, output: bigText("todo", 20), id: "prt_todo" }]),
    assistant([{ tool: "read", input: { filePath: "/w/a.ts" }, output: bigText("a.ts"), id: "prt_read" }]),
    assistant([{ tool: "read", input: { filePath: "/w/package.json" }, output: bigText("pkg one"), id: "prt_pkg1" }]),
    assistant([{ tool: "read", input: { filePath: "/w/package.json" }, output: bigText("pkg two"), id: "prt_pkg2" }]),
    assistant([], "done"),
  ];

  it("a superseded view whose change the commit policy holds waits, naming the newer view and the tokens", () => {
    const p = createPruner({ preset: "verbose", config: held });
    run(p, session());
    const why = p.why(SID, "prt_ls1")!;
    expect(why.decisions).toEqual([]);
    const first = why.standing![0];
    expect(first).toMatchObject({ standing: "waiting", by: "prt_ls2", phase: "supersede" });
    expect(first.tokens).toBeGreaterThan(500);
    expect(describeStanding(first)).toMatch(new RegExp(`^${first.id}: matches \\(superseded by prt_ls2\\); waits for the commit policy \\(would save [\\d,]+ tokens\\)`));
  });

  it("a supersede whose change saves too little is not worth it; the newest view has no newer one", () => {
    const p = createPruner({ preset: "verbose", config: held });
    run(p, session());
    expect(p.why(SID, "prt_pwd1")!.standing!.find((s) => s.by === "prt_pwd2")?.standing).toBe("not-worth");
    const newest = p.why(SID, "prt_pwd2")!.standing!;
    expect(newest.some((s) => s.standing === "waiting")).toBe(false);
    expect(newest.find((s) => s.id === "identical-call")).toMatchObject({ standing: "no-newer-view", key: 'bash:{"command":"pwd"}' });
  });

  it("a rule whose action would change nothing worth it is not worth it, not waiting (a short command for stale-long-command)", () => {
    const p = createPruner({ preset: "balanced", config: held });
    const h = [user("go"), assistant([{ tool: "bash", input: { command: "sh run-tests.sh" }, output: "FAIL: 1 test", id: "prt_short" }]), assistant([], "ran"), user("next"), assistant([], "ok")];
    run(p, h);
    const long = p.why(SID, "prt_short")!.standing!.find((s) => s.id === "stale-long-command");
    expect(long).toMatchObject({ standing: "not-worth" });
    // a new process (`opencode run --command acp explain`) reads it from the history alone
    const fresh = createPruner({ preset: "balanced", config: held }).why(SID, "prt_short", h)!.standing!.find((s) => s.id === "stale-long-command");
    expect(fresh).toMatchObject({ standing: "not-worth" });
  });

  it("a protected tool's output: the protect rule says so first", () => {
    const p = createPruner({ preset: "balanced", config: held });
    run(p, session());
    const standing = p.why(SID, "prt_todo")!.standing!;
    expect(standing[0]).toMatchObject({ id: "protected-tools", standing: "protected", phase: "protect" });
    expect(describeStanding(standing[0])).toBe("protected-tools: protects it");
    // a protected file read again: the supersede that matches does not wait, it is held by protection
    const pkg = p.why(SID, "prt_pkg1")!.standing!;
    expect(pkg[0]).toMatchObject({ id: "protected-files", standing: "protected" });
    const supersede = pkg.find((s) => s.by === "prt_pkg2")!;
    expect(supersede.standing).toBe("protected");
    expect(describeStanding(supersede)).toBe(`${supersede.id}: matches, but the part is protected (the rule does not override protection)`);
  });

  // protected-tools protects edits and writes, but stale-edit-result overrides protection: for an
  // edit's result it is that rule's own verdict, not the protection, that decides
  it("an edit's result: the rule that overrides protection comes first and says why it does not prune; the protect rule names it", () => {
    const p = createPruner({ preset: "balanced", config: held });
    run(p, editLastTurn());
    const standing = p.why(SID, "prt_edit")!.standing!;
    expect(standing.slice(0, 2)).toMatchObject([
      { id: "stale-edit-result", standing: "not-worth", overrides: ["protected-tools"], change: { slot: "output", before: 26 } },
      { id: "protected-tools", standing: "protected", overriddenBy: ["stale-edit-result"] },
    ]);
    const { after } = standing[0].change as { after: number };
    expect(after).toBeGreaterThan(26); // the breadcrumb is longer than the confirmation it replaces
    expect(standing.slice(0, 2).map(describeStanding)).toEqual([
      `stale-edit-result: matches (it overrides protected-tools), but its change would not shrink the part: its output, 26 chars, would become ${after} chars`,
      "protected-tools: protects it from every rule but stale-edit-result, which overrides protection",
    ]);
    // a longer result of the same kind: the same rule waits for the commit policy, still ahead of the protection
    const q = createPruner({ preset: "balanced", config: held });
    run(q, editLastTurn(bigText("diagnostics", 20)));
    const waiting = q.why(SID, "prt_edit")!.standing!;
    expect(waiting[0]).toMatchObject({ id: "stale-edit-result", standing: "waiting" });
    expect(describeStanding(waiting[0])).toMatch(/^stale-edit-result: matches \(it overrides protected-tools\); waits for the commit policy \(would save [\d,]+ tokens\)/);
    expect(describeStanding(waiting[1])).toBe("protected-tools: protects it from every rule but stale-edit-result, which overrides protection");
  });

  it("a change that would shrink the part by too little says by how much; an action that changes nothing says so", () => {
    const p = createPruner({ preset: "verbose", config: held });
    run(p, [
      user("go"),
      assistant([{ tool: "bash", input: { command: "pwd" }, output: "/w", id: "prt_pwd1" }]),
      assistant([{ tool: "bash", input: { command: "pwd" }, output: "/w", id: "prt_pwd2" }]),
      assistant([], "done"),
    ]);
    const identical = p.why(SID, "prt_pwd1")!.standing!.find((s) => s.id === "identical-call")!;
    expect(identical).toMatchObject({ standing: "not-worth", change: { slot: "output", before: 2 } });
    expect(describeStanding(identical)).toMatch(/^identical-call: matches, but its change would not shrink the part: its output, 2 chars, would become \d+ chars$/);
    const q = createPruner({ preset: "balanced", config: held });
    run(q, [user("go"), assistant([{ tool: "bash", input: { command: "sh run-tests.sh" }, output: "FAIL: 1 test", id: "prt_short" }]), assistant([], "ran"), user("next"), assistant([], "ok")]);
    const long = q.why(SID, "prt_short")!.standing!.find((s) => s.id === "stale-long-command")!;
    // strip-input leaves an input under its minChars as it is
    expect(long).toMatchObject({ standing: "not-worth", change: { none: "strip-input" } });
    expect(describeStanding(long)).toBe("stale-long-command: matches, but its action (strip-input) would leave the part as it is");
  });

  it("an age rule that does not match yet names the leaves that fail, with their values", () => {
    const p = createPruner({ preset: "balanced", config: held });
    run(p, session());
    const staleRead = p.why(SID, "prt_read")!.standing!.find((s) => s.id === "stale-read")!;
    expect(staleRead.standing).toBe("no-match");
    expect(failingLeaves(staleRead.when)).toEqual(expect.arrayContaining(["ageTurns = 0 (greaterThanInclusive 1)"]));
    expect(describeStanding(staleRead)).toMatch(/^stale-read: does not match: .*ageTurns = 0 \(greaterThanInclusive 1\)/);
  });

  // a supersede rule "matches" only when a newer part with its key would supersede the part: no
  // other check (protection, back-off, another rule's mark) may claim a match or deny a newer part
  describe("a supersede rule's standing follows the newer parts of its key", () => {
    const reads = (): Message[] => [
      user("go"),
      assistant([{ tool: "read", input: { filePath: "/w/src/calc.ts" }, output: bigText("calc one"), id: "prt_c1" }]),
      assistant([], "read it"),
      user("again"),
      assistant([{ tool: "read", input: { filePath: "/w/src/calc.ts" }, output: bigText("calc two"), id: "prt_c2" }]),
      assistant([{ tool: "read", input: { filePath: "/w/src/calc.ts" }, output: bigText("calc three"), id: "prt_c3" }]),
      assistant([{ tool: "read", input: { filePath: "/w/src/calc.ts", offset: 10, limit: 5 }, output: bigText("calc part", 5), id: "prt_c4" }]),
      assistant([], "done"),
    ];

    it("a part another rule superseded: names that rule and its newer part, never 'no newer part'", () => {
      const p = createPruner({ preset: "verbose", config: held });
      run(p, reads());
      const standing = p.why(SID, "prt_c1")!.standing!;
      expect(standing.find((s) => s.id === "identical-call")).toMatchObject({ by: "prt_c2" });
      const rsr = standing.find((s) => s.id === "read-supersedes-read")!;
      expect(rsr).toMatchObject({ standing: "superseded-elsewhere", markedBy: "identical-call", by: "prt_c2", newer: "prt_c2" });
      expect(describeStanding(rsr)).toBe('read-supersedes-read: newer part prt_c2 has the same key ("file:/w/src/calc.ts"), but the part is already superseded by identical-call (by prt_c2)');
    });

    it("newer parts of the key that the rule's by condition does not admit: says so, not 'no newer part'", () => {
      const p = createPruner({ preset: "balanced", config: held });
      run(p, reads());
      const afterWrite = p.why(SID, "prt_c1")!.standing!.find((s) => s.id === "read-stale-after-write")!;
      expect(afterWrite).toMatchObject({ standing: "no-newer-view", sameKey: ["prt_c2", "prt_c3", "prt_c4"] });
      expect(describeStanding(afterWrite)).toBe('read-stale-after-write: no newer part with the same key ("file:/w/src/calc.ts") meets its by condition (newer with the key: prt_c2, prt_c3, prt_c4)');
    });

    it("a newer part of the key that does not supersede the part (its range does not cover it): says which and why", () => {
      const p = createPruner({ preset: "verbose", config: held });
      run(p, reads());
      const rsr = p.why(SID, "prt_c3")!.standing!.find((s) => s.id === "read-supersedes-read")!;
      expect(rsr).toMatchObject({ standing: "spared", newer: "prt_c4", spared: "range" });
      expect(describeStanding(rsr)).toBe('read-supersedes-read: newer part prt_c4 has the same key ("file:/w/src/calc.ts"), but does not supersede it: its line range does not cover this one\'s (range)');
    });

    it("a protected part with no newer part of the key: no newer part, not 'matches, but protected'", () => {
      const p = createPruner({ preset: "balanced", config: held });
      const h = [
        user("go"),
        assistant([{ tool: "edit", input: { filePath: "/w/a.ts", oldString: "x = 1", newString: "x = 2" }, output: "Edit applied", id: "prt_e1" }]),
        assistant([{ tool: "edit", input: { filePath: "/w/a.ts", oldString: "y = 1", newString: "y = 2" }, output: "Edit applied", id: "prt_e2" }]),
        assistant([], "done"),
      ];
      run(p, h);
      const standing = p.why(SID, "prt_e1")!.standing!;
      expect(standing[0]).toMatchObject({ id: "protected-tools", standing: "protected" });
      const identical = standing.find((s) => s.id === "identical-call")!;
      expect(identical.standing).toBe("no-newer-view");
      expect(describeStanding(identical)).toMatch(/^identical-call: no newer part with the same key \("edit:/);
      // a newer edit of the file that changes none of the lines this one wrote: edit-chain leaves it
      const chain = standing.find((s) => s.id === "edit-chain")!;
      expect(chain).toMatchObject({ standing: "spared", newer: "prt_e2", spared: "overlap" });
      expect(describeStanding(chain)).toBe('edit-chain: newer part prt_e2 has the same key ("file:/w/a.ts"), but does not supersede it: it changes no line this one wrote (overlap)');
    });

    it("a backed-off supersede rule with no newer part of the key: no newer part, not 'matches, but backed off'", () => {
      const state: SessionState = { ...newState(SID), regret: { a: { rule: "identical-call", kind: "rerun", part: "prt_gone" } } };
      const store = { load: () => ({ state: structuredClone(state), fresh: false }), save: () => false };
      const p = createPruner({ preset: "verbose", config: { ...held, commit: { ...held.commit, regretLimit: 1 } }, store });
      run(p, session());
      expect(p.why(SID, "prt_pwd1")!.standing!.find((s) => s.id === "identical-call")).toMatchObject({ standing: "backed-off", by: "prt_pwd2" });
      const newest = p.why(SID, "prt_pwd2")!.standing!.find((s) => s.id === "identical-call")!;
      expect(newest).toMatchObject({ standing: "no-newer-view" });
    });
  });

  it("keepNewest: the newest read before an edit of the file is spared by read-stale-after-edit, an older one is not", () => {
    const p = createPruner({ preset: "balanced", config: { ...held, rules: { "read-stale-after-edit": "on" } } });
    const h = [
      user("go"),
      assistant([{ tool: "read", input: { filePath: "/w/a.ts" }, output: bigText("a one"), id: "prt_r1" }]),
      assistant([{ tool: "read", input: { filePath: "/w/a.ts", offset: 5, limit: 5 }, output: bigText("a two", 5), id: "prt_r2" }]),
      assistant([{ tool: "edit", input: { filePath: "/w/a.ts", oldString: "x = 1", newString: "x = 2" }, output: "Edit applied", id: "prt_e" }]),
      assistant([], "done"),
    ];
    run(p, h);
    const newest = p.why(SID, "prt_r2")!.standing!.find((s) => s.id === "read-stale-after-edit")!;
    expect(newest).toMatchObject({ standing: "spared", newer: "prt_e", spared: "keepNewest" });
    expect(describeStanding(newest)).toBe('read-stale-after-edit: newer part prt_e has the same key ("file:/w/a.ts"), but does not supersede it: the rule keeps the newest view of the key before it (keepNewest)');
    expect(p.why(SID, "prt_r1")!.standing!.find((s) => s.id === "read-stale-after-edit")).toMatchObject({ by: "prt_e" });
  });

  it("a rule whose change would come after another rule's want for the part's output: taken, not waiting", () => {
    const p = createPruner({ preset: "verbose", config: { ...held, rules: { "mask-old-outputs": { with: { keepCalls: 1, text: "[cleared]" } } } } });
    run(p, session());
    const standing = p.why(SID, "prt_ls1")!.standing!;
    expect(standing.find((s) => s.id === "identical-call")).toMatchObject({ standing: "waiting", by: "prt_ls2" });
    const mask = standing.find((s) => s.id === "mask-old-outputs")!;
    expect(mask).toMatchObject({ standing: "taken", takenBy: "identical-call" });
    expect(describeStanding(mask)).toBe("mask-old-outputs: matches, but identical-call's change to the part's output is the one wanted (one change per slot)");
    // a part no earlier rule wants: the age rule's own change waits
    expect(p.why(SID, "prt_read")!.standing!.find((s) => s.id === "mask-old-outputs")).toMatchObject({ standing: "waiting" });
  });

  it("a restored part: rules leave it alone, so none waits for the commit policy", () => {
    const p = createPruner({ preset: "verbose", config: { idsFromTokens: 0, tool: false, commit: { minTokens: 0 } } });
    const h = session();
    run(p, h);
    expect(p.restore(SID, "prt_ls1")).toBe(true);
    p.transform(structuredClone(h));
    const identical = p.why(SID, "prt_ls1")!.standing!.find((s) => s.id === "identical-call")!;
    expect(identical).toMatchObject({ standing: "restored", by: "prt_ls2" });
    expect(describeStanding(identical)).toBe("identical-call: matches, but the part was restored, and rules leave a restored part alone until a later call views the same thing again");
  });

  it("a pruned part keeps its decision view; an unknown part has none", () => {
    const p = createPruner({ preset: "verbose", config: { idsFromTokens: 0, tool: false, commit: { minTokens: 0 } } });
    run(p, session());
    const why = p.why(SID, "prt_ls1")!;
    expect(why.decisions.length).toBe(1);
    expect(why.standing).toBeUndefined();
    expect(p.why(SID, "prt_nope")).toBeUndefined();
  });
});
