// acp rules lint: every check on a broken file (exact line:col, severity, ruleId and message),
// the stylish and JSON output, exit codes, --max-warnings and the default targets.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultTargets, lint } from "../../src/cli/lint.js";
import { main } from "../../src/cli/main.js";
import { BUILTIN_RULES_DIR, loadRuleFiles } from "../../src/rules/load.js";
import { packagePath } from "../../src/rules/paths.js";

const broken = (f: string) => join(dirname(fileURLToPath(import.meta.url)), "broken", f);
const rows = (paths: string[]) => lint(paths).map((p) => `${p.line}:${p.col} ${p.severity} ${p.ruleId}: ${p.message}`);

async function run(...argv: string[]) {
  let out = "";
  let err = "";
  const code = await main(argv, { out: (s) => void (out += s), err: (s) => void (err += s) });
  return { code, out, err };
}

describe("lint: YAML and JSONC syntax", () => {
  it("an unclosed flow mapping", () => {
    expect(rows([broken("yaml-syntax.yaml")])).toEqual(["7:5 error yaml-syntax: Flow map in block collection must be sufficiently indented and end with a }"]);
  });
  it("a rule id twice in one file", () => {
    expect(rows([broken("duplicate-key.yaml")])).toEqual(["8:3 error yaml-syntax: Map keys must be unique"]);
  });
  it("a missing comma in acp.jsonc", () => {
    expect(rows([broken("config-syntax.jsonc")])).toEqual(["4:3 error jsonc-syntax: JSONC: a comma is expected before this [CommaExpected]"]);
  });
  it("a path that does not exist", () => {
    expect(rows([broken("no-such-file.yaml")])).toEqual(["1:1 error unreadable: file not found"]);
  });
  it("an empty acp.jsonc says so, not the parser's code alone", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-lint-empty-"));
    const file = join(dir, "acp.jsonc");
    writeFileSync(file, "");
    expect(rows([file])).toEqual(["1:1 error jsonc-syntax: JSONC: the file is empty; an empty config is {} [ValueExpected]"]);
  });
});

describe("lint: JSON Schema (unknown keys are located at the key)", () => {
  it("rule files", () => {
    expect(rows([broken("schema.yaml")])).toEqual([
      '4:5 error schema/required: /rules/typo-key is missing required property "description"',
      '5:5 error schema/additionalProperties: unknown property "descripton" in /rules/typo-key (did you mean "description"?)',
      '9:12 error schema/enum: /rules/bad-phase/phase must be one of "protect", "supersede", "age", "reduce", "manual"',
      '14:5 error schema/required: /rules/no-then is missing required property "then"',
      '22:11 error schema/required: /rules/leaf-typo/when/all/0 is missing required property "operator"',
      '22:25 error schema/additionalProperties: unknown property "operater" in /rules/leaf-typo/when/all/0 (did you mean "operator"?)',
      '24:3 error schema/propertyNames: rule id "Bad_Id" must be lower-case words joined by "-" (^[a-z][a-z0-9-]*$)',
    ]);
  });
  it("presets", () => {
    expect(rows([broken("preset-schema.yaml")])).toEqual([
      '3:28 error schema/additionalProperties: unknown property "minToken" in /commit (did you mean "minTokens"?)',
      '5:19 error schema/enum: /rules/identical-call must be one of "on", "off"',
      "5:19 error schema/type: /rules/identical-call must be object",
    ]);
  });
  it("acp.jsonc", () => {
    expect(rows([broken("config-schema.jsonc")])).toEqual([
      '5:3 error schema/additionalProperties: unknown property "protectedTool" in / (did you mean "protectedTools"?)',
      "6:16 error schema/type: /subagents must be boolean",
    ]);
  });
});

