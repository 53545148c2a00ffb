// Why a part is not pruned: the rules that consider it and where each stands on the last call.
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message } from "../../src/graph/types.js";
import { describeStanding, failingLeaves } from "../../src/engine/why-not.js";
import { assistant, bigText, SID, user } from "../helpers/session.js";

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

  it("an age rule that does not match yet names the leaves that fail, with their values", () => {
    const p = createPruner({ preset: "balanced", config: held });
    run(p, session());
    const staleRead = p.why(SID, "prt_read")!.standing!.find((s) => s.id === "stale-read")!;
    expect(staleRead.standing).toBe("no-match");
    expect(failingLeaves(staleRead.when)).toEqual(expect.arrayContaining(["ageTurns = 0 (greaterThanInclusive 1)"]));
    expect(describeStanding(staleRead)).toMatch(/^stale-read: does not match: .*ageTurns = 0 \(greaterThanInclusive 1\)/);
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
