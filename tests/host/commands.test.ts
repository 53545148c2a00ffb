import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { runCommand, HELP } from "../../src/host/commands.js";
import { assistant, bigText, SID, toolPart, user } from "../helpers/session.js";

function session() {
  return [
    user("go"),
    assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st1"), id: "prt_c1" }]),
    user("again"),
    assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st2"), id: "prt_c2" }]),
    assistant([{ tool: "grep", input: { pattern: "x" }, output: bigText("g"), id: "prt_c3" }, { tool: "read", input: { filePath: "a/.env" }, output: bigText("env"), id: "prt_c4" }]),
    assistant([], "ok"),
  ];
}

function pruned() {
  const p = createPruner({ config: { commit: { minTokens: 0 }, tool: false, rules: { "step-markers": "on" } } });
  const h = session();
  p.transform(structuredClone(h));
  return { p, h };
}

describe("/acp commands", () => {
  it("help lists every subcommand", () => {
    const { p } = pruned();
    expect(runCommand(p, SID, "", [])).toBe(HELP);
    for (const sub of ["context", "stats", "protected", "sweep", "explain", "restore"]) expect(HELP).toContain(`/acp ${sub}`);
  });

  it("stats counts prunes per rule", () => {
    const { p } = pruned();
    expect(runCommand(p, SID, "stats", [])).toMatch(/^acp stats \(preset balanced\): 1 prune, [\d.K]+ tokens saved per request\n  identical-call\s+1 parts/);
  });

  it("stats does not count prunes that save nothing (step markers the host never sends)", () => {
    const { p } = pruned();
    const free = p.explain(SID).filter((e) => e.tokensSaved === 0);
    expect(free.length).toBeGreaterThan(0); // the session's step markers are dropped, saving 0 tokens
    const text = runCommand(p, SID, "stats", []);
    expect(text.split("\n")[0]).toMatch(/: 1 prune, /);
    expect(text).not.toMatch(/step-markers/);
    expect(text).toContain(`(${free.length} more parts the provider never receives, e.g. step markers, not counted)`);
    // a session with only such prunes has nothing pruned yet
    const q = createPruner({ config: { commit: { minTokens: 0 }, tool: false, rules: { "step-markers": "on" } } });
    q.transform([user("hi"), assistant([], "hello")]);
    expect(q.explain(SID).length).toBeGreaterThan(0);
    expect(runCommand(q, SID, "stats", []).split("\n")[0]).toBe("acp stats: nothing pruned yet in this session (preset balanced).");
  });

  it("context breaks the history down and shows what pruning saved", () => {
    const { p, h } = pruned();
    const text = runCommand(p, SID, "context", h);
    expect(text).toMatch(/^acp context: [\d.K]+ tokens of history \(chars\/4\), [\d.K]+ pruned from each request/);
    expect(text).toMatch(/tool output\s+[\d.]+K/);
  });

  it("explain names the rule and restore brings the part back", () => {
    const { p, h } = pruned();
    expect(runCommand(p, SID, "explain prt_c1", [])).toMatch(/^acp explain prt_c1: supersede by rule "identical-call" \(\d+ tokens saved\) — The same tool/);
    expect(runCommand(p, SID, "restore prt_c1", [])).toBe("acp: part prt_c1 restored; it is sent in full from the next request.");
    const next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_c1")?.state?.output).toBe(bigText("st1"));
  });

  it("sweep discards the current turn's outputs but not protected files", () => {
    const { p, h } = pruned();
    expect(runCommand(p, SID, "sweep", h)).toBe("acp sweep: 2 outputs discarded (~8.6K tokens) from the next request; 1 protected or already pruned left alone.");
    const next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_c3")?.state?.output).toBe('grep({pattern: "x"}) → discarded by the agent');
    expect(toolPart(next, "prt_c4")?.state?.output).toBe(bigText("env"));
    expect(runCommand(p, SID, "sweep zero", h)).toMatch(/^usage/);
  });

  it("unknown subcommands get the help", () => {
    const { p } = pruned();
    expect(runCommand(p, SID, "frobnicate", [])).toBe(`acp: unknown subcommand "frobnicate".\n${HELP}`);
  });
});