describe("lint: every layer in one run (a rule, preset or config that fails the schema is still checked where readable)", () => {
  it("rules: a bad phase and an unknown operator two lines below; a missing description, an unknown fact, a bad option", () => {
    expect(rows([broken("every-layer.yaml")])).toEqual([
      '4:12 error schema/enum: /rules/bad-phase-and-operator/phase must be one of "protect", "supersede", "age", "reduce", "manual"',
      '6:35 error unknown-operator: unknown operator "equals" (did you mean "equal"?)',
      '9:5 error schema/required: /rules/missing-description is missing required property "description"',
      '10:19 error unknown-fact: unknown fact "tol" (did you mean "tool"?)',
      '11:37 error invalid-option: action "truncate" option mode must be one of "first-line", "head-tail"',
    ]);
  });
  it("acp.jsonc: an unknown key, and its preset, rule settings and rule files", () => {
    expect(rows([broken("config-every-layer.jsonc")])).toEqual([
      '3:3 error schema/additionalProperties: unknown property "protectedTool" in / (did you mean "protectedTools"?)',
      '4:13 error unknown-preset: unknown preset "balance" (did you mean "balanced"?) (known: compact, balanced, verbose, or a path to a preset file)',
      '5:14 error unknown-rule: unknown rule "state-qury" (did you mean "state-query"?)',
      '5:71 error unknown-override: rule "old-error-first-line" has no param or option "turn" (did you mean "turns"?)',
      `6:17 error missing-rule-file: rule file "./no-such-rules.yaml" not found (looked for ${broken("no-such-rules.yaml")})`,
    ]);
  });
  it("presets: a schema error, and an unknown rule in its settings", () => {
    expect(rows([broken("preset-every-layer.yaml")])).toEqual([
      '3:11 error schema/additionalProperties: unknown property "minToken" in /commit (did you mean "minTokens"?)',
      '5:3 error unknown-rule: unknown rule "identical-cal" (did you mean "identical-call"?)',
    ]);
  });
});

