import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { lint } from "../../src/cli/lint.js";
import { createPruner, loadConfig } from "../../src/index.js";
import type { Problem } from "../../src/rules/problems.js";

const broken = (f: string) => join(dirname(fileURLToPath(import.meta.url)), "..", "cli", "broken", f);
const located = (ps: Problem[]) => ps.map((p) => `${p.file}:${p.line}:${p.col} ${p.severity} ${p.ruleId}: ${p.message}`);

/** What the plugin's start-up loads (src/host/plugin.ts) for a project acp.jsonc with `text`. */
function plugin(text: string) {
  const d = dirs();
  const file = join(d.project, ".opencode", "acp.jsonc");
  writeFileSync(file, text);
  const c = loadConfig({ projectDir: d.project, xdgConfigHome: d.xdg }, d.env);
  const pruner = createPruner({ config: c.config, layers: c.layers, ruleDirs: c.ruleDirs });
  return { file, pruner, problems: [...c.problems, ...pruner.problems] };
}

function dirs() {
  const root = mkdtempSync(join(tmpdir(), "acp-cfg-"));
  const xdg = join(root, "xdg");
  const project = join(root, "project");
  mkdirSync(join(xdg, "opencode"), { recursive: true });
  mkdirSync(join(project, ".opencode"), { recursive: true });
  return { xdg, project, env: {} as NodeJS.ProcessEnv };
}

