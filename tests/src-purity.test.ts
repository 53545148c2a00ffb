// The engine knows generic facts and actions; the rules know OpenCode's tools. Tool names may
// appear only in the host adapter (src/host).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadRuleFiles, BUILTIN_RULES_DIR } from "../src/rules/load.js";

// "glob" (an operator) and "batch" (a commit mode) are generic words here, so they are not scanned.
const TOOL_NAMES = ["read", "write", "edit", "bash", "grep", "webfetch", "websearch", "todowrite", "todoread", "task", "skill", "context_prune"];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
}

describe("src/ outside the host adapter", () => {
  it("names no tool and no built-in rule as a string literal", () => {
    const ruleIds = loadRuleFiles([BUILTIN_RULES_DIR]).rules.map((r) => r.id);
    const offenders: string[] = [];
    for (const f of files("src").filter((f) => f.endsWith(".ts") && !f.startsWith(join("src", "host")))) {
      const text = readFileSync(f, "utf8");
      for (const name of [...TOOL_NAMES, ...ruleIds]) if (text.includes(`"${name}"`) || text.includes(`'${name}'`)) offenders.push(`${f}: "${name}"`);
    }
    expect(offenders).toEqual([]);
  });
});