describe("lint: semantic checks of rule files", () => {
  it("unknown fact, operator, action and option, with did-you-mean", () => {
    expect(rows([broken("unknown-names.yaml")])).toEqual([
      '6:19 error unknown-fact: unknown fact "tol" (did you mean "tool"?)',
      '13:35 error unknown-operator: unknown operator "equals" (did you mean "equal"?)',
      '14:35 error unknown-operator: unknown operator "not:equals" (did you mean "not:equal"?)',
      '20:21 error unknown-action: unknown action "cleer" (did you mean "clear"?)',
      '25:31 error unknown-option: action "truncate" has no option "headLine" (did you mean "headLines"?)',
      '30:37 error invalid-option: action "truncate" option mode must be one of "first-line", "head-tail"',
    ]);
  });

  it("regexes that do not compile or are not linear-time, globs that do not compile", () => {
    const linear = "(rules run on a linear-time engine: no backreferences or lookaround)";
    expect(rows([broken("patterns.yaml")])).toEqual([
      `6:67 error invalid-regex: regex "(\\\\.env" is not accepted: error parsing regexp: missing closing ): \`(\\.env\` ${linear}`,
      `11:67 error invalid-regex: regex "(a+)\\\\1" is not accepted: error parsing regexp: invalid escape sequence: \`\\1\` ${linear}`,
      `16:67 error invalid-regex: regex "git(?= push)" is not accepted: error parsing regexp: invalid or unsupported Perl syntax: \`(?=\` ${linear}`,
      '21:67 error invalid-glob: glob "**/*.{ts" does not compile (Unterminated group); it would match nothing',
      '26:67 error invalid-glob: glob "" does not compile (empty); it would match nothing',
    ]);
  });

  it("a rule id a built-in rule already uses, pointing at the first definition", () => {
    const file = join(BUILTIN_RULES_DIR, "supersede.yaml");
    const line = readFileSync(file, "utf8").split("\n").indexOf("  identical-call:") + 1;
    expect(line).toBeGreaterThan(0);
    expect(rows([broken("duplicate.yaml")])).toEqual([`3:3 error duplicate-rule: rule "identical-call" is already defined at ${file}:${line}:3`]);
  });

  it("facts not available in the rule's phase, actions in the wrong phase, a missing key, the manual phase, the ignored commit flag", () => {
    expect(rows([broken("phases.yaml")])).toEqual([
      '6:19 error fact-phase: fact "superseded" has no value in phase "protect" (available from "age")',
      '15:19 error fact-phase: fact "ageTurns" changes over time; supersede rules may only read facts that do not (groups are built once per part)',
      '21:21 error action-phase: phase "protect" takes the protect action, not "clear" (a protect-phase rule protects the parts it matches)',
      '23:12 error action-phase: the supersede action runs in phase "supersede"',
      '28:12 error action-phase: the protect action runs in phase "protect"',
      '32:3 error missing-key: a supersede rule needs a "key" (what makes two parts the same thing)',
      `38:12 warning manual-phase: phase "manual" holds the model's own context_prune requests; rules in it never run`,
      `45:5 warning deprecated-commit: "commit" is ignored: a change to the already-sent prefix applies where the cache breaks anyway (dropped reasoning, an expired cache) or when the preset's batch repays the re-cache (docs/rules.md, "Commit"); remove it`,
    ]);
  });

  it("supersede keys that cannot be computed (an optional placeholder is fine)", () => {
    const never = "so no part gets a key and the rule never applies";
    expect(rows([broken("keys.yaml")])).toEqual([
      '6:10 error invalid-key: key "{tools}": unknown fact "tools"',
      '12:10 error invalid-key: key "bash:{input.command|trim}": unknown filter "trim" (known: path, squash, head, lower, json)',
      '18:10 error invalid-key: key "{tool}:{ageTurns}": fact "ageTurns" changes over time; keys must use static facts',
      `24:10 warning key-undefined: key placeholder "{tool.name}" never has a value (fact "tool" is a string, not an object), ${never}`,
      `30:10 warning key-undefined: key placeholder "{input|path}" never has a value (filter "path" takes a string and fact "input" is an object), ${never}`,
      `36:10 warning key-undefined: key placeholder "{fileName}" never has a value ("fileName" is set only on file parts and this rule matches tool parts), ${never}`,
      '48:5 warning unused-key: "key" is used only by supersede rules; it has no effect in phase "age"',
    ]);
  });

  it("then.by is checked like when: schema, facts, facts that change over time", () => {
    expect(rows([broken("by.yaml")])).toEqual([
      '12:13 error schema/required: condition is missing required property "operator"',
      '12:27 error schema/additionalProperties: unknown property "operater" in condition (did you mean "operator"?)',
      '20:19 error unknown-fact: unknown fact "tools" (did you mean "tool"?)',
      '28:19 error fact-phase: fact "ageCalls" changes over time; supersede rules may only read facts that do not (groups are built once per part)',
    ]);
  });

  it("tests that are always false, values that never occur, undeclared params, actions that cannot apply", () => {
    expect(rows([broken("conditions.yaml")])).toEqual([
      '7:35 warning dead-condition: operator "contains" needs an array fact, but "text" is a string: this test is always false',
      '12:35 warning dead-condition: operator "greaterThan" compares numbers, but "tool" is a string: this test is always false',
      '17:42 warning dead-condition: operator "regex" needs a string fact, but "outputChars" is a number: this test is always true',
      '22:46 warning dead-condition: operator "in" needs a list value: this test is always false',
      '27:53 warning dead-condition: "ageTurns" is a number, so it never equals the string "3": this test is always false',
      '32:31 warning dead-condition: fact "tool" is a string, so path "$.name" reads nothing: this test is always false',
      '39:51 warning unknown-value: partType "tools" never occurs (did you mean "tool"?)',
      '40:51 warning unknown-value: status "complete" never occurs (did you mean "completed"?)',
      `46:81 warning unknown-param: param "turn" is not declared in this rule's params (did you mean "turns"?), so it is always undefined`,
      '52:81 error invalid-path: unsupported path "turns" (use $.a.b or $.a[0])',
      '58:21 warning action-target: action "mask" changes only file parts, but this rule matches only tool parts: it never applies',
      '62:32 error invalid-path: unsupported path "$.a[?(@.b)]" (use $.a.b or $.a[0])',
    ]);
  });

  it("rules targeting user text or the current turn's reasoning, which the engine never changes", () => {
    expect(rows([broken("untouchable.yaml")])).toEqual([
      '9:49 warning untouchable: the engine never changes text the user typed (only collapse-code-blocks may), so "truncate" will not apply to user text',
      '18:53 warning untouchable: the engine never changes reasoning of the current turn, so "drop" applies only to earlier turns (add { fact: ageTurns, operator: greaterThanInclusive, value: 1 })',
    ]);
  });

  it("a rule pruning reasoning the host drops itself (no hostDrops: false)", () => {
    expect(rows([broken("host-drops.yaml")])).toEqual([
      `9:53 warning host-drops: reasoning the host drops itself once its turn is over (signed: Anthropic's thinking, OpenAI's and Google's reasoning) is not sent to the provider then, so "drop" saves nothing on it (add { fact: hostDrops, operator: equal, value: false } for the reasoning the provider gets back and bills)`,
    ]);
  });

  it("the built-in rules and presets are clean", () => {
    expect(rows([BUILTIN_RULES_DIR, packagePath("presets", "compact.yaml"), packagePath("presets", "balanced.yaml"), packagePath("presets", "verbose.yaml")])).toEqual([]);
  });
});

