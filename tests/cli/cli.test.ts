// Every acp command other than lint, through main(argv, io): output, exit codes, and clear
// one-line errors (no stack traces) for missing files, bad input and bad usage.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findFixtureFiles } from "../../src/cli/fixtures.js";
import { main } from "../../src/cli/main.js";
import { defaultFixturePaths } from "../../src/cli/rules-test.js";
import { FACT_NAMES } from "../../src/engine/facts.js";
import { OPERATOR_NAMES } from "../../src/lang/operators.js";
import { ACTIONS } from "../../src/engine/actions/index.js";
import { BUILTIN_RULES_DIR, loadRuleFiles } from "../../src/rules/load.js";
import { loadPreset, PRESET_NAMES } from "../../src/rules/presets.js";
import { assistant, bigText, SID, user } from "../helpers/session.js";

async function run(...argv: string[]) {
  let out = "";
  let err = "";
  const code = await main(argv, { out: (s) => void (out += s), err: (s) => void (err += s) });
  return { code, out, err };
}

const builtin = loadRuleFiles([BUILTIN_RULES_DIR]).rules;
const tmp = mkdtempSync(join(tmpdir(), "acp-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at /);
/** A FIFO or /dev/zero as `cmd`'s session: one line, exit 2, no hang and no crash. */
async function refusesSpecialFiles(cmd: string): Promise<void> {
  const fifo = join(tmp, `${cmd}-pipe.json`);
  execFileSync("mkfifo", [fifo]);
  expect(await run(cmd, fifo)).toEqual({ code: 2, out: "", err: `error: ${fifo}: is a FIFO, not a regular file; it is not read\n` });
  expect(await run(cmd, "/dev/zero")).toEqual({ code: 2, out: "", err: "error: /dev/zero: is a character device, not a regular file; it is not read\n" });
}
const expectLine = (lines: string[], re: RegExp) => expect(lines.filter((l) => re.test(l)), String(re)).toHaveLength(1);

describe("acp rules list / catalog, acp presets", () => {
  it("rules list: one row per built-in rule with its phase, action and the presets that enable it", async () => {
    const r = await run("rules", "list");
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^rule\s+phase\s+action\s+presets\s+on\s+description$/);
    expect(lines).toHaveLength(builtin.length + 1);
    for (const rule of builtin) {
      const on = PRESET_NAMES.filter((n) => ![undefined, "off"].includes(loadPreset(n).preset!.rules[rule.id] as string)).join(",") || "-";
      expectLine(lines, new RegExp(`^${rule.id}\\s+${rule.phase}\\s+${rule.then.action}\\s+${on}\\s+`));
    }
    expectLine(lines, /^identical-call\s+supersede\s+supersede\s+compact,balanced,verbose\s+on\s+The same tool/);
  });

  it("rules list in a project: its .opencode/acp/rules/ and acp.jsonc, as the plugin loads them", async () => {
    const project = join(tmp, "project");
    mkdirSync(join(project, ".opencode", "acp", "rules"), { recursive: true });
    writeFileSync(join(project, ".opencode", "acp", "rules", "mine.yaml"), "rules:\n  my-project-rule:\n    phase: age\n    description: from the project\n    when: { fact: tool, operator: equal, value: bash }\n    then: { action: clear }\n");
    writeFileSync(join(project, ".opencode", "acp.jsonc"), '{ "rules": { "identical-call": "off" } }');
    const cwd = process.cwd();
    const xdg = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = join(tmp, "no-global-config");
    process.chdir(project);
    try {
      const r = await run("rules", "list");
      expect(r.code).toBe(0);
      expect(r.err).toBe("");
      expect(r.out).toMatch(/^my-project-rule\s+age\s+clear\s+-\s+on\s+from the project$/m);
      expect(r.out).toMatch(/^identical-call\s+supersede\s+supersede\s+compact,balanced,verbose\s+off\s+/m);
      expect(r.out).toContain(`user rules from: ${join(project, ".opencode", "acp", "rules")}`);
      writeFileSync(join(project, ".opencode", "acp.jsonc"), '{ "rules": { "identical-cal": "off" } }');
      expect((await run("rules", "list")).err).toBe("acp: 1 configuration problem; `npx acp rules lint` shows them\n");
    } finally {
      process.chdir(cwd);
      if (xdg === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = xdg;
    }
  });

  it("rules list --rules adds a rule file's rules", async () => {
    const file = join(tmp, "extra.yaml");
    writeFileSync(file, "rules:\n  my-extra:\n    phase: age\n    description: mine\n    when: { fact: tool, operator: equal, value: bash }\n    then: { action: clear }\n");
    const r = await run("rules", "list", "--rules", file);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^my-extra\s+age\s+clear\s+-\s+on\s+mine$/m);
  });

  it("rules catalog: every fact, operator and action, the key filters and the phase order", async () => {
    const r = await run("rules", "catalog");
    expect(r.code).toBe(0);
    for (const f of FACT_NAMES) expect(r.out).toMatch(new RegExp(`^  ${f} `, "m"));
    for (const o of OPERATOR_NAMES) expect(r.out).toMatch(new RegExp(`^  ${o} `, "m"));
    for (const a of ACTIONS) expect(r.out).toMatch(new RegExp(`^  ${a.name} `, "m"));
    expect(r.out).toMatch(/^  superseded\s+boolean\s+phase\s+.*\[from phase age\]$/m);
    expect(r.out).toContain("KEY FILTERS");
    expect(r.out.trimEnd().split("\n").at(-1)).toBe("PHASES (fixed order): protect → supersede → age → reduce → manual → commit → render");
  });

  it("presets: descriptions, then every rule's setting side by side and the whole commit policy", async () => {
    const r = await run("presets");
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    expect(lines.slice(0, 3)).toEqual(PRESET_NAMES.map((n) => `${n}: ${loadPreset(n).preset!.description}`));
    expect(lines[4]).toMatch(/^rule\s+compact\s+balanced\s+verbose$/);
    expectLine(lines, /^stale-read\s+with \{"minChars":400,"docMinChars":2000,"idleTurns":4,"userNamedTurns":0,"workingSetIdleTurns":4\}\s+with \{"minChars":1000,"idleTurns":10,"workCalls":10\}\s+off$/);
    expectLine(lines, /^idle-large-output\s+with \{"calls":9,"minChars":500,"userNamedTurns":0,"workingSetCalls":9\}\s+with \{"tools":\["bash","grep","webfetch","websearch","codesearch"\],"workCalls":17,"workingSetWorkCalls":60\}\s+off$/);
    // the presets differ in their commit policy beyond its size threshold
    expect(lines.slice(-6).map((l) => l.split(/\s+/))).toEqual([
      ["(commit", "minTokens)", "50000", "50000", "50000"],
      ["(commit", "pressureTokens)", "0", "0", "0"],
      ["(commit", "breakEven)", "20", "25", "30"],
      ["(commit", "cacheTtlMinutes)", "5", "5", "5"],
      ["(commit", "regretLimit)", "3", "3", "3"],
      ["(commit", "minTurnCalls)", "3", "5", "3"],
    ]);
    expect(lines).toHaveLength(5 + builtin.length + 6);
  });
});

describe("acp rules test", () => {
  it("the built-in fixtures pass (exit 0)", async () => {
    const r = await run("rules", "test", "tests/rules/fixtures");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^\d+ fixtures run, 0 failed, 0 unreadable\n$/m);
  });

  it("with no path, the working folder and the project's .opencode/acp/rules/ (a hidden folder the search skips) are searched", () => {
    const project = join(tmp, "project");
    const tests = join(project, ".opencode", "acp", "rules", "tests");
    mkdirSync(tests, { recursive: true });
    writeFileSync(join(tests, "mine.session.yaml"), "rule: identical-call\nturns: []\n");
    mkdirSync(join(project, ".hidden"));
    writeFileSync(join(project, ".hidden", "skipped.session.yaml"), "rule: identical-call\nturns: []\n");
    const paths = defaultFixturePaths(project);
    expect(paths).toEqual([project, join(project, ".opencode", "acp", "rules")]);
    expect(findFixtureFiles(paths).files).toEqual([join(tests, "mine.session.yaml")]);
    expect(defaultFixturePaths(tmp)).toEqual([tmp]);
  });

  it("a fixture that cannot be understood exits 2 and names the file, line and column", async () => {
    const file = join(tmp, "unknown-rule.session.yaml");
    writeFileSync(file, [
      "rule: webfetch-url",
      "turns:",
      '  - user: "read the docs"',
      "  - assistant:",
      "      # ruleid: webfetch-uri",
      '      - { id: f1, tool: webfetch, input: { url: "https://vitest.dev/" }, output: { lines: 60 } }',
      "",
    ].join("\n"));
    const r = await run("rules", "test", file);
    expect(r.code).toBe(2);
    expect(r.out).toBe(`1 fixture could not be run:\n  ${file}:5:7: error: unknown rule "webfetch-uri" (did you mean "webfetch-url"?)\n\n0 fixtures run, 0 failed, 1 unreadable\n`);
  });
});

