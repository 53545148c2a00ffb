// Noticing changed configuration: the fingerprint of what a load reads, and the once-per-interval check.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigWatch, fingerprint, watchedPaths } from "../../src/rules/watch.js";

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "acp-watch-"));
  dirs.push(d);
  return d;
};

describe("watched paths and their fingerprint", () => {
  it("covers the config files and rule folders of every layer, ruleFiles and a preset file", () => {
    const root = tmp();
    const paths = watchedPaths({ locations: { projectDir: join(root, "p"), xdgConfigHome: join(root, "cfg") }, ruleFiles: [join(root, "extra.yaml")], preset: join(root, "mine.yaml") });
    expect(paths).toEqual([
      join(root, "cfg", "opencode", "acp.jsonc"),
      join(root, "cfg", "opencode", "acp", "rules"),
      join(root, "p", ".opencode", "acp.jsonc"),
      join(root, "p", ".opencode", "acp", "rules"),
      join(root, "extra.yaml"),
      join(root, "mine.yaml"),
    ]);
    expect(watchedPaths({ locations: { projectDir: root, xdgConfigHome: root }, preset: "balanced" })).not.toContain("balanced");
  });

  it("changes when a rule folder appears, a rule file is added, edited or removed; not otherwise", () => {
    const root = tmp();
    const rules = join(root, ".opencode", "acp", "rules");
    const paths = [join(root, ".opencode", "acp.jsonc"), rules];
    const seen = [fingerprint(paths)];
    expect(fingerprint(paths)).toBe(seen[0]);
    mkdirSync(rules, { recursive: true });
    seen.push(fingerprint(paths));
    writeFileSync(join(rules, "mine.yaml"), "rules: {}\n");
    seen.push(fingerprint(paths));
    writeFileSync(join(rules, "notes.txt"), "not a rule file"); // not read by the loader
    expect(fingerprint(paths)).toBe(seen[2]);
    writeFileSync(join(rules, "mine.yaml"), "rules: {}\n# a comment\n");
    seen.push(fingerprint(paths));
    unlinkSync(join(rules, "mine.yaml"));
    seen.push(fingerprint(paths));
    writeFileSync(join(root, ".opencode", "acp.jsonc"), "{}");
    seen.push(fingerprint(paths));
    for (let i = 1; i < seen.length; i++) expect(seen[i], `step ${i}`).not.toBe(seen[i - 1]);
    expect(seen[4]).toBe(seen[1]); // the folder as it was before the file: the same as then
  });

  it("checks at most once per interval and reports each change once", () => {
    const root = tmp();
    const file = join(root, "acp.jsonc");
    let now = 0;
    const watch = new ConfigWatch([file], 1000, () => now);
    writeFileSync(file, "{}");
    expect(watch.changed()).toBe(false); // within the interval: not even looked at
    now = 1000;
    expect(watch.changed()).toBe(true);
    now = 2500;
    expect(watch.changed()).toBe(false);
  });
});