describe("acp.jsonc layering", () => {
  it("project overrides global; protection lists add up; comments and trailing commas are fine", () => {
    const d = dirs();
    writeFileSync(join(d.xdg, "opencode", "acp.jsonc"), '// global\n{ "preset": "compact", "protectedTools": ["mytool"], }');
    writeFileSync(join(d.project, ".opencode", "acp.jsonc"), '{ "preset": "verbose", "rules": { "state-query": "off" } }');
    const c = loadConfig({ projectDir: d.project, xdgConfigHome: d.xdg }, d.env);
    expect(c.problems).toEqual([]);
    expect(c.config.preset).toBe("verbose");
    expect(c.config.protectedTools).toContain("mytool");
    expect(c.config.protectedTools).toContain("todowrite");
    const p = createPruner({ config: c.config, layers: c.layers });
    expect(p.resolved.rules.map((r) => r.id)).not.toContain("state-query");
    expect(p.resolved.presetName).toBe("verbose");
  });

  it("schema problems of one file are listed in the file's order", () => {
    const p = plugin('{\n  "commit": { "minTokens": "lots" },\n  "protectedFiles": "**/x"\n}\n');
    expect(located(p.problems)).toEqual([
      `${p.file}:2:28 error schema/type: /commit/minTokens must be integer`,
      `${p.file}:3:21 error schema/type: /protectedFiles must be array`,
    ]);
  });

  it("a leading UTF-8 byte order mark (Windows editors) is not a syntax error", () => {
    const p = plugin('\uFEFF{ "preset": "compact",\n  "rules": { "state-query": "off" } }');
    expect(located(p.problems)).toEqual([]);
    expect(p.pruner.resolved.presetName).toBe("compact");
    // locations are those of the text without the mark
    const bad = plugin('\uFEFF{ "preset": "compact", "rules": { "state-qery": "off" } }');
    expect(located(bad.problems)[0]).toMatch(new RegExp(`^${bad.file}:1:35 error `));
  });

  it("the preset decides whether context_prune is offered unless a layer sets `tool` (verbose: off)", () => {
    const d = dirs();
    const file = join(d.project, ".opencode", "acp.jsonc");
    const load = (text: string) => {
      writeFileSync(file, text);
      return loadConfig({ projectDir: d.project, xdgConfigHome: d.xdg }, d.env).config.tool;
    };
    expect(load('{ "preset": "verbose" }')).toBe(false);
    expect(load('{ "preset": "balanced" }')).toBe(true);
    expect(load('{ "preset": "compact" }')).toBe(true);
    expect(load('{ "preset": "verbose", "tool": true }')).toBe(true);
    expect(load('{ "preset": "balanced", "tool": false }')).toBe(false);
    writeFileSync(join(d.xdg, "opencode", "acp.jsonc"), '{ "tool": true }'); // any layer counts
    expect(load('{ "preset": "verbose" }')).toBe(true);
  });

  it("a broken layer is reported with file:line:col and skipped; defaults still apply", () => {
    const d = dirs();
    const file = join(d.project, ".opencode", "acp.jsonc");
    writeFileSync(file, '{\n  "preset": "balanced",\n  "protectedTool": ["x"]\n}');
    const c = loadConfig({ projectDir: d.project, xdgConfigHome: d.xdg }, d.env);
    expect(c.problems.map((p) => `${p.file}:${p.line}:${p.col} ${p.message}`)).toEqual([`${file}:3:3 unknown property "protectedTool" in / (did you mean "protectedTools"?)`]);
    expect(c.config.preset).toBe("balanced");
    writeFileSync(file, '{ "preset": "balanced", ');
    const broken = loadConfig({ projectDir: d.project, xdgConfigHome: d.xdg }, d.env);
    expect(broken.problems[0].ruleId).toBe("jsonc-syntax");
    expect(createPruner({ config: broken.config }).resolved.rules.length).toBeGreaterThan(10);
  });

  it("an unknown rule id in the config is an error located at the key, with a did-you-mean", () => {
    const d = dirs();
    const file = join(d.project, ".opencode", "acp.jsonc");
    writeFileSync(file, '{\n  "rules": {\n    "state-qury": "off"\n  }\n}');
    const c = loadConfig({ projectDir: d.project, xdgConfigHome: d.xdg }, d.env);
    const p = createPruner({ config: c.config, layers: c.layers });
    expect(p.problems.map((x) => `${x.line}:${x.col} ${x.message}`)).toEqual(['3:5 unknown rule "state-qury" (did you mean "state-query"?)']);
  });

  it("an unknown preset in acp.jsonc is located at the key, with the config's full path", () => {
    const { file, problems } = plugin('{\n  "preset": "balance"\n}\n');
    expect(located(problems)).toEqual([`${file}:2:13 error unknown-preset: unknown preset "balance" (did you mean "balanced"?) (known: compact, balanced, verbose, or a path to a preset file)`]);
  });

  it("an unknown preset is skipped like any broken setting: the preset of an earlier layer applies, else the built-in default (live audit 25: every built-in rule was off)", () => {
    const balanced = createPruner({});
    const ids = (p: ReturnType<typeof createPruner>) => p.resolved.rules.map((r) => r.id).sort();
    const { pruner, problems } = plugin('{\n  "preset": "balancd"\n}\n');
    expect(problems.map((p) => p.ruleId)).toEqual(["unknown-preset"]);
    expect(pruner.resolved.presetName).toBe("balanced");
    expect(ids(pruner)).toEqual(ids(balanced));
    expect(pruner.resolved.commit).toEqual(balanced.resolved.commit);
    // a global layer chose compact: a typo in the project's preset keeps compact
    const d = dirs();
    writeFileSync(join(d.xdg, "opencode", "acp.jsonc"), '{ "preset": "compact" }');
    writeFileSync(join(d.project, ".opencode", "acp.jsonc"), '{ "preset": "compcat" }');
    const c = loadConfig({ projectDir: d.project, xdgConfigHome: d.xdg }, d.env);
    const layered = createPruner({ config: c.config, layers: c.layers, ruleDirs: c.ruleDirs });
    expect(layered.problems.map((p) => p.message)).toEqual(['unknown preset "compcat" (did you mean "compact"?) (known: compact, balanced, verbose, or a path to a preset file)']);
    expect(layered.resolved.presetName).toBe("compact");
    expect(ids(layered)).toEqual(ids(createPruner({ preset: "compact" })));
    // over verbose (no context_prune by default), the tool stays off as verbose has it
    writeFileSync(join(d.xdg, "opencode", "acp.jsonc"), '{ "preset": "verbose" }');
    expect(loadConfig({ projectDir: d.project, xdgConfigHome: d.xdg }, d.env).config.tool).toBe(false);
  });

  it("a preset path in acp.jsonc is read from the config's folder, as ruleFiles are, whatever the working folder; the CLI's from the working folder", () => {
    const d = dirs();
    const builtin = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "..", "presets", "compact.yaml"), "utf8");
    mkdirSync(join(d.xdg, "opencode", "presets"));
    const mine = join(d.xdg, "opencode", "presets", "mine.yaml");
    writeFileSync(mine, builtin.replace(/^  state-query: on$/m, "  state-query: off"));
    writeFileSync(join(d.xdg, "opencode", "acp.jsonc"), '{ "preset": "presets/mine.yaml" }');
    const c = loadConfig({ projectDir: d.project, xdgConfigHome: d.xdg }, d.env);
    const p = createPruner({ config: c.config, layers: c.layers, ruleDirs: c.ruleDirs });
    expect([...c.problems, ...p.problems]).toEqual([]);
    expect(p.resolved.presetName).toBe(mine); // absolute: the file is watched while the host runs
    expect(p.resolved.rules.some((r) => r.id === "state-query")).toBe(false);
    expect(p.resolved.rules.some((r) => r.id === "old-assistant-text")).toBe(true); // compact's
    // the same path given to the API (or the CLI's --preset) is read from the working folder
    expect(createPruner({ preset: "presets/mine.yaml" }).problems.map((x) => x.message)).toEqual([`preset file "presets/mine.yaml" not found (looked for ${join(process.cwd(), "presets", "mine.yaml")})`]);
  });

  it("an unknown preset is an error naming the known ones", () => {
    const p = createPruner({ preset: "balance" });
    expect(p.problems[0].message).toContain('unknown preset "balance" (did you mean "balanced"?)');
  });
});

