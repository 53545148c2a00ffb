import { mkdtempSync, writeFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { assistant, bigText, replay, SID, toolPart, user } from "../helpers/session.js";

// Engine mechanics (supersede, stickiness, batching, restart) through the supersede-only preset: the
// default preset's turn-boundary rules (stale-read, stale-shell-output) would clear these outputs first.
const immediate = { preset: "verbose", commit: { minTokens: 0 }, tool: false };

describe("createPruner", () => {
  it("turns an older read of the same file into a breadcrumb naming the call", () => {
    const history = [
      user("look at a.ts"),
      assistant([{ tool: "read", input: { filePath: "src/a.ts" }, output: bigText("old"), id: "prt_read1" }]),
      user("again"),
      assistant([{ tool: "read", input: { filePath: "src/a.ts" }, output: bigText("new"), id: "prt_read2" }]),
      assistant([], "done"),
    ];
    const p = createPruner({ config: immediate });
    const calls = replay(history, (m) => p.transform(m));
    const last = calls[calls.length - 1];
    expect(toolPart(last, "prt_read1")?.state?.output).toBe('read({filePath: "src/a.ts"}) → superseded by a later read');
    expect(toolPart(last, "prt_read2")?.state?.output).toBe(bigText("new"));
    const toolEntries = p.explain(SID).filter((e) => e.tool);
    expect(toolEntries.map((e) => [e.partId, e.rule])).toEqual([["prt_read1", "identical-call"]]);
  });

  it("does not supersede a partial read with a read of another range", () => {
    const history = [
      user("go"),
      assistant([{ tool: "read", input: { filePath: "a.ts", offset: 0, limit: 100 }, output: bigText("a", 60), id: "prt_r1" }]),
      user("more"),
      assistant([{ tool: "read", input: { filePath: "a.ts", offset: 100, limit: 100 }, output: bigText("b", 60), id: "prt_r2" }]),
      user("all"),
      assistant([{ tool: "read", input: { filePath: "a.ts", offset: 0, limit: 500 }, output: bigText("c", 60), id: "prt_r3" }]),
    ];
    const p = createPruner({ config: immediate });
    const calls = replay(history, (m) => p.transform(m));
    expect(toolPart(calls[2], "prt_r1")?.state?.output).toBe(bigText("a", 60)); // after r2 only
    const last = calls[calls.length - 1];
    expect(toolPart(last, "prt_r1")?.state?.output).toContain("superseded");
    expect(toolPart(last, "prt_r2")?.state?.output).toContain("superseded");
    expect(toolPart(last, "prt_r3")?.state?.output).toBe(bigText("c", 60));
  });

  it("keeps a prune in every later call (sticky), across a restart from disk", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-state-"));
    const history = [
      user("go"),
      assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st1"), id: "prt_s1" }]),
      user("again"),
      assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st2"), id: "prt_s2" }]),
      assistant([{ tool: "bash", input: { command: "ls" }, output: "a\nb" }]),
      assistant([], "ok"),
    ];
    const one = createPruner({ config: immediate, stateDir: dir });
    const inProcess = replay(history, (m) => one.transform(m));
    const restartDir = mkdtempSync(join(tmpdir(), "acp-state-"));
    const restarted = replay(history, (m) => createPruner({ config: immediate, stateDir: restartDir }).transform(m));
    expect(restarted).toEqual(inProcess);
    const firstPruned = inProcess.findIndex((c) => String(toolPart(c, "prt_s1")?.state?.output).includes("superseded"));
    expect(firstPruned).toBeGreaterThan(0);
    for (const c of inProcess.slice(firstPruned)) expect(toolPart(c, "prt_s1")?.state?.output).toContain("superseded");
    expect(readdirSync(dir).sort()).toEqual([`${SID}.journal`, `${SID}.json`]);
  });

  it("batches changes to the already-sent prefix until they free enough tokens", () => {
    const history = [
      user("go"),
      assistant([{ tool: "read", input: { filePath: "a.ts" }, output: bigText("a1", 50), id: "prt_a1" }]),
      user("again"),
      assistant([{ tool: "read", input: { filePath: "a.ts" }, output: bigText("a2", 50) }]),
      user("and"),
      assistant([], "thinking"),
    ];
    const batched = createPruner({ config: { preset: "verbose", commit: { minTokens: 1_000_000, breakEven: 0 }, tool: false } });
    const calls = replay(history, (m) => batched.transform(m));
    const withA1 = calls.filter((c) => toolPart(c, "prt_a1"));
    expect(withA1.length).toBeGreaterThan(1);
    for (const c of withA1) expect(toolPart(c, "prt_a1")?.state?.output).toBe(bigText("a1", 50));
    const eager = createPruner({ config: immediate });
    const eagerCalls = replay(history, (m) => eager.transform(m));
    expect(toolPart(eagerCalls[eagerCalls.length - 1], "prt_a1")?.state?.output).toContain("superseded");
  });

  it("never prunes protected files or user text", () => {
    const history = [
      user("read the env"),
      assistant([{ tool: "read", input: { filePath: "app/.env" }, output: bigText("SECRET"), id: "prt_env1" }]),
      user("again"),
      assistant([{ tool: "read", input: { filePath: "app/.env" }, output: bigText("SECRET2") }]),
      assistant([], "ok"),
    ];
    const p = createPruner({ config: immediate });
    const calls = replay(history, (m) => p.transform(m));
    expect(toolPart(calls[calls.length - 1], "prt_env1")?.state?.output).toBe(bigText("SECRET"));
    expect(calls[calls.length - 1][0].parts[0].text).toBe("read the env");
  });

  it("restores a pruned part exactly and leaves it alone afterwards", () => {
    const history = [
      user("go"),
      assistant([{ tool: "read", input: { filePath: "a.ts" }, output: bigText("a", 60), id: "prt_x1" }]),
      user("again"),
      assistant([{ tool: "read", input: { filePath: "a.ts" }, output: bigText("b", 60) }]),
      user("and"),
      assistant([], "ok"),
    ];
    const p = createPruner({ config: immediate });
    replay(history, (m) => p.transform(m));
    expect(p.restore(SID, "prt_x1")).toBe(true);
    const again = structuredClone(history);
    p.transform(again);
    expect(toolPart(again, "prt_x1")).toEqual(toolPart(history, "prt_x1"));
  });

  it("fails open: odd shapes pass through and errors are reported, not thrown", () => {
    const errors: unknown[] = [];
    const p = createPruner({ onError: (e) => errors.push(e) });
    const odd: any[] = [{ info: { id: "m1", sessionID: SID, role: "user" }, parts: [null, { id: 5 }, { id: "x", type: "tool" }] }, { info: null, parts: "nope" }];
    const copy = structuredClone(odd);
    expect(() => p.transform(odd)).not.toThrow();
    expect(odd).toEqual(copy);
  });

  it("reports a broken rule file and still prunes with the valid rules", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-rules-"));
    writeFileSync(join(dir, "bad.yaml"), "rules:\n  my-rule:\n    phase: nope\n");
    const p = createPruner({ rules: [dir], config: immediate });
    expect(p.problems.map((x) => `${x.line}:${x.col} ${x.ruleId}`)).toContain("3:12 schema/enum");
    expect(p.resolved.rules.length).toBeGreaterThan(10);
  });
});
