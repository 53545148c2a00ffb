// Rule fixtures (Semgrep-style `# ruleid:` / `# ok:` annotations) for every built-in rule, and
// tests of the fixture runner itself: it must report what is wrong, where, and refuse fixtures
// it cannot understand.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runRulesTest } from "../../src/cli/rules-test.js";
import { BUILTIN_RULES_DIR, loadRuleFiles } from "../../src/rules/load.js";
import { findFixtureFiles, FixtureError, parseFixture, runFixture, runFixtureFile, type Mismatch } from "../../src/cli/fixtures.js";

const FIXTURES = fileURLToPath(new URL("./fixtures", import.meta.url));
const fixtureFiles = findFixtureFiles([FIXTURES]).files;
const show = (m: Mismatch) => `${basename(m.file)}:${m.line}:${m.col}: ${m.kind} ${m.rule}: ${m.message}`;

describe("built-in rule fixtures", () => {
  it.each(fixtureFiles.map((f) => [basename(f), f]))("%s", (_name, file) => {
    const result = runFixtureFile(file);
    expect(result.mismatches.map(show)).toEqual([]);
  });

  it("every built-in rule has a fixture where it must fire (ruleid)", () => {
    const ids = loadRuleFiles([BUILTIN_RULES_DIR]).rules.map((r) => r.id);
    expect(ids.length).toBeGreaterThan(20);
    const covered = new Set(fixtureFiles.flatMap((f) => parseFixture(f).annotations.filter((a) => a.kind === "ruleid").map((a) => a.rule)));
    expect(ids.filter((id) => !covered.has(id))).toEqual([]);
  });

  it("every built-in rule has a fixture where it must not fire (ok)", () => {
    const ids = loadRuleFiles([BUILTIN_RULES_DIR]).rules.map((r) => r.id);
    const covered = new Set(fixtureFiles.flatMap((f) => parseFixture(f).annotations.filter((a) => a.kind === "ok").map((a) => a.rule)));
    expect(ids.filter((id) => !covered.has(id))).toEqual([]);
  });
});

// A session where read-supersedes-read fires on p1 only (p3 re-reads the whole of src/a.ts).
const SESSION = `
turns:
  - user: "fix the bug"
  - assistant:
      # ANNOTATE_P1
      - { id: p1, tool: read, input: { filePath: src/a.ts }, output: { lines: 20 } }
      # ANNOTATE_P2
      - { id: p2, tool: read, input: { filePath: src/b.ts, offset: 10, limit: 20 }, output: { lines: 20 } }
  - user: "go on"
  - assistant:
      - { id: p3, tool: read, input: { filePath: src/a.ts }, output: { lines: 20 } }
  - user: "ok"
`;
const session = (p1: string, p2: string, head = "rule: read-supersedes-read") =>
  head + SESSION.replace("ANNOTATE_P1", p1).replace("ANNOTATE_P2", p2);
const run = (text: string, file = "/virtual/t.session.yaml") => runFixture(parseFixture(file, text));
const fixtureError = (fn: () => unknown): FixtureError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof FixtureError) return e;
    throw e;
  }
  throw new Error("expected a FixtureError");
};