describe("lint: presets and acp.jsonc", () => {
  it("unknown rule, unknown override, bad option values, an override of by, and every built-in rule it omits", () => {
    const file = broken("preset-mistakes.yaml");
    const named = ["old-error-first-line", "large-output-head-tail", "read-stale-after-write", "purge-error-inputs"];
    const omitted = loadRuleFiles([BUILTIN_RULES_DIR]).rules.map((r) => r.id).filter((id) => !named.includes(id));
    expect(omitted).toContain("identical-call");
    expect(rows([file])).toEqual([
      ...omitted.map((id) => `5:1 warning preset-incomplete: preset "${file}" does not list rule "${id}" (list every rule as on, off or {with: …})`),
      '6:3 error unknown-rule: unknown rule "identical-cal" (did you mean "identical-call"?)',
      '7:35 error unknown-override: rule "old-error-first-line" has no param or option "turn" (did you mean "turns"?)',
      '8:43 error invalid-option: action "truncate" option mode must be one of "first-line", "head-tail"',
      "8:62 error invalid-option: action \"truncate\" option headLines must be >= 0",
      '9:37 error invalid-override: "by" cannot be overridden; edit the rule file instead',
    ]);
  });

  it("acp.jsonc: unknown rule, unknown override, bad option value, missing rule file (relative to the config)", () => {
    expect(rows([broken("config.jsonc")])).toEqual([
      '5:5 error unknown-rule: unknown rule "state-qury" (did you mean "state-query"?)',
      '6:41 error unknown-override: rule "old-error-first-line" has no param or option "turn" (did you mean "turns"?)',
      '7:56 error invalid-option: action "truncate" option tailLines must be integer',
      `9:17 error missing-rule-file: rule file "./no-such-rules.yaml" not found (looked for ${broken("no-such-rules.yaml")})`,
    ]);
  });

  it("acp.jsonc: an option value of the wrong type, an option typo, a param of another type than its default", () => {
    expect(rows([broken("config-overrides.jsonc")])).toEqual([
      '5:56 error invalid-option: action "truncate" option headLines must be integer',
      '5:66 error unknown-override: rule "large-output-head-tail" has no param or option "mdoe" (did you mean "mode"?)',
      '6:50 error invalid-param: rule "old-error-first-line" param turns must be a number, not a string',
    ]);
  });

  it("acp.jsonc: an unknown preset name, a preset file that does not exist", () => {
    expect(rows([broken("config-preset.jsonc")])).toEqual([
      '2:13 error unknown-preset: unknown preset "balance" (did you mean "balanced"?) (known: compact, balanced, verbose, or a path to a preset file)',
    ]);
    expect(rows([broken("config-preset-file.jsonc")])).toEqual([
      `2:13 error unknown-preset: preset file "./presets/no-such-preset.yaml" not found (looked for ${join(dirname(broken("config-preset-file.jsonc")), "presets", "no-such-preset.yaml")})`,
    ]);
  });
});