describe("overrides in the plugin are validated exactly as lint validates them", () => {
  it("an invalid override is reported with file:line:col and skipped whole; the rule keeps its own values", () => {
    const { file, pruner, problems } = plugin(readFileSync(broken("config-overrides.jsonc"), "utf8"));
    expect(located(problems)).toEqual([
      `${file}:5:56 error invalid-option: action "truncate" option headLines must be integer`,
      `${file}:5:66 error unknown-override: rule "large-output-head-tail" has no param or option "mdoe" (did you mean "mode"?)`,
      `${file}:6:50 error invalid-param: rule "old-error-first-line" param turns must be a number, not a string`,
    ]);
    // as the preset left them (the default preset, balanced, without this config)
    const entry = (p: typeof pruner, id: string) => p.resolved.all.find((e) => e.spec.id === id)!;
    const preset = createPruner();
    for (const id of ["large-output-head-tail", "old-error-first-line"]) expect(entry(pruner, id), id).toEqual(entry(preset, id));
    expect(entry(pruner, "large-output-head-tail").spec.then.headLines).toEqual(expect.any(Number));
  });

  it("a valid override applies", () => {
    const { problems, pruner } = plugin('{ "rules": { "large-output-head-tail": { "with": { "headLines": 20 } }, "old-error-first-line": { "with": { "turns": 6 } } } }');
    expect(problems).toEqual([]);
    expect(pruner.resolved.rules.find((r) => r.id === "large-output-head-tail")!.then.headLines).toBe(20);
    expect(pruner.resolved.rules.find((r) => r.id === "old-error-first-line")!.params.turns).toBe(6);
  });

  it("an override in a preset file is checked the same way", () => {
    const d = dirs();
    const preset = join(d.project, "my-preset.yaml");
    const builtin = readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "..", "presets", "balanced.yaml"), "utf8");
    writeFileSync(preset, builtin.replace(/^  large-output-head-tail: .*$/m, '  large-output-head-tail: { with: { headLines: "twenty", mdoe: first-line } }'));
    const pruner = createPruner({ preset });
    expect(located(pruner.problems.filter((p) => p.file === preset)).map((l) => l.replace(/^.*?:\d+:\d+ /, ""))).toEqual([
      'error invalid-option: action "truncate" option headLines must be integer',
      'error unknown-override: rule "large-output-head-tail" has no param or option "mdoe" (did you mean "mode"?)',
    ]);
    expect(located(lint([preset]).filter((p) => p.severity === "error"))).toEqual(located(pruner.problems));
  });

  for (const fixture of ["config.jsonc", "config-overrides.jsonc", "config-preset.jsonc", "config-preset-file.jsonc"])
    it(`${fixture}: the plugin reports exactly the errors lint reports`, () => {
      const { file, problems } = plugin(readFileSync(broken(fixture), "utf8"));
      expect(problems.length).toBeGreaterThan(0);
      expect(located(problems).sort()).toEqual(located(lint([file]).filter((p) => p.severity === "error")).sort());
    });
});

describe("the shipped defaults", () => {
  it("are presets/defaults.jsonc as it is, plus the settings it does not list (no second copy in code)", async () => {
    const { parse } = await import("jsonc-parser");
    const { defaultConfig } = await import("../../src/rules/config.js");
    const { $schema: _s, ...file } = parse(readFileSync(fileURLToPath(new URL("../../presets/defaults.jsonc", import.meta.url)), "utf8"));
    expect(defaultConfig()).toEqual({ ...file, rules: {}, ruleFiles: [], commit: {} });
  });
});