describe("acp rules test: files that are not fixtures", () => {
  it("folder links: a loop ends, an aliased folder runs once, a dangling or looping fixture link is an error line", async () => {
    const dir = join(tmp, "linked-fixtures");
    mkdirSync(join(dir, "real"), { recursive: true });
    const fixture = join(dir, "real", "one.session.yaml");
    writeFileSync(fixture, "rule: identical-call\nturns:\n  - user: hi\n");
    symlinkSync(join(dir, "real"), join(dir, "alias"));
    symlinkSync(dir, join(dir, "real", "loop"));
    symlinkSync(join(dir, "gone.session.yaml"), join(dir, "dangling.session.yaml"));
    symlinkSync(join(dir, "self.session.yaml"), join(dir, "self.session.yaml"));
    expect(findFixtureFiles([dir]).files).toEqual([join(dir, "alias", "one.session.yaml")]);
    const r = await run("rules", "test", dir);
    expect(r.code).toBe(2);
    expect(r.out).toContain(`2 fixtures could not be run:\n  ${join(dir, "dangling.session.yaml")}:1:1: error: file not found\n  ${join(dir, "self.session.yaml")}:1:1: error: is a symbolic link loop\n`);
    expect(r.out).toMatch(/\n1 fixture run, 0 failed, 2 unreadable\n$/);
  });

  it("generated text too large for memory ({lines, width}): an error at the value's line:col, exit 2", async () => {
    const file = join(tmp, "huge.session.yaml");
    writeFileSync(file, ["rule: identical-call", "turns:", "  - user: hi", "  - assistant:", "      - { tool: bash, input: { command: ls }, output: { lines: 999999999, width: 999999 } }", ""].join("\n"));
    const r = await run("rules", "test", file);
    expect(r.code).toBe(2);
    expect(r.out).toContain(`  ${file}:5:55: error: generated text too large: {lines: 999999999, width: 999999} brings this fixture's generated text over 4 MiB (lines × width)\n`);
  });

  it("a FIFO fixture (named, or found in a folder) and /dev/zero: an error line each, exit 2, no hang", async () => {
    const dir = join(tmp, "fifo-fixtures");
    mkdirSync(dir);
    const fifo = join(dir, "x.session.yaml");
    execFileSync("mkfifo", [fifo]);
    const named = await run("rules", "test", fifo, "/dev/zero");
    expect(named.code).toBe(2);
    expect(named.out).toContain(`  ${fifo}:1:1: error: is a FIFO, not a regular file; it is not read\n`);
    expect(named.out).toContain("  /dev/zero:1:1: error: is a character device, not a regular file; it is not read\n");
    const found = await run("rules", "test", dir);
    expect(found.code).toBe(2);
    expect(found.out).toContain(`${fifo}:1:1: error: is a FIFO, not a regular file; it is not read\n`);
  });
});

