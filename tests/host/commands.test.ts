import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { runCommand, HELP } from "../../src/host/commands.js";
import { fmtK } from "../../src/host/notify.js";
import { assistant, bigText, editLastTurn, SID, toolPart, user, workTurns } from "../helpers/session.js";

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

  it("an unknown subcommand suggests the nearest one (a typo) and lists them all", () => {
    const { p } = pruned();
    expect(runCommand(p, SID, "stast", [])).toBe(`acp: unknown subcommand "stast" (did you mean "stats"?).\n${HELP}`);
    expect(runCommand(p, SID, "restor t1", []).split("\n")[0]).toBe('acp: unknown subcommand "restor" (did you mean "restore"?).');
    expect(runCommand(p, SID, "frobnicate", []).split("\n")[0]).toBe('acp: unknown subcommand "frobnicate".');
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
    expect(text).toContain(`(${free.length} more parts changed without saving tokens, not counted: step markers the provider never receives, short outputs replaced by a note beside a newer view)`);
    // a session with only such prunes has nothing pruned yet
    const q = createPruner({ config: { commit: { minTokens: 0 }, tool: false, rules: { "step-markers": "on" } } });
    q.transform([user("hi"), assistant([], "hello")]);
    expect(q.explain(SID).length).toBeGreaterThan(0);
    expect(runCommand(q, SID, "stats", []).split("\n")[0]).toBe("acp stats: nothing pruned yet in this session (preset balanced).");
  });

  it("stats says what waits for the commit policy, so a session with nothing pruned yet is not a mystery", () => {
    const p = createPruner({ config: { tool: false } }); // balanced: a batch of the sent prefix waits for 50K tokens
    const h = [user("go"), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls one", 40), id: "prt_ls1" }]), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls two", 41), id: "prt_ls2" }]), assistant([], "done")];
    for (let i = 2; i <= h.length; i++) p.transform(structuredClone(h.slice(0, i)));
    const text = runCommand(p, SID, "stats", []);
    expect(text.split("\n")[0]).toBe("acp stats: nothing pruned yet in this session (preset balanced).");
    expect(text).toMatch(/\n {2}waiting: 1 prune of parts already sent \([\d.K]+ tokens\): they go when the provider's cache breaks anyway \(it expired, or a new message of yours makes the provider drop signed reasoning\), once they free 50(\.0)?K tokens, or once enough requests follow to repay re-writing the cached prompt, so it is not re-written for little/);
  });

  it("stats and budget in a new process (opencode run --command acp) say what the last request left waiting, from the session's state", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-waiting-"));
    const h = [user("go"), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls one", 40), id: "prt_ls1" }]), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls two", 41), id: "prt_ls2" }]), assistant([], "done")];
    const first = createPruner({ config: { tool: false }, stateDir: dir });
    for (let i = 2; i <= h.length; i++) first.transform(structuredClone(h.slice(0, i)));
    const inProcess = runCommand(first, SID, "stats", []);
    expect(inProcess).toMatch(/\n {2}waiting: 1 prune of parts already sent \([\d.K]+ tokens\): they go when the provider's cache breaks anyway/);
    // a new process has made no request: it reads what the last one left waiting from the state
    const fresh = createPruner({ config: { tool: false }, stateDir: dir });
    expect(runCommand(fresh, SID, "stats", [])).toBe(inProcess);
    expect(runCommand(createPruner({ config: { tool: false }, stateDir: dir }), SID, "budget", h)).toMatch(/\n {2}waiting: 1 more prune \(~[\d.K]+\), applied together/);
    // once the cache has expired since that request, the next one takes them: stats says so
    const expired = createPruner({ config: { tool: false, commit: { cacheTtlMinutes: 0.0001 } }, stateDir: dir });
    const start = Date.now();
    while (Date.now() - start < 20);
    expect(runCommand(expired, SID, "stats", [])).toMatch(/\n {2}waiting: 1 prune of parts already sent \([\d.K]+ tokens\): the provider's cache has expired since the last request, so they go with the next one$/);
    // budget says the same, not that they wait for a batch (live audit 25: stats and budget disagreed)
    const budget = runCommand(expired, SID, "budget", h);
    expect(budget).toMatch(/\n {2}waiting: 1 more prune \(~[\d.K]+\): the provider's cache has expired since the last request, so they go with the next one\n/);
    expect(budget).not.toContain("applied together");
    // and when they went, nothing waits any more, in this process or the next
    const next = createPruner({ config: { tool: false }, stateDir: dir });
    next.transform(structuredClone(h), { now: Date.now() + 3_600_000 });
    expect(runCommand(next, SID, "stats", [])).not.toContain("waiting");
    expect(runCommand(createPruner({ config: { tool: false }, stateDir: dir }), SID, "stats", [])).not.toContain("waiting");
  });

  it("stats shows who regretted a rule's prunes, and the rule's back-off once it reaches regretLimit", () => {
    const p = createPruner({ config: { commit: { minTokens: 0, regretLimit: 1 }, tool: false } });
    const h = session();
    p.transform(structuredClone(h));
    runCommand(p, SID, "restore prt_c1", []);
    const text = runCommand(p, SID, "stats", []);
    expect(text).toContain("acp stats (preset balanced): 0 prunes, 0 tokens saved per request");
    expect(text).toMatch(/\n  identical-call\s+0 parts\s+0 tokens  \(regret: restored 1 by you; backed off: prunes no new parts in this session\)/);
    expect(text).toContain("a rule backs off in a session after 1 (regretLimit)");
    expect(p.manual(SID, { action: "discard", targets: ["prt_c3"] }, h).ok).toBe(true);
    p.transform(structuredClone(h));
    p.manual(SID, { action: "restore", targets: ["prt_c3"] }, h);
    expect(runCommand(p, SID, "stats", [])).toMatch(/\n  manual\s+0 parts\s+0 tokens  \(regret: restored 1 by the agent\)/);
  });

  it("stats adds the all-time figures of every session when the pruner has a stats file", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "acp-stats-")), "stats.json");
    const config = { commit: { minTokens: 0 }, tool: false };
    const one = createPruner({ config, statsFile: file });
    one.transform(structuredClone(session()));
    const other = session().map((m) => ({ ...m, info: { ...m.info, sessionID: "ses_other" }, parts: m.parts.map((x) => ({ ...x, sessionID: "ses_other" })) }));
    const two = createPruner({ config, statsFile: file });
    two.transform(other);
    await new Promise((resolve) => setImmediate(resolve)); // each pruner records its session once the call has returned
    const text = runCommand(createPruner({ config, statsFile: file }), SID, "stats", []);
    expect(text).toMatch(/\n\nall-time \(2 sessions\): 2 prunes, [\d.K]+ tokens saved per request\n  identical-call\s+2 parts/);
    expect(runCommand(createPruner({ config }), SID, "stats", [])).not.toContain("all-time");
    // a stats file no session has pruned anything into yet: no all-time line of zeros
    const empty = join(mkdtempSync(join(tmpdir(), "acp-stats-")), "stats.json");
    expect(runCommand(createPruner({ config, statsFile: empty }), SID, "stats", [])).toBe("acp stats: nothing pruned yet in this session (preset balanced).");
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
    expect(runCommand(p, SID, "restore prt_c1", [])).toBe("acp: prt_c1 restored; it is sent in full from the next request.");
    const next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_c1")?.state?.output).toBe(bigText("st1"));
  });

  it("sweep discards the current turn's outputs but not protected files", () => {
    const { p, h } = pruned();
    expect(runCommand(p, SID, "sweep", h)).toBe("acp sweep: 2 outputs discarded by you (8.6K tokens) from the next request; left alone: 1 protected.");
    const next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_c3")?.state?.output).toBe('grep({pattern: "x"}) → discarded by the user');
    expect(toolPart(next, "prt_c4")?.state?.output).toBe(bigText("env"));
    expect(runCommand(p, SID, "sweep zero", h)).toMatch(/^usage/);
  });

  /** The session with ids on (as the plugin runs by default once the prompt is large). */
  function withIds() {
    const p = createPruner({ config: { commit: { minTokens: 0 }, idsFromTokens: 0 } });
    const h = session();
    p.transform(structuredClone(h));
    const idOf = (partId: string) => Object.entries(p.state(SID).ids ?? {}).find(([, v]) => v === partId)?.[0];
    return { p, h, idOf };
  }

  it("explain and restore take the ids users see ([acp:t…] or t…) as well as part ids; an unknown id says so", () => {
    const { p, h, idOf } = withIds();
    const t1 = idOf("prt_c1")!;
    const t3 = idOf("prt_c3")!;
    expect(t1).toMatch(/^t[0-9a-z]+$/);
    const explained = new RegExp(`^acp explain ${t1} \\(prt_c1, bash git status\\): supersede by rule "identical-call" \\(\\d+ tokens saved\\)`);
    expect(runCommand(p, SID, `explain ${t1}`, h)).toMatch(explained);
    expect(runCommand(p, SID, `explain [acp:${t1}]`, h)).toMatch(explained);
    // a part no rule pruned: the rules that consider it, each with what it waits for or what fails
    expect(runCommand(p, SID, `explain ${t3}`, h)).toBe([
      `acp explain ${t3} (prt_c3, grep x): not pruned. Rules that consider it:`,
      `  - identical-call: no newer part with the same key ("grep:{\\"pattern\\":\\"x\\"}")`,
      `  - grep-repeat: no newer part with the same key ("grep::x:")`,
      `  - stale-tool-output: does not match: ageTurns = 0 (greaterThanInclusive 1); idleTurns = 0 (greaterThanInclusive 2)`,
      `  - idle-large-output: does not match: idleCalls = 1 (greaterThanInclusive 20); idleWorkCalls = 1 (greaterThanInclusive 17)`,
    ].join("\n"));
    // a part nothing prunes is pinned: it stays in full whatever rule would want it later
    expect(runCommand(p, SID, `restore ${t3}`, h)).toBe(`acp: ${t3} (prt_c3, grep x) is not pruned. It is pinned now: no rule prunes it until a later call views the same thing again.`);
    expect(runCommand(p, SID, `restore ${t3}`, h)).toBe(`acp: ${t3} (prt_c3, grep x) is not pruned: it was restored before, and no rule prunes it until a later call views the same thing again.`);
    for (const cmd of ["explain", "restore"]) {
      expect(runCommand(p, SID, `${cmd} tzzz`, h)).toBe(`acp ${cmd}: unknown id "tzzz". Ids are the ones in [acp:…] tags, such as t1bz, or part ids (prt_…).`);
      expect(runCommand(p, SID, `${cmd} prt_nope`, h)).toMatch(new RegExp(`^acp ${cmd}: unknown id "prt_nope"`));
    }
    expect(runCommand(p, SID, `restore [acp:${t1}]`, h)).toBe(`acp: ${t1} (prt_c1, bash git status) restored; it is sent in full from the next request.`);
    const next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_c1")?.state?.output).toBe(`${bigText("st1")}\n[acp:${t1}]`);
  });

  it("explain of an edit's result: the rule that overrides protection says why it does not prune, before the protection it overrides (as acp explain --part)", () => {
    const h = editLastTurn();
    const p = createPruner({ config: { tool: false } });
    p.transform(structuredClone(h));
    const lines = runCommand(p, SID, "explain prt_edit", h).split("\n");
    expect(lines.slice(0, 3)).toEqual([
      "acp explain prt_edit (edit /w/src/a.ts): not pruned. Rules that consider it:",
      expect.stringMatching(/^ {2}- stale-edit-result: matches \(it overrides protected-tools\), but its change would not shrink the part: its output, 26 chars, would become \d+ chars$/),
      "  - protected-tools: protects it from every rule but stale-edit-result, which overrides protection",
    ]);
  });

  it("explain of a part no rule pruned works in a new process and for parts newer than the last request", () => {
    const h = session();
    const listed = /^acp explain prt_c3 \(grep x\): not pruned\. Rules that consider it:\n {2}- identical-call: no newer part with the same key/;
    // a new process (opencode run --command acp): no request went through this pruner
    const fresh = createPruner({ config: { tool: false } });
    expect(runCommand(fresh, SID, "explain prt_c3", h)).toMatch(listed);
    // the last request ended before prt_c3: the history the command gets has it
    const behind = createPruner({ config: { tool: false } });
    behind.transform(structuredClone(h.slice(0, 3)));
    expect(runCommand(behind, SID, "explain prt_c3", h)).toMatch(listed);
    // answering changed nothing: the next request prunes as if the command had not been asked
    const a = structuredClone(h);
    const b = structuredClone(h);
    behind.transform(a);
    const control = createPruner({ config: { tool: false } });
    control.transform(structuredClone(h.slice(0, 3)));
    control.transform(b);
    expect(a).toEqual(b);
    expect(behind.state(SID).decisions).toEqual(control.state(SID).decisions);
  });

  it("sweep counts each output once, and the breadcrumb and explain say the user discarded it", () => {
    const { p, h, idOf } = withIds();
    // newest two: prt_c3 goes, prt_c4 (.env) is protected
    expect(runCommand(p, SID, "sweep 2", h)).toMatch(/^acp sweep: 1 output discarded by you \([\d.]+K tokens\) from the next request; left alone: 1 protected\.$/);
    // since the last message: prt_c2 is new, prt_c3 was swept already
    expect(runCommand(p, SID, "sweep", h)).toMatch(/^acp sweep: 1 output discarded by you \([\d.]+K tokens\) from the next request; left alone: 1 already pruned, 1 protected\.$/);
    expect(runCommand(p, SID, "sweep", h)).toBe("acp sweep: nothing to discard since your last message; left alone: 2 already pruned, 1 protected.");
    const t3 = idOf("prt_c3")!;
    expect(runCommand(p, SID, `explain ${t3}`, h)).toBe(`acp explain ${t3} (prt_c3, grep x): not pruned yet; discarded by the user with /acp sweep, applied from the next request.`);
    const next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_c3")?.state?.output).toBe(`grep({pattern: "x"}) → discarded by the user\n[acp:${t3}]`);
    expect(runCommand(p, SID, `explain ${t3}`, h)).toMatch(new RegExp(`^acp explain ${t3} \\(prt_c3, grep x\\): discarded by the user with /acp sweep \\(\\d+ tokens saved\\)$`));
    // the figures the sweeps reported are the tokens the committed decisions save (the notification's)
    const saved = p.explain(SID).filter((e) => e.partId === "prt_c2" || e.partId === "prt_c3");
    expect(saved).toHaveLength(2);
    const q = withIds();
    const first = runCommand(q.p, SID, "sweep 2", q.h);
    const second = runCommand(q.p, SID, "sweep", q.h);
    const tokensIn = (t: string) => /\(([\d.]+K?) tokens\)/.exec(t)?.[1];
    expect([tokensIn(first), tokensIn(second)]).toEqual([fmtK(saved.find((e) => e.partId === "prt_c3")!.tokensSaved), fmtK(saved.find((e) => e.partId === "prt_c2")!.tokensSaved)]);
  });

  it("the agent discarding what the user swept leaves the user's breadcrumb as it is", () => {
    const { p, h, idOf } = withIds();
    runCommand(p, SID, "sweep", h);
    const t2 = idOf("prt_c2")!;
    const before = structuredClone(h);
    p.transform(before);
    expect(p.manual(SID, { action: "discard", targets: [t2] }, h)).toEqual({ ok: true, text: `${t2}: already discarded by the user` });
    const after = structuredClone(h);
    p.transform(after);
    expect(toolPart(after, "prt_c2")?.state?.output).toBe(`bash({command: "git status"}) → discarded by the user\n[acp:${t2}]`);
    expect(toolPart(after, "prt_c2")).toEqual(toolPart(before, "prt_c2"));
  });

  it("explain tells an agent's context_prune from a user's sweep", () => {
    const { p, h, idOf } = withIds();
    const t2 = idOf("prt_c2")!;
    expect(p.manual(SID, { action: "discard", targets: [t2] }, h).ok).toBe(true);
    p.transform(structuredClone(h));
    expect(runCommand(p, SID, `explain ${t2}`, h)).toMatch(new RegExp(`^acp explain ${t2} \\(prt_c2, bash git status\\): discarded by the agent with context_prune \\(\\d+ tokens saved\\)$`));
  });

  /** balanced's commit policy: the first ls is superseded, but the change to the sent prefix waits for a batch. */
  function waitingLs() {
    const h = [user("go"), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls one", 40), id: "prt_ls1" }]), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls two", 41), id: "prt_ls2" }]), assistant([], "done")];
    const transformAll = (p: ReturnType<typeof createPruner>) => {
      for (let i = 2; i <= h.length; i++) p.transform(structuredClone(h.slice(0, i)));
    };
    return { h, transformAll };
  }
  const HOUR = 3_600_000;

  it("restore of a part whose prune waits for the commit policy pins it: the reply says so, and the prune never lands", () => {
    const { h, transformAll } = waitingLs();
    const p = createPruner({ config: { tool: false } });
    transformAll(p);
    expect(runCommand(p, SID, "explain prt_ls1", h)).toMatch(/- identical-call: matches \(superseded by prt_ls2\); waits for the commit policy \(would save [\d,]+ tokens\)/);
    expect(runCommand(p, SID, "restore prt_ls1", h)).toMatch(
      /^acp: prt_ls1 \(bash ls\) was not pruned yet: rule "identical-call" waited to prune it \(the commit policy held the change for a batch; it would save \d+ tokens\)\. It is pinned now: it stays in full, and no rule prunes it until a later call views the same thing again\.$/,
    );
    expect(runCommand(p, SID, "explain prt_ls1", h)).toContain("- identical-call: matches, but the part was restored, and rules leave a restored part alone until a later call views the same thing again");
    // the cache expires: what waited applies for free, but not on the pinned part
    const next = structuredClone(h);
    p.transform(next, { now: Date.now() + 2 * HOUR });
    expect(toolPart(next, "prt_ls1")?.state?.output).toBe(bigText("ls one", 40));
    expect(runCommand(p, SID, "stats", [])).toBe("acp stats: nothing pruned yet in this session (preset balanced).");
  });

  it("restore of a waiting prune works in a new process (opencode run --command acp), from the history", () => {
    const { h, transformAll } = waitingLs();
    const dir = mkdtempSync(join(tmpdir(), "acp-restore-"));
    transformAll(createPruner({ config: { tool: false }, stateDir: dir }));
    const fresh = createPruner({ config: { tool: false }, stateDir: dir });
    expect(runCommand(fresh, SID, "restore prt_ls1", h)).toMatch(/^acp: prt_ls1 \(bash ls\) was not pruned yet: rule "identical-call" waited to prune it/);
    const next = structuredClone(h);
    createPruner({ config: { tool: false }, stateDir: dir }).transform(next, { now: Date.now() + 2 * HOUR });
    expect(toolPart(next, "prt_ls1")?.state?.output).toBe(bigText("ls one", 40));
  });

  it("a newer view held in full by a restored older view is not counted as waiting, and explain says what holds it (live audit 25)", () => {
    // calc.ts read in turns 1, 2 and 3 (balanced: the supersedes of the sent reads wait for a batch);
    // the user restores the turn-1 read while its prune waits, so the turn-2 read, a newer view of
    // it, stays in full whatever the cache does: its own supersede (by the turn-3 read) never goes
    // while the file is not read again
    const read = (v: string, id: string) => assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText(v, 120), id }]);
    const h = [user("t1"), read("calc v1", "prt_r1"), assistant([], "done"), user("t2"), read("calc v2", "prt_r2"), assistant([], "done"), user("t3"), read("calc v3", "prt_r3"), assistant([], "done")];
    const p = createPruner({ config: { tool: false } });
    const run = (upTo: number, now?: number) => p.transform(structuredClone(h.slice(0, upTo)), now === undefined ? {} : { now });
    for (let i = 2; i <= h.length; i++) run(i);
    expect(runCommand(p, SID, "restore prt_r1", h)).toMatch(/^acp: prt_r1 \(read src\/calc.ts\) was not pruned yet: rule "identical-call" waited/);
    h.push(user("t4"), assistant([{ tool: "bash", input: { command: "echo 4" }, output: "ok" }]), assistant([], "done"));
    for (let i = 10; i <= h.length; i++) run(i);
    expect(p.waiting(SID)).toBeUndefined();
    expect(runCommand(p, SID, "stats", h)).not.toContain("waiting");
    const explained = runCommand(p, SID, "explain prt_r2", h);
    expect(explained).toContain("identical-call: matches (superseded by prt_r3), but an older view of the same thing stays in full (prt_r1 was restored), and a newer view is never hidden while an older one is shown");
    expect(explained).not.toContain("waits for the commit policy");
    // and indeed: the cache expired, the next request still sends it in full
    const next = structuredClone(h);
    p.transform(next, { now: Date.now() + 2 * HOUR });
    expect(toolPart(next, "prt_r2")?.state?.output).toBe(bigText("calc v2", 120));
  });

  /** src/calc.ts read in turns 1, 2 and 3 (the first two superseded, the newest cleared by age later), ten more turns, replayed call by call. */
  function threeReads() {
    const read = (v: string, id: string) => assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText(v, 120), id }]);
    const h = [user("t1"), read("calc v1", "prt_r1"), assistant([], "done"), user("t2"), read("calc v2", "prt_r2"), assistant([], "done"), user("t3"), read("calc v3", "prt_r3"), assistant([], "done")];
    h.push(...workTurns(4, 10));
    const p = createPruner({ config: { commit: { minTokens: 0 }, idsFromTokens: 0 } });
    for (let i = 1; i <= h.length; i++) if (i === h.length || h[i].info.role === "assistant") p.transform(structuredClone(h.slice(0, i)));
    return { h, p };
  }

  it("restore of an older view restores its pruned newer views too, names them, and every view goes out exactly", () => {
    const { h, p } = threeReads();
    expect(p.explain(SID).filter((e) => e.tokensSaved > 0).map((e) => [e.partId, e.rule])).toEqual([["prt_r1", "identical-call"], ["prt_r2", "identical-call"], ["prt_r3", "stale-read"]]);
    const idOf = (partId: string) => Object.entries(p.state(SID).ids ?? {}).find(([, v]) => v === partId)![0];
    const [r1, r2, r3] = [idOf("prt_r1"), idOf("prt_r2"), idOf("prt_r3")];
    expect(runCommand(p, SID, `restore ${r1}`, h)).toBe(
      `acp: ${r1} (prt_r1, read src/calc.ts) restored; it is sent in full from the next request. Restored with it, so that an older view is never sent in full while a newer view of the same thing is hidden: ${r2} (prt_r2, read src/calc.ts), ${r3} (prt_r3, read src/calc.ts).`,
    );
    const next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_r1")?.state?.output).toBe(`${bigText("calc v1", 120)}\n[acp:${r1}]`);
    expect(toolPart(next, "prt_r2")?.state?.output).toBe(`${bigText("calc v2", 120)}\n[acp:${r2}]`);
    expect(toolPart(next, "prt_r3")?.state?.output).toBe(`${bigText("calc v3", 120)}\n[acp:${r3}]`);
    expect(runCommand(p, SID, "stats", [])).toMatch(/\n  identical-call\s+0 parts\s+0 tokens  \(regret: restored 1 by you\)/);
  });

  it("sweep leaves a newer view of a restored part in full and says why; a sweep of the older views too hides them all", () => {
    // src/calc.ts read in turns 1, 2 and 3 (pruned), read again in a new turn, then all three
    // older reads restored by the user (a view made before the restore does not end its pin)
    const { h, p } = threeReads();
    const idOf = (partId: string) => Object.entries(p.state(SID).ids ?? {}).find(([, v]) => v === partId)![0];
    const [r1, r2, r3] = [idOf("prt_r1"), idOf("prt_r2"), idOf("prt_r3")];
    h.push(user("t14"), assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText("calc v3", 120), id: "prt_r4" }, { tool: "grep", input: { pattern: "x" }, output: bigText("g"), id: "prt_g" }]));
    p.transform(structuredClone(h));
    expect(runCommand(p, SID, `restore ${r1}`, h)).toMatch(/^acp: .* restored; it is sent in full from the next request\. Restored with it/);
    p.transform(structuredClone(h));
    const r4 = idOf("prt_r4");
    expect(runCommand(p, SID, "sweep", h)).toMatch(
      new RegExp(
        `^acp sweep: 1 output discarded by you \\([\\d.]+K tokens\\) from the next request; left alone: 1 newer view of parts that stay in full \\(${r3} \\(prt_r3, read src/calc\\.ts\\), ${r2} \\(prt_r2, read src/calc\\.ts\\), ${r1} \\(prt_r1, read src/calc\\.ts\\) were restored; an older view is never sent in full while a newer one is hidden\\)\\.$`,
      ),
    );
    let next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_g")?.state?.output).toMatch(/→ discarded by the user\n\[acp:t\w+\]$/);
    expect(toolPart(next, "prt_r4")?.state?.output).toBe(`${bigText("calc v3", 120)}\n[acp:${r4}]`);
    for (const [id, v, tag] of [["prt_r1", "calc v1", r1], ["prt_r2", "calc v2", r2], ["prt_r3", "calc v3", r3]]) expect(toolPart(next, id)?.state?.output).toBe(`${bigText(v, 120)}\n[acp:${tag}]`);
    // the newest 40 outputs: the restored reads too (and the 20 checks), so every view of calc.ts goes
    expect(runCommand(p, SID, "sweep 40", h)).toMatch(/^acp sweep: 24 outputs discarded by you \([\d.]+K tokens\) from the next request; left alone: 1 already pruned\.$/);
    next = structuredClone(h);
    p.transform(next);
    for (const id of ["prt_r1", "prt_r2", "prt_r3", "prt_r4"]) expect(toolPart(next, id)?.state?.output).toMatch(/→ discarded by the user\n\[acp:t\w+\]$/);
  });

  it("unknown subcommands get the help", () => {
    const { p } = pruned();
    expect(runCommand(p, SID, "frobnicate", [])).toBe(`acp: unknown subcommand "frobnicate".\n${HELP}`);
  });
});