describe("fixture runner", () => {
  it("counts a correct fixture as TP/TN with no mismatches", () => {
    const r = run(session("ruleid: read-supersedes-read", "ok: read-supersedes-read"));
    expect(r.mismatches).toEqual([]);
    expect(r.counts["read-supersedes-read"]).toEqual({ tp: 1, fp: 0, fn: 0, tn: 1, todo: 0 });
  });

  it("reports a ruleid that does not fire as FN at the annotation's line", () => {
    // p2 is a partial read that nothing newer covers: the rule cannot fire on it.
    const r = run(session("ruleid: read-supersedes-read", "ruleid: read-supersedes-read"));
    expect(r.mismatches).toHaveLength(1);
    expect(r.mismatches[0]).toMatchObject({ kind: "FN", rule: "read-supersedes-read", partId: "p2", line: 7, col: 7 });
    expect(r.counts["read-supersedes-read"]).toMatchObject({ tp: 1, fn: 1 });
  });

  it("reports an ok on a part the rule decides as FP at the annotation's line", () => {
    const r = run(session("ok: read-supersedes-read", "ok: read-supersedes-read"));
    expect(r.mismatches).toHaveLength(1);
    expect(r.mismatches[0]).toMatchObject({ kind: "FP", partId: "p1", line: 5, col: 7 });
  });

  it("reports a decision on an unannotated part as FP at the part's line", () => {
    const r = run(session("a plain comment", "ok: read-supersedes-read"));
    expect(r.mismatches).toHaveLength(1);
    expect(r.mismatches[0]).toMatchObject({ kind: "FP", partId: "p1", line: 6 });
    expect(r.mismatches[0].message).toContain("no annotation");
  });

  it("counts todo annotations of open gaps without failing, and fails once the gap closes", () => {
    const open = run(session("ruleid: read-supersedes-read", "todoruleid: read-supersedes-read"));
    expect(open.mismatches).toEqual([]);
    expect(open.counts["read-supersedes-read"].todo).toBe(1);
    expect(open.todos[0]).toMatchObject({ partId: "p2", line: 7 });
    const closed = run(session("todoruleid: read-supersedes-read", "ok: read-supersedes-read"));
    expect(closed.mismatches).toHaveLength(1);
    expect(closed.mismatches[0]).toMatchObject({ kind: "todo-fixed", partId: "p1", line: 5 });
  });

  it("reads several annotations and comma-separated ids above one part", () => {
    const text = session("ruleid: read-supersedes-read\n      # ok: protected-files, recent-turns", "ok: read-supersedes-read");
    const fx = parseFixture("/virtual/t.session.yaml", text);
    expect(fx.annotations.map((a) => `${a.kind}:${a.rule}:${a.partId}:${a.line}`)).toEqual([
      "ruleid:read-supersedes-read:p1:5",
      "ok:protected-files:p1:6",
      "ok:recent-turns:p1:6",
      "ok:read-supersedes-read:p2:8",
    ]);
    expect(runFixture(fx).mismatches).toEqual([]);
  });

  it("locates annotations above block-style parts and on the first item of a list", () => {
    const text = [
      "rule: step-markers",
      "turns:",
      "  - user: go",
      "  - assistant:",
      "    # ruleid: step-markers",
      "    - type: step-start",
      "      id: s1",
      "",
      "    # ok: step-markers",
      "    - id: t1",
      "      text: hello",
      "  - user: next",
    ].join("\n");
    const fx = parseFixture("/virtual/b.session.yaml", text);
    expect(fx.annotations.map((a) => `${a.kind}:${a.partId}:${a.line}:${a.col}`)).toEqual(["ruleid:s1:5:5", "ok:t1:9:5"]);
    expect(runFixture(fx).mismatches).toEqual([]);
  });

  it("checks inline expectations of the rendered part, located at the expect entry", () => {
    const good = session("ruleid: read-supersedes-read", "ok: read-supersedes-read") + `expect:\n  p1: { output: 'read({filePath: "src/a.ts"}) → superseded by a later read' }\n  p2: { output: { lines: 20 } }\n`;
    expect(run(good).mismatches).toEqual([]);
    const bad = session("ruleid: read-supersedes-read", "ok: read-supersedes-read") + `expect:\n  p1: { output: "something else" }\n`;
    const r = run(bad);
    expect(r.mismatches).toHaveLength(1);
    expect(r.mismatches[0]).toMatchObject({ kind: "expect", partId: "p1", line: 14 });
    expect(r.mismatches[0].message).toContain("superseded by a later read");
  });

  it("compares the .session.fixed.yaml golden file", () => {
    const dir = tmp();
    writeFileSync(join(dir, "g.session.yaml"), session("ruleid: read-supersedes-read", "ok: read-supersedes-read"));
    writeFileSync(join(dir, "g.session.fixed.yaml"), `p1:\n  output: 'read({filePath: "src/a.ts"}) → superseded by a later read'\np3:\n  output: wrong\n`);
    const r = runFixtureFile(join(dir, "g.session.yaml"));
    expect(r.mismatches.map((m) => `${basename(m.file)}:${m.line}:${m.kind}:${m.partId}`)).toEqual(["g.session.fixed.yaml:3:expect:p3"]);
  });

  it("builds OpenCode-shaped messages and parts", () => {
    const text = [
      "rule: step-markers",
      "turns:",
      "  - user: [hi, { id: f, type: file, mime: image/png, filename: a.png, url: 'data:image/png;base64,AAAA' }]",
      "  - assistant:",
      "      - { id: s, type: step-start }",
      "      - { id: r, type: reasoning, text: hmm }",
      "      - { id: ok, tool: read, input: { filePath: a.ts }, output: done }",
      "      - { id: bad, tool: read, input: { filePath: b.ts }, status: error, error: boom }",
      "      - { id: old, tool: read, input: { filePath: c.ts }, compacted: true, output: x }",
    ].join("\n");
    const fx = parseFixture("/virtual/shape.session.yaml", text);
    const [user, asst] = fx.messages;
    expect(user.info).toMatchObject({ id: "msg_001", role: "user", sessionID: "fixture_shape.session.yaml" });
    expect(asst.info).toMatchObject({ id: "msg_002", role: "assistant", parentID: "msg_001" });
    expect(user.parts[0]).toMatchObject({ type: "text", text: "hi", messageID: "msg_001", sessionID: user.info.sessionID });
    expect(user.parts[1]).toMatchObject({ id: "f", type: "file", mime: "image/png", filename: "a.png" });
    expect(asst.parts.map((p) => p.type)).toEqual(["step-start", "reasoning", "tool", "tool", "tool"]);
    expect(asst.parts[2]).toMatchObject({ tool: "read", callID: "call_ok", state: { status: "completed", input: { filePath: "a.ts" }, output: "done" } });
    expect(asst.parts[3].state).toMatchObject({ status: "error", error: "boom" });
    expect(asst.parts[3].state).not.toHaveProperty("output");
    expect(asst.parts[4].state?.time?.compacted).toBeTypeOf("number");
  });

  it("accepts JSON fixtures, annotated with an `annotations` list in the part", () => {
    const json = JSON.stringify(
      {
        rule: "identical-call",
        turns: [
          { user: "run it" },
          { assistant: [{ id: "a", tool: "bash", input: { command: "ls -la" }, output: { lines: 10 }, annotations: ["ruleid: identical-call"] }] },
          { user: "again" },
          { assistant: [{ id: "b", tool: "bash", input: { command: "ls -la" }, output: { lines: 10 }, annotations: ["ok: identical-call"] }] },
          { user: "ok" },
        ],
      },
      null,
      1,
    );
    const r = run(json, "/virtual/j.session.json");
    expect(r.mismatches).toEqual([]);
    expect(r.counts["identical-call"]).toMatchObject({ tp: 1, tn: 1 });
  });

  it("tests a protect rule by what it prevents (a run with the protect rule off)", () => {
    const text = [
      "rule: protected-files",
      "rules: { read-supersedes-read: on }",
      "turns:",
      "  - user: go",
      "  - assistant:",
      "      # ruleid: protected-files",
      "      - { id: e1, tool: read, input: { filePath: .env }, output: { lines: 10 } }",
      "      # ok: protected-files",
      "      - { id: a1, tool: read, input: { filePath: src/a.ts }, output: { lines: 10 } }",
      "  - user: again",
      "  - assistant:",
      "      - { id: e2, tool: read, input: { filePath: .env }, output: { lines: 10 } }",
      "      - { id: a2, tool: read, input: { filePath: src/a.ts }, output: { lines: 10 } }",
      "  - user: ok",
    ].join("\n");
    expect(run(text).mismatches).toEqual([]);
    // Swapped expectations must fail both ways.
    const swapped = run(text.replace("# ruleid: protected-files", "# ok: protected-files").replace("# ok: protected-files\n      - { id: a1", "# ruleid: protected-files\n      - { id: a1"));
    expect(swapped.mismatches.map((m) => `${m.kind}:${m.partId}`).sort()).toEqual(["FN:a1", "FP:e1"]);
  });

  it("uses user rule files named by the fixture", () => {
    const dir = tmp();
    writeFileSync(
      join(dir, "mine.yaml"),
      "rules:\n  drop-text:\n    phase: reduce\n    description: drops assistant text\n    when:\n      all:\n        - { fact: role, operator: equal, value: assistant }\n        - { fact: partType, operator: equal, value: text }\n    then: { action: drop }\n",
    );
    const text = "rule: drop-text\nruleFiles: [mine.yaml]\nturns:\n  - user: hi\n  - assistant:\n      # ruleid: drop-text\n      - hello\n";
    writeFileSync(join(dir, "mine.session.yaml"), text);
    expect(runFixtureFile(join(dir, "mine.session.yaml")).mismatches).toEqual([]);
  });
});