describe("acp explain", () => {
  it("explains the last call of the example session (exit 0)", async () => {
    const r = await run("explain", "examples/session.json");
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    expect(r.out).toMatch(/^examples\/session\.json: call (\d+) of \1, preset balanced: \d+ parts? pruned, \d+ tokens saved\n/);
  });

  it("shows a fact that never happened as Infinity, not JSON's null", async () => {
    const r = await run("explain", "examples/session.json");
    expect(r.out).toMatch(/✓ userNamedTurns = Infinity {2}greaterThanInclusive {2}4/);
    expect(r.out).not.toContain("userNamedTurns = null");
  });

  it("--part keeps the call's totals in the first line (not the one part's)", async () => {
    const all = await run("explain", "examples/session.json");
    const part = /\n(prt_\w+) \(/.exec(all.out)![1];
    const one = await run("explain", "examples/session.json", "--part", part);
    expect(one.code).toBe(0);
    expect(one.out.split("\n")[0]).toBe(all.out.split("\n")[0]);
    expect(new Set(one.out.match(/\nprt_\w+ \(/g))).toEqual(new Set([`\n${part} (`]));
    // a part whose output and input are both pruned counts once
    const blocks = all.out.match(/\n(prt_\w+) \(/g)!;
    expect(all.out).toContain(`preset balanced: ${new Set(blocks).size} parts pruned`);
    const unpruned = await run("explain", "examples/session.json", "--part", "prt_0000418");
    expect(unpruned.out.split("\n")[0]).toBe(all.out.split("\n")[0]);
  });

  it("--call picks the call", async () => {
    const r = await run("explain", "examples/session.json", "--call", "3", "--preset", "compact");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^examples\/session\.json: call 3 of \d+, preset compact: /);
  });

  it("a missing file: one line naming it, exit 2", async () => {
    const r = await run("explain", "no-such-session.json");
    expect(r).toEqual({ code: 2, out: "", err: "error: no-such-session.json: file not found\n" });
  });

  it("a FIFO or /dev/zero as the session: one line, exit 2, no hang and no crash", () => refusesSpecialFiles("explain"));

  it("a --call out of range or not a number: exit 2, no stack trace", async () => {
    const out = await run("explain", "examples/session.json", "--call", "9999");
    expect(out.code).toBe(2);
    expect(out.err).toMatch(/^error: --call must be a whole number between 1 and \d+\n$/);
    const nan = await run("explain", "examples/session.json", "--call", "abc");
    expect(nan.code).toBe(2);
    expect(nan.err).toMatch(/^error: --call must be a whole number between 1 and \d+\n$/);
    noStack(out.err + nan.err);
  });

  it("--part of a part no rule pruned: each rule that considers it, what it waits for or which leaves fail", async () => {
    const r = await run("explain", "examples/session.json", "--part", "prt_0000418");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\npart prt_0000418 is not pruned at call 115\n/);
    expect(r.out).toMatch(/\n {2}stale-shell-output: does not match: ageTurns = 0 \(greaterThanInclusive 1\); idleTurns = 0 \(greaterThanInclusive 3\)\n {4}\[.*rules\/age\.yaml:\d+:\d+\]\n {4}✗ all\n/);
    expect(r.out).toMatch(/\n {2}idle-large-output: does not match: idleCalls = 1 \(greaterThanInclusive 20\); idleWorkCalls = 0 \(greaterThanInclusive 17\); changeTurns = 1 \(lessThan 1\) or idleCalls = 1 \(greaterThanInclusive 60\) and idleWorkCalls = 0 \(greaterThanInclusive 60\)\n/);
    const missing = await run("explain", "examples/session.json", "--part", "prt_nope");
    expect(missing).toEqual({ code: 2, out: "", err: "error: --part prt_nope: no such part in the prompt of call 115\n" });
  });

  it("--part of a write's result: the rule that overrides protection says why it does not prune, before the protection it overrides", async () => {
    const r = await run("explain", "examples/session.json", "--part", "prt_0000266");
    expect(r.code).toBe(0);
    const reasons = r.out.split("\n").filter((l) => /^ {2}\S/.test(l));
    expect(reasons.slice(0, 2)).toEqual([
      "  stale-edit-result: matches (it overrides protected-tools), but its change would not shrink the part: its output, 78 chars, would become 97 chars",
      "  protected-tools: protects it from every rule but stale-edit-result, which overrides protection",
    ]);
  });

  it("a wrong preset, a missing rule file or a rule file with an error: rejected as simulate rejects them, exit 2", async () => {
    const bad = join(tmp, "bad-rule.yaml");
    writeFileSync(bad, "rules:\n  my-rule:\n    phase: agee\n    when: { fact: tool, operator: equal, value: bash }\n    then: { action: clear }\n");
    for (const args of [["--preset", "balanc"], ["--rules", "/nope.yaml"], ["--rules", bad]]) {
      const explain = await run("explain", "examples/session.json", ...args);
      const simulate = await run("simulate", "examples/session.json", ...args);
      expect(simulate.code).toBe(2);
      expect(explain).toEqual({ code: 2, out: "", err: simulate.err.replace(/^error: strategy "[^"]+"/, `error: strategy "${args[0] === "--preset" ? args[1] : "balanced"}"`) });
      expect(explain.err.split("\n")).toHaveLength(2);
    }
    expect((await run("explain", "examples/session.json", "--preset", "balanc")).err).toMatch(/^error: strategy "balanc": unknown preset "balanc" \(did you mean "balanced"\?\)/);
    expect((await run("explain", "examples/session.json", "--rules", "/nope.yaml")).err).toBe('error: strategy "balanced": /nope.yaml:1:1 file not found\n');
    expect((await run("explain", "examples/session.json", "--rules", bad)).err).toMatch(new RegExp(`^error: strategy "balanced": ${bad}:3:\\d+ `));
  });

  it("--call 1.5 is no call number; a folder of several sessions is not one session (exit 2)", async () => {
    expect(await run("explain", "examples/session.json", "--call", "1.5")).toMatchObject({ code: 2, err: expect.stringMatching(/^error: --call must be a whole number between 1 and \d+\n$/) });
    const dir = join(tmp, "two-sessions");
    mkdirSync(dir);
    for (const n of ["a", "b"]) writeFileSync(join(dir, `${n}.json`), readFileSync("examples/session.json"));
    expect(await run("explain", dir)).toEqual({ code: 2, out: "", err: `error: ${dir} holds 2 sessions; explain takes one (a session file)\n` });
  });

  it("a missing argument is a usage error", async () => {
    expect(await run("explain")).toEqual({ code: 2, out: "", err: "error: missing required argument 'session'\n" });
  });
});

describe("acp simulate", () => {
  it("an empty --compare, or an output file that cannot be written, is said before the replay (exit 2)", async () => {
    expect(await run("simulate", "examples/session.json", "--compare", ",")).toEqual({ code: 2, out: "", err: "error: --compare names no strategy (known: none, native, mask10, ctxedit, batch10, compact, balanced, verbose, config, or preset files)\n" });
    expect(await run("simulate", "examples/session.json", "--html", tmp)).toEqual({ code: 2, out: "", err: `error: --html ${tmp}: is a folder\n` });
    const missing = join(tmp, "no-such-folder", "out.json");
    expect(await run("simulate", "examples/session.json", "--json", missing)).toEqual({ code: 2, out: "", err: `error: --json ${missing}: its folder ${join(tmp, "no-such-folder")} does not exist\n` });
  });

  it("a missing file: one line naming it, exit 2", async () => {
    const r = await run("simulate", "no-such-corpus.json");
    expect(r).toEqual({ code: 2, out: "", err: "error: no-such-corpus.json: file not found\n" });
  });

  it("a FIFO or /dev/zero as the session: one line, exit 2, no hang and no crash", () => refusesSpecialFiles("simulate"));

  it("a folder with unreadable files: one line for each (path and reason), the rest replayed, exit 0; none readable: exit 2", async () => {
    const folder = join(tmp, "sessions-mixed");
    mkdirSync(folder);
    writeFileSync(join(folder, "a.json"), readFileSync("examples/session.json"));
    writeFileSync(join(folder, "zz.json"), "{");
    mkdirSync(join(folder, "d.json"));
    const r = await run("simulate", folder, "--compare", "none");
    expect(r.code).toBe(0);
    expect(r.err).toBe(`skipped: ${join(folder, "d.json")}: is a folder, not a file\nskipped: ${join(folder, "zz.json")}:1:2: not valid JSON (${r.err.split("not valid JSON (")[1]}`);
    expect(r.err.split("\n")).toHaveLength(3);
    expect(r.out).toMatch(/^TOTAL \(1 sessions\)\s+none\s/m);
    rmSync(join(folder, "a.json"));
    const none = await run("simulate", folder, "--compare", "none");
    expect(none.code).toBe(2);
    expect(none.out).toBe("");
    expect(none.err.split("\n").slice(2)).toEqual([`error: ${folder}: none of the folder's 2 .json files could be read as a session`, ""]);
  });

  it("a malformed JSON file: one line naming it, exit 2, no stack trace", async () => {
    const file = join(tmp, "broken.json");
    writeFileSync(file, "{not json");
    const r = await run("simulate", file);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toMatch(new RegExp(`^error: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:1:2: not valid JSON \\(.+\\)\\n$`));
    noStack(r.err);
  });

  it("replays the example session against no pruning (exit 0)", async () => {
    const r = await run("simulate", "examples/session.json", "--compare", "none,balanced");
    expect(r.code).toBe(0);
    const lines = r.out.split("\n");
    expect(lines[0]).toMatch(/^session\s+strategy\s+billed\s+Δbilled\s+peak\s+breaks\s+Δanthropic\s+\+recovery\s+Δopenai\s+\+recovery\s+quote-loss\s+re-reads \(tokens\)\s+>\+2%\s+ms med\/p95$/);
    expectLine(lines, /^TOTAL \(1 sessions\)\s+none\s+[\d,]+\s+0\.0%/);
    expectLine(lines, /^TOTAL \(1 sessions\)\s+balanced\s+[\d,]+\s+[+-]?\d+\.\d%/);
  });

  it("accepts the baselines ctxedit and batch10 by name, and reports recovery in the table and the JSON", async () => {
    const json = join(tmp, "figures.json");
    const r = await run("simulate", "examples/session.json", "--compare", "none,ctxedit,batch10", "--json", json);
    expect(r.code).toBe(0);
    const lines = r.out.split("\n");
    // ctxedit hides lines this session quotes later: its re-reads make the cost with recovery higher
    expectLine(lines, /^TOTAL \(1 sessions\)\s+ctxedit\s+[\d,]+\s+-16\.0%\s+[\d,]+\s+30\s+-3\.5%\s+-3\.4%\s+-5\.6%\s+-5\.6%\s+100\.00% \(3\/3\)\s+2 \(182\)\s+0\/1\s/);
    expectLine(lines, /^TOTAL \(1 sessions\)\s+batch10\s+[\d,]+\s+-46\.2%/);
    expectLine(lines, /^mask-old-outputs\s+147\s+1,270,535\s+3\s+2\s+182\s+\+0\.02%$/);
    const results = JSON.parse(readFileSync(json, "utf8"));
    const ctxedit = results.find((x: { strategy: string }) => x.strategy === "ctxedit");
    expect(ctxedit.figures.total).toMatchObject({ quoteLost: 3, reReads: 2, recoveryTokens: 182 });
    expect(ctxedit.figures.total.anthropicCostWithRecovery).toBeCloseTo(ctxedit.figures.total.anthropicCost + 1.25 * 182);
    expect(ctxedit.overLimit).toEqual({ limitPct: 2, sessions: [], anthropic: 0, openai: 0 });
    expect(ctxedit.figures.total.quoteLosses.map((q: { reReadTokens: number }) => q.reReadTokens).sort()).toEqual([0, 113, 69].sort());
  });

  it("reports the live regret signal of the replay: re-runs of hidden outputs per rule, and where a rule backed off", async () => {
    // cat one, cat two, cat one again: the first output is cleared when the model runs it again
    const out = (command: string, id: string) => ({ tool: "bash", input: { command, description: "d" }, output: bigText(command), id });
    const session = join(tmp, "rerun.json");
    writeFileSync(session, JSON.stringify({ info: { id: SID }, messages: [user("go"), assistant([out("cat one", "prt_a")]), assistant([out("cat two", "prt_b")]), assistant([out("cat one", "prt_c")]), assistant([], "done")] }));
    const preset = (limit: number) => {
      const file = join(tmp, `mask-limit${limit}.yaml`);
      writeFileSync(file, `description: mask after one call\ncommit: { minTokens: 0, pressureTokens: 0, breakEven: 0, regretLimit: ${limit} }\nrules:\n  mask-old-outputs: { with: { keepCalls: 1, text: "[cleared]" } }\n`);
      return file;
    };
    const json = join(tmp, "regret.json");
    const r = await run("simulate", session, "--compare", `none,${preset(0)},${preset(1)}`, "--json", json);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split("\n").filter((l) => l.startsWith("regret"));
    expect(lines).toEqual([
      "regret (calls re-run while their output was hidden): mask-old-outputs 1; backed off (regretLimit 0): none",
      `regret (calls re-run while their output was hidden): mask-old-outputs 1; backed off (regretLimit 1): mask-old-outputs in ${SID}`,
    ]);
    const results = JSON.parse(readFileSync(json, "utf8"));
    expect(results[2].regret).toEqual({ limit: 1, rules: { "mask-old-outputs": { agent: 0, user: 0, rerun: 1 } }, backedOff: [{ rule: "mask-old-outputs", session: SID }] });
    expect(results[0].regret).toBeUndefined(); // no pruner, no signal
  });

  it("config replays what the plugin would run in the current folder: its acp.jsonc layers and rule folders", async () => {
    const project = join(tmp, "config-project");
    mkdirSync(join(project, ".opencode"), { recursive: true });
    const example = join(process.cwd(), "examples", "session.json");
    const balanced = readFileSync(join(process.cwd(), "presets", "balanced.yaml"), "utf8");
    const careful = join(tmp, "careful.yaml"); // balanced with the two overrides below, as a preset file
    writeFileSync(careful, balanced.replace(/^  stale-read: .*$/m, "  stale-read: { with: { minChars: 400, idleTurns: 1, workCalls: 0 } }").replace(/^  stale-shell-output: .*$/m, "  stale-shell-output: off"));
    const cwd = process.cwd();
    const xdg = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = join(tmp, "no-global-config");
    process.chdir(project);
    const totals = async (compare: string) => {
      const json = join(tmp, "config.json");
      const r = await run("simulate", example, "--compare", compare, "--json", json);
      expect(r.code, r.err).toBe(0);
      return (JSON.parse(readFileSync(json, "utf8")) as { strategy: string; figures: { total: { anthropicCost: number; quoteLost: number; prefixBreaks: number } } }[]).map((x) => {
        const { anthropicCost, quoteLost, prefixBreaks } = x.figures.total;
        return { anthropicCost, quoteLost, prefixBreaks };
      });
    };
    try {
      // no acp.jsonc: the default preset
      const [, def, bal] = await totals("none,config,balanced");
      expect(def).toEqual(bal);
      // a project acp.jsonc that picks a preset and overrides two rules: the same replay as a preset file that does so
      writeFileSync(join(project, ".opencode", "acp.jsonc"), '{ "preset": "balanced", "rules": { "stale-read": { "with": { "minChars": 400, "idleTurns": 1, "workCalls": 0 } }, "stale-shell-output": "off" } }');
      const [, mine, file, plain] = await totals(`none,config,${careful},balanced`);
      expect(mine).toEqual(file);
      expect(mine).not.toEqual(plain);
      // explain reads the same configuration
      const explained = await run("explain", example, "--preset", "config");
      expect(explained.code, explained.err).toBe(0);
      expect(explained.out).toMatch(/^\S+session\.json: call \d+ of \d+, preset config: \d+ parts? pruned/);
      // a broken acp.jsonc stops the replay with its place, as a broken preset does
      writeFileSync(join(project, ".opencode", "acp.jsonc"), '{ "rules": { "stale-raed": "off" } }');
      const r = await run("simulate", example, "--compare", "config");
      expect(r.code).toBe(2);
      expect(r.err).toMatch(new RegExp(`^error: strategy "config": ${join(project, ".opencode", "acp.jsonc").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:1:\\d+ unknown rule "stale-raed" \\(did you mean "stale-read"\\?\\)`));
      noStack(r.err);
    } finally {
      process.chdir(cwd);
      if (xdg === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = xdg;
    }
  });

  it("an unknown strategy: exit 2 with a message", async () => {
    const r = await run("simulate", "examples/session.json", "--compare", "balancd");
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toMatch(/^error: strategy "balancd": unknown preset "balancd" \(did you mean "balanced"\?\)/);
    noStack(r.err);
    // a misspelt baseline or config is suggested too
    expect((await run("simulate", "examples/session.json", "--compare", "none,ctxedt")).err).toBe('error: strategy "ctxedt": unknown strategy (did you mean "ctxedit"?)\n');
    expect((await run("simulate", "examples/session.json", "--compare", "confg")).err).toBe('error: strategy "confg": unknown strategy (did you mean "config"?)\n');
  });
});

describe("a reader that closes the pipe (acp … | head -1)", () => {
  /** Runs main() on the real stdout, in a child whose stdout is closed before it writes. */
  const closedStdout = (...argv: string[]) =>
    new Promise<{ code: number | null; err: string }>((done) => {
      const script = "import { main } from './src/cli/main.ts'; process.exitCode = await main(process.argv.slice(1));";
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, ...argv], { stdio: ["ignore", "pipe", "pipe"] });
      child.stdout.destroy();
      let err = "";
      child.stderr.on("data", (d) => (err += d));
      child.on("close", (code) => done({ code, err }));
    });

  it.each(["explain examples/session.json", "simulate examples/session.json", "rules catalog", "presets"])("acp %s: ends quietly with exit 0, no stack trace", async (command) => {
    expect(await closedStdout(...command.split(" "))).toEqual({ code: 0, err: "" });
  }, 30_000);
});

describe("usage", () => {
  it("an unknown command exits 2", async () => {
    expect(await run("frobnicate")).toEqual({ code: 2, out: "", err: "error: unknown command 'frobnicate'\n" });
  });

  it("an unknown option exits 2", async () => {
    expect(await run("presets", "--frob")).toEqual({ code: 2, out: "", err: "error: unknown option '--frob'\n" });
  });

  it("--help exits 0 and lists the commands", async () => {
    const r = await run("--help");
    expect(r.code).toBe(0);
    for (const c of ["rules", "presets", "simulate", "explain"]) expect(r.out).toMatch(new RegExp(`^  ${c}\\b`, "m"));
  });
});

describe("usage errors", () => {
  it("a non-numeric --max-warnings is a usage error", async () => {
    const r = await run("rules", "lint", "--max-warnings", "abc", "tests/cli/broken");
    expect(r.code).toBe(2);
    expect(r.err).toBe('error: --max-warnings takes a whole number, not "abc"\n');
  });

  it("too many warnings says why it failed", async () => {
    const file = join(tmp, "warn.yaml");
    writeFileSync(file, "rules:\n  x:\n    phase: reduce\n    description: d\n    when: { all: [ { fact: role, operator: equal, value: user }, { fact: partType, operator: equal, value: text } ] }\n    then: { action: drop }\n");
    const r = await run("rules", "lint", "--max-warnings", "0", file);
    expect(r.out).toContain("warning");
    expect(r.code).toBe(1);
    expect(r.err).toBe("acp rules lint found too many warnings (maximum: 0)\n");
  });

  it("a command group without its subcommand and a lint of nothing readable exit 2", async () => {
    expect((await run("rules")).code).toBe(2);
    const missing = await run("rules", "lint", join(tmp, "nope.yaml"));
    expect(missing.code).toBe(2);
    expect(missing.out).toContain("file not found");
  });
});