describe("lint: rule files a config brings in, and the default targets", () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), "acp-lint-"));
    dirs.push(d);
    return d;
  };
  const write = (file: string, text: string) => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  const myRule = (id: string, fact = "tool") =>
    `rules:\n  ${id}:\n    phase: age\n    description: mine\n    when: { fact: ${fact}, operator: equal, value: bash }\n    then: { action: clear }\n`;
  afterEach(() => {
    vi.unstubAllEnvs();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("the same rule id in two files: the second is reported, pointing at the first", () => {
    const d = tmp();
    write(join(d, "a.yaml"), myRule("my-rule"));
    write(join(d, "b.yaml"), `# again\n${myRule("my-rule")}`);
    expect(lint([d]).map((p) => `${p.file}:${p.line}:${p.col} ${p.ruleId}: ${p.message}`)).toEqual([
      `${join(d, "b.yaml")}:3:3 duplicate-rule: rule "my-rule" is already defined at ${join(d, "a.yaml")}:2:3`,
    ]);
  });

  it("ruleFiles are read relative to the config; their rules are known ids and their problems are reported", () => {
    const d = tmp();
    write(join(d, "conf", "acp.jsonc"), `{\n  "ruleFiles": ["../mine.yaml"],\n  "rules": { "my-rule": "off" }\n}\n`);
    write(join(d, "mine.yaml"), `${myRule("my-rule")}${myRule("other-rule", "tol").replace("rules:\n", "")}`);
    expect(lint([join(d, "conf", "acp.jsonc")]).map((p) => `${p.file}:${p.line}:${p.col} ${p.message}`)).toEqual([`${join(d, "mine.yaml")}:10:19 unknown fact "tol" (did you mean "tool"?)`]);
  });

  it("default targets: built-in rules and presets, then each config location's rule folder and acp.jsonc", () => {
    const xdg = tmp();
    const project = tmp();
    vi.stubEnv("XDG_CONFIG_HOME", xdg);
    vi.stubEnv("OPENCODE_CONFIG_DIR", "");
    write(join(xdg, "opencode", "acp.jsonc"), `{ "preset": "compact" }\n`);
    write(join(project, ".opencode", "acp", "rules", "mine.yaml"), myRule("my-rule"));
    write(join(project, ".opencode", "acp.jsonc"), `{\n  "rules": { "my-rule": "off", "stat-query": "off" }\n}\n`);
    expect(defaultTargets(project)).toEqual([
      BUILTIN_RULES_DIR,
      packagePath("presets", "compact.yaml"),
      packagePath("presets", "balanced.yaml"),
      packagePath("presets", "verbose.yaml"),
      join(xdg, "opencode", "acp.jsonc"),
      join(project, ".opencode", "acp", "rules"),
      join(project, ".opencode", "acp.jsonc"),
    ]);
    // A user rule is known to the config, and presets need not list it (user rules are on by default).
    expect(rows(defaultTargets(project))).toEqual(['2:32 error unknown-rule: unknown rule "stat-query" (did you mean "state-query"?)']);
  });

  it("`acp rules lint` without paths lints the default targets of the working folder", async () => {
    const project = tmp();
    vi.stubEnv("XDG_CONFIG_HOME", tmp());
    vi.stubEnv("OPENCODE_CONFIG_DIR", "");
    write(join(project, ".opencode", "acp.jsonc"), `{ "preset": "balance" }\n`);
    const cwd = process.cwd();
    process.chdir(project);
    try {
      const r = await run("rules", "lint", "--format", "json");
      expect(r.code).toBe(1);
      expect(JSON.parse(r.out).map((f: { filePath: string }) => f.filePath)).toEqual([join(project, ".opencode", "acp.jsonc")]);
    } finally {
      process.chdir(cwd);
    }
  });

  it("a folder contributes its rule files, not the rule-test sessions beside them", () => {
    expect(rows([join(dirname(broken("x")), "..", "..", "rules", "fixtures")])).toEqual([]);
    const files = new Set(lint([dirname(broken("x"))]).map((p) => p.file));
    expect(files.has(broken("schema.yaml"))).toBe(true);
    expect([...files].filter((f) => f.endsWith(".session.yaml"))).toEqual([]);
  });
});