describe("malformed fixtures", () => {
  it("reports YAML syntax errors at line:col", () => {
    const e = fixtureError(() => parseFixture("/virtual/bad.session.yaml", "rule: identical-call\nturns:\n  - user: [unclosed\n"));
    expect(e.where).toMatchObject({ file: "/virtual/bad.session.yaml", line: 4 });
    expect(e.message).toMatch(/^\/virtual\/bad\.session\.yaml:4:\d+: YAML: /);
  });

  it("rejects an annotation that is not directly above a part", () => {
    const text = "rule: identical-call\nturns:\n  # ruleid: identical-call\n  - user: hi\n  - assistant:\n      - { id: a, tool: bash, input: { command: ls }, output: x }\n";
    const e = fixtureError(() => parseFixture("/virtual/stray.session.yaml", text));
    expect(e.where).toMatchObject({ line: 3, col: 3 });
    expect(e.detail).toContain("not directly above a part");
  });

  it("rejects an annotation written after a part on the same line", () => {
    const text = "rule: identical-call\nturns:\n  - user: hi\n  - assistant:\n      - { id: a, tool: bash, input: { command: ls }, output: x } # ruleid: identical-call\n";
    const e = fixtureError(() => parseFixture("/virtual/trailing.session.yaml", text));
    expect(e.where).toMatchObject({ line: 5, col: 66 });
  });

  it("rejects an expectation for a part the session does not have", () => {
    const e = fixtureError(() => parseFixture("/virtual/x.session.yaml", session("ruleid: read-supersedes-read", "ok: read-supersedes-read") + "expect:\n  p9: { dropped: true }\n"));
    expect(e.where.line).toBe(14);
    expect(e.detail).toContain('unknown part "p9"');
  });

  it("rejects unknown keys with a suggestion", () => {
    const text = "rule: identical-call\nturns:\n  - user: hi\n  - assistant:\n      - { id: a, tool: bash, inptu: { command: ls } }\n";
    const e = fixtureError(() => parseFixture("/virtual/key.session.yaml", text));
    expect(e.where).toMatchObject({ line: 5, col: 30 });
    expect(e.detail).toContain('did you mean "input"');
  });

  it("checks the shape against schemas/fixture.schema.json, located at the offending value", () => {
    const base = "rule: identical-call\nturns:\n  - user: hi\n  - assistant:\n";
    const calls = fixtureError(() => parseFixture("/virtual/calls.session.yaml", "calls: 0\n" + base + "      - { id: a, tool: bash, input: { command: ls }, output: x }\n"));
    expect(calls.where).toMatchObject({ line: 1, col: 8 });
    expect(calls.detail).toContain("/calls must be >= 1");
    const lines = fixtureError(() => parseFixture("/virtual/lines.session.yaml", base + "      - { id: a, tool: bash, input: { command: ls }, output: { lines: 0 } }\n"));
    expect(lines.where).toMatchObject({ line: 5, col: 71 });
    expect(lines.detail).toContain("/turns/1/assistant/0/output/lines must be >= 1");
    const input = fixtureError(() => parseFixture("/virtual/input.session.yaml", base + "      - { id: a, tool: write, input: { filePath: a.ts, content: { lines: 0 } }, output: x }\n"));
    expect(input.where).toMatchObject({ line: 5, col: 74 });
    expect(input.detail).toContain("/turns/1/assistant/0/input/content/lines must be >= 1");
    const status = fixtureError(() => parseFixture("/virtual/status.session.yaml", base + "      - { id: a, tool: bash, status: done, input: { command: ls } }\n"));
    expect(status.where).toMatchObject({ line: 5, col: 38 });
    expect(status.detail).toContain('must be one of "completed", "error", "running", "pending"');
    const setting = fixtureError(() => parseFixture("/virtual/setting.session.yaml", "rules: { recent-turns: maybe }\n" + base + "      - hello\n"));
    expect(setting.where.line).toBe(1);
    expect(setting.detail).toContain("/rules/recent-turns");
    const config = fixtureError(() => parseFixture("/virtual/config.session.yaml", "config: { protectedTool: [bash] }\n" + base + "      - hello\n"));
    expect(config.where).toMatchObject({ line: 1, col: 11 });
    expect(config.detail).toContain('did you mean "protectedTools"');
    const missing = fixtureError(() => parseFixture("/virtual/norule.session.yaml", "turns:\n  - user: hi\n"));
    expect(missing.detail).toContain('missing required property "rule"');
  });

  it("checks a .session.fixed.yaml file's shape too", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-fixed-"));
    const file = join(dir, "x.session.yaml");
    writeFileSync(file, "rule: identical-call\nturns:\n  - user: hi\n  - assistant:\n      - { id: a, tool: bash, input: { command: ls }, output: x }\n");
    writeFileSync(join(dir, "x.session.fixed.yaml"), "a: { outptu: x }\n");
    const e = fixtureError(() => parseFixture(file));
    expect(e.where).toMatchObject({ file: join(dir, "x.session.fixed.yaml"), line: 1, col: 6 });
    expect(e.detail).toContain('did you mean "output"');
  });

  it("rejects unknown rule ids and annotations for rules that are off", () => {
    const unknown = fixtureError(() => run(session("ruleid: read-supersedes-reed", "ok: read-supersedes-read")));
    expect(unknown.where.line).toBe(5);
    expect(unknown.detail).toContain('did you mean "read-supersedes-read"');
    const off = fixtureError(() => run(session("ruleid: read-supersedes-read", "ok: identical-call")));
    expect(off.where.line).toBe(7);
    expect(off.detail).toContain('"identical-call" is off');
  });
});

