import { describe, expect, it } from "vitest";
import { BUILTIN_RULES_DIR, loadRuleFiles } from "../../src/rules/load.js";
import { loadPreset, PRESET_NAMES } from "../../src/rules/presets.js";
import { lint } from "../../src/cli/lint.js";

describe("presets", () => {
  const { rules, problems } = loadRuleFiles([BUILTIN_RULES_DIR]);

  it("built-in rules load without problems", () => {
    expect(problems).toEqual([]);
    expect(rules.length).toBeGreaterThan(20);
  });

  for (const name of PRESET_NAMES)
    it(`${name} lists every built-in rule and nothing else`, () => {
      const { preset, problems: pp } = loadPreset(name);
      expect(pp).toEqual([]);
      expect(Object.keys(preset!.rules).sort()).toEqual(rules.map((r) => r.id).sort());
    });

  it("lint reports a preset that omits a rule or names an unknown one, at the key", () => {
    const problems = lint(["tests/rules/broken/incomplete-preset.yaml"]);
    expect(problems.map((p) => `${p.line}:${p.col} ${p.ruleId} ${p.message}`)).toEqual(
      expect.arrayContaining([
        '4:3 unknown-rule unknown rule "identical-cal" (did you mean "identical-call"?)',
        expect.stringMatching(/^3:1 preset-incomplete preset ".*incomplete-preset.yaml" does not list rule "identical-call"/),
      ]),
    );
  });
});
