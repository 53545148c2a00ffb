import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPruner, loadConfig } from "../../src/index.js";

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

  it("an unknown preset is an error naming the known ones", () => {
    const p = createPruner({ preset: "balance" });
    expect(p.problems[0].message).toContain('unknown preset "balance" (did you mean "balanced"?)');
  });
});