describe("acp rules test", () => {
  it("exits 0 with a per-rule table when every expectation holds", () => {
    const dir = tmp();
    writeFileSync(join(dir, "a.session.yaml"), session("ruleid: read-supersedes-read", "ok: read-supersedes-read"));
    const { exitCode, output } = runRulesTest([dir]);
    expect(exitCode).toBe(0);
    expect(output).toMatch(/rule\s+TP\s+FP\s+FN\s+TN\s+todo/);
    expect(output).toMatch(/read-supersedes-read\s+1\s+0\s+0\s+1\s+0/);
    expect(output).toContain("1 fixture run, 0 failed, 0 unreadable");
  });

  it("exits 1 and lists mismatches with file:line:col", () => {
    const dir = tmp();
    const file = join(dir, "b.session.yaml");
    writeFileSync(file, session("ruleid: read-supersedes-read", "ruleid: read-supersedes-read"));
    const { exitCode, output } = runRulesTest([file]);
    expect(exitCode).toBe(1);
    expect(output).toContain(`${file}:7:7: FN read-supersedes-read: expected read-supersedes-read to decide p2`);
  });

  it("exits 2 on an unreadable or malformed fixture, without a stack trace", () => {
    const dir = tmp();
    writeFileSync(join(dir, "c.session.yaml"), "rule: [\n");
    const { exitCode, output } = runRulesTest([dir, join(dir, "missing.session.yaml")]);
    expect(exitCode).toBe(2);
    expect(output).toMatch(/c\.session\.yaml:2:1: error: YAML: /);
    expect(output).toContain("missing.session.yaml:1:1: error: no such file or folder");
    expect(output).not.toMatch(/\n\s+at /);
  });

  it("prints JSON with --json", () => {
    const dir = tmp();
    writeFileSync(join(dir, "d.session.yaml"), session("ruleid: read-supersedes-read", "ruleid: read-supersedes-read"));
    const { exitCode, output } = runRulesTest([dir], { json: true });
    const parsed = JSON.parse(output);
    expect(exitCode).toBe(1);
    expect(parsed.rules).toEqual([{ rule: "read-supersedes-read", tp: 1, fp: 0, fn: 1, tn: 0, todo: 0 }]);
    expect(parsed.mismatches[0]).toMatchObject({ kind: "FN", line: 7, partId: "p2" });
  });
});

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "acp-fixtures-"));
  dirs.push(d);
  mkdirSync(d, { recursive: true });
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