describe("acp rules lint: output and exit codes", () => {
  it("stylish: the file, an aligned table (line right, column left), the summary; exit 1 on errors", async () => {
    const file = broken("unknown-names.yaml");
    const r = await run("rules", "lint", file);
    expect(r.code).toBe(1);
    expect(r.err).toBe("");
    expect(r.out).toBe(
      [
        file,
        '   6:19  error  unknown fact "tol" (did you mean "tool"?)                               unknown-fact',
        '  13:35  error  unknown operator "equals" (did you mean "equal"?)                       unknown-operator',
        '  14:35  error  unknown operator "not:equals" (did you mean "not:equal"?)               unknown-operator',
        '  20:21  error  unknown action "cleer" (did you mean "clear"?)                          unknown-action',
        '  25:31  error  action "truncate" has no option "headLine" (did you mean "headLines"?)  unknown-option',
        '  30:37  error  action "truncate" option mode must be one of "first-line", "head-tail"  invalid-option',
        "",
        "✖ 6 problems (6 errors, 0 warnings)",
        "",
      ].join("\n"),
    );
  });

  it("stylish: files in the order given, warnings and errors, singular counts", async () => {
    const r = await run("rules", "lint", broken("untouchable.yaml"), broken("config-syntax.jsonc"));
    expect(r.out.split("\n").filter((l) => !l.startsWith(" "))).toEqual([
      broken("untouchable.yaml"),
      "",
      broken("config-syntax.jsonc"),
      "",
      "✖ 3 problems (1 error, 2 warnings)",
      "",
    ]);
    expect((await run("rules", "lint", broken("yaml-syntax.yaml"))).out.endsWith("✖ 1 problem (1 error, 0 warnings)\n")).toBe(true);
  });

  it("--format json: ESLint's result format, one entry per file with problems", async () => {
    const r = await run("rules", "lint", "--format", "json", broken("config-preset.jsonc"), broken("untouchable.yaml"));
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toEqual([
      {
        filePath: broken("config-preset.jsonc"),
        messages: [{ ruleId: "unknown-preset", severity: 2, message: 'unknown preset "balance" (did you mean "balanced"?) (known: compact, balanced, verbose, or a path to a preset file)', line: 2, column: 13, pointer: "/preset" }],
        errorCount: 1,
        warningCount: 0,
        fixableErrorCount: 0,
        fixableWarningCount: 0,
      },
      {
        filePath: broken("untouchable.yaml"),
        messages: [
          expect.objectContaining({ ruleId: "untouchable", severity: 1, line: 9, column: 49, pointer: "/rules/truncate-user-text/when/all/0/value" }),
          expect.objectContaining({ ruleId: "untouchable", severity: 1, line: 18, column: 53, pointer: "/rules/drop-all-reasoning/when/all/0/value" }),
        ],
        errorCount: 0,
        warningCount: 2,
        fixableErrorCount: 0,
        fixableWarningCount: 0,
      },
    ]);
  });

  it("exit 0 and no output when clean; `[]` in JSON", async () => {
    expect(await run("rules", "lint", BUILTIN_RULES_DIR)).toEqual({ code: 0, out: "", err: "" });
    expect(await run("rules", "lint", "--format", "json", BUILTIN_RULES_DIR)).toEqual({ code: 0, out: "[]\n", err: "" });
  });

  it("warnings alone exit 0; --max-warnings fails when there are more warnings than allowed", async () => {
    const file = broken("untouchable.yaml"); // 2 warnings
    expect((await run("rules", "lint", file)).code).toBe(0);
    expect((await run("rules", "lint", "--max-warnings", "2", file)).code).toBe(0);
    expect((await run("rules", "lint", "--max-warnings", "1", file)).code).toBe(1);
    expect((await run("rules", "lint", "--max-warnings", "0", file)).code).toBe(1);
  });

  it("usage errors exit 2 with a message", async () => {
    expect(await run("rules", "lint", "--format", "xml", BUILTIN_RULES_DIR)).toEqual({ code: 2, out: "", err: 'error: unknown format "xml" (stylish | json)\n' });
    expect(await run("rules", "lint", "--frob")).toEqual({ code: 2, out: "", err: "error: unknown option '--frob'\n" });
  });
});
