// Hostile or broken files in the places the plugin reads (a cloned repository can ship them):
// YAML aliases that expand exponentially, nesting deep enough to exhaust a recursive parser, a
// file far too large, /dev/zero and a FIFO named in ruleFiles, a folder where a file should be.
// Loading never throws and never blocks; each becomes a problem at its file:line:col, and the
// rest of the configuration applies. `acp rules lint` reports the same, exit 1 (not 2).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lint } from "../../src/cli/lint.js";
import { main } from "../../src/cli/main.js";
import { createPruner } from "../../src/index.js";
import { loadConfig } from "../../src/rules/config.js";
import { loadRuleFiles, MAX_FOLDER_FILES } from "../../src/rules/load.js";
import { MAX_FILE_BYTES, MAX_TOTAL_BYTES } from "../../src/rules/read.js";
import { MAX_DEPTH, MAX_ENTRIES } from "../../src/rules/source.js";

const root = mkdtempSync(join(tmpdir(), "acp-hostile-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A project with `.opencode/acp/rules/<name>` files and an optional project acp.jsonc. */
function project(rules: Record<string, string>, config?: string) {
  const dir = join(root, `p${++n}`);
  const xdg = join(dir, "xdg");
  mkdirSync(join(xdg, "opencode"), { recursive: true });
  const rulesDir = join(dir, ".opencode", "acp", "rules");
  mkdirSync(rulesDir, { recursive: true });
  for (const [f, text] of Object.entries(rules)) writeFileSync(join(rulesDir, f), text);
  if (config !== undefined) writeFileSync(join(dir, ".opencode", "acp.jsonc"), config);
  return { dir, xdg, rulesDir, config: join(dir, ".opencode", "acp.jsonc") };
}

/** What the plugin's start-up does (src/host/plugin.ts): every problem, and the rules that apply. */
function startUp(p: { dir: string; xdg: string }) {
  const loaded = loadConfig({ projectDir: p.dir, xdgConfigHome: p.xdg }, {});
  const pruner = createPruner({ config: loaded.config, layers: loaded.layers, ruleDirs: loaded.ruleDirs });
  return { problems: [...loaded.problems, ...pruner.problems], rules: pruner.resolved.rules.map((r) => r.id) };
}

const at = (ps: { file: string; line: number; col: number; ruleId: string; message: string }[]) => ps.map((p) => `${p.file}:${p.line}:${p.col} ${p.ruleId}: ${p.message}`);

const MINE = `rules:
  my-rule:
    phase: age
    description: a good rule beside the hostile files
    when: { fact: tool, operator: equal, value: bash }
    then: { action: clear }
`;

/** Nine levels of anchors, each aliased nine times: 9^9 nodes if expanded. */
function aliasBomb(): string {
  const lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
  for (let i = 1; i <= 9; i++) lines.push(`a${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(", ")}]`);
  return `${lines.join("\n")}\nrules: {}\n`;
}

describe("hostile rule files in .opencode/acp/rules/", () => {
  it("YAML aliases that expand exponentially: a problem at the first alias; the good rule beside it loads", () => {
    const p = project({ "bomb.yaml": aliasBomb(), "mine.yaml": MINE });
    const { problems, rules } = startUp(p);
    const bomb = join(p.rulesDir, "bomb.yaml");
    expect(at(problems)).toEqual([`${bomb}:2:10 yaml-syntax: Excessive alias count indicates a resource exhaustion attack (aliases may expand at most 100 nodes); the file is not read`]);
    expect(rules).toContain("my-rule");
    expect(at(lint([p.rulesDir]).filter((x) => x.severity === "error"))).toEqual(at(problems));
  });

  it("nesting deeper than the parsers can take, in YAML (flow and block) and in acp.jsonc: a problem where it gets too deep", () => {
    const depth = 20_000;
    const p = project(
      { "flow.yaml": `rules:\n  x: ${"[".repeat(depth)}${"]".repeat(depth)}\n`, "block.yaml": `rules:\n  x:\n    ${"- ".repeat(depth)}x\n`, "mine.yaml": MINE },
      `{\n  "rules": ${"[".repeat(depth)}${"]".repeat(depth)}\n}`,
    );
    const { problems, rules } = startUp(p);
    const deep = `nested more than ${MAX_DEPTH} levels deep; the file is not read`;
    expect(at(problems)).toEqual([
      `${p.config}:2:${12 + MAX_DEPTH - 1} jsonc-syntax: ${deep}`,
      `${join(p.rulesDir, "block.yaml")}:3:${5 + 2 * (MAX_DEPTH - 2)} yaml-syntax: ${deep}`,
      `${join(p.rulesDir, "flow.yaml")}:2:${6 + MAX_DEPTH - 2} yaml-syntax: ${deep}`,
    ]);
    expect(rules).toContain("my-rule");
  });

  it("an alias that nests deeper than the limit once expanded, though the text does not", () => {
    const nest = (n: number, inner: string) => `${"[".repeat(n)}${inner}${"]".repeat(n)}`;
    const p = project({ "deep-alias.yaml": `deep: &deep ${nest(MAX_DEPTH - 2, "x")}\ndeeper: ${nest(10, "*deep")}\nrules: {}\n` });
    expect(at(startUp(p).problems)).toEqual([
      `${join(p.rulesDir, "deep-alias.yaml")}:2:${9 + 10} yaml-syntax: nested more than ${MAX_DEPTH} levels deep once aliases are expanded; the file is not read`,
    ]);
  });

  it("a file larger than the cap, random bytes, a folder named like a rule file: problems; the rest loads", () => {
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
    const p = project({ "huge.yaml": `# ${"x".repeat(MAX_FILE_BYTES)}\nrules: {}\n`, "noise.yaml": bytes.toString("latin1"), "mine.yaml": MINE });
    mkdirSync(join(p.rulesDir, "folder.yaml"));
    const { problems, rules } = startUp(p);
    const of = (f: string) => problems.filter((x) => x.file === join(p.rulesDir, f));
    expect(at(of("huge.yaml"))).toEqual([`${join(p.rulesDir, "huge.yaml")}:1:1 unreadable: is larger than 256 KiB (${MAX_FILE_BYTES + 13} bytes); it is not read`]);
    expect(at(of("folder.yaml"))).toEqual([`${join(p.rulesDir, "folder.yaml")}:1:1 unreadable: is a folder, not a file`]);
    const noise = of("noise.yaml");
    expect(noise.length).toBeGreaterThan(0);
    expect(noise.length).toBeLessThanOrEqual(11); // at most 10 syntax errors and a count of the rest
    expect(rules).toContain("my-rule");
  });

  it("a map or list with more entries than the cap (yaml checks keys pairwise: 20,000 took a minute), in YAML and JSONC", () => {
    const many = Array.from({ length: MAX_ENTRIES + 5 }, (_, i) => `r${i}`);
    const config = `{ "protectedTools": [${many.map((t) => `"${t}"`).join(",")}] }`;
    const p = project({ "wide.yaml": `rules:\n${many.map((id) => `  ${id}: {}`).join("\n")}\n`, "mine.yaml": MINE }, config);
    const started = Date.now();
    const { problems, rules } = startUp(p);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(at(problems)).toEqual([
      `${p.config}:1:${config.split(",").slice(0, MAX_ENTRIES).join(",").length + 1} jsonc-syntax: more than ${MAX_ENTRIES} entries in one object or array; the file is not read`,
      `${join(p.rulesDir, "wide.yaml")}:${MAX_ENTRIES + 2}:3 yaml-syntax: more than ${MAX_ENTRIES} entries in one map or list; the file is not read`,
    ]);
    expect(rules).toContain("my-rule");
  });

  it("a folder of more rule files than the cap, and rule files past the total budget: reported, not read", () => {
    const files = Object.fromEntries(Array.from({ length: MAX_FOLDER_FILES + 3 }, (_, i) => [`f${String(i).padStart(3, "0")}.yaml`, "rules: {}\n"]));
    const size = 200 * 1024;
    const count = Math.ceil(MAX_TOTAL_BYTES / size) + 1;
    const big = `# ${"x".repeat(size - 13)}\nrules: {}\n`;
    const bigFiles = Array.from({ length: count }, (_, i) => `b${String(i).padStart(2, "0")}.yaml`);
    for (const f of bigFiles) files[f] = big; // sorted before the f*.yaml files
    const p = project(files);
    const { problems } = startUp(p);
    expect(at(problems.filter((x) => x.file === p.rulesDir))).toEqual([`${p.rulesDir}:1:1 unreadable: holds ${MAX_FOLDER_FILES + 3 + count} rule files; only the first ${MAX_FOLDER_FILES} are read`]);
    const past = problems.filter((x) => x.message.startsWith("not read: rule files may total at most 2 MiB")).map((x) => x.file);
    const read = count - past.length;
    expect(past.length).toBeGreaterThan(0);
    expect(past).toEqual(bigFiles.slice(read).map((f) => join(p.rulesDir, f)));
    expect(read * size).toBeLessThanOrEqual(MAX_TOTAL_BYTES);
    expect((read + 1) * size + 20 * 1024).toBeGreaterThan(MAX_TOTAL_BYTES); // the built-in rules take about 24 KB
  });

  it("a rule file that is a link to /dev/zero or a FIFO: not read, no blocking", () => {
    const p = project({ "mine.yaml": MINE });
    symlinkSync("/dev/zero", join(p.rulesDir, "zero.yaml"));
    execFileSync("mkfifo", [join(p.rulesDir, "pipe.yaml")]);
    const { problems, rules } = startUp(p);
    expect(at(problems)).toEqual([
      `${join(p.rulesDir, "pipe.yaml")}:1:1 unreadable: is a FIFO, not a regular file; it is not read`,
      `${join(p.rulesDir, "zero.yaml")}:1:1 unreadable: is a character device, not a regular file; it is not read`,
    ]);
    expect(rules).toContain("my-rule");
  });
});

describe("hostile entries in acp.jsonc ruleFiles", () => {
  it("/dev/zero, a FIFO and a missing file are problems at the entry; the config's other settings apply", () => {
    const p = project({});
    const fifo = join(p.dir, "pipe.yaml");
    execFileSync("mkfifo", [fifo]);
    writeFileSync(join(p.dir, "mine.yaml"), MINE);
    writeFileSync(p.config, `{\n  "ruleFiles": ["/dev/zero", "../pipe.yaml", "../gone.yaml", "../mine.yaml"],\n  "rules": { "state-query": "off" }\n}\n`);
    const { problems, rules } = startUp(p);
    expect(at(problems)).toEqual([
      `${p.config}:2:17 unreadable: rule file "/dev/zero" is a character device, not a file or folder; it is not read`,
      `${p.config}:2:30 unreadable: rule file "../pipe.yaml" is a FIFO, not a file or folder; it is not read`,
      `${p.config}:2:46 missing-rule-file: rule file "../gone.yaml" not found (looked for ${join(p.dir, "gone.yaml")})`,
    ]);
    expect(rules).toContain("my-rule");
    expect(rules).not.toContain("state-query");
    expect(at(lint([p.config]).filter((x) => x.severity === "error"))).toEqual(at(problems));
  });

  it("loadRuleFiles given /dev/zero directly (the API, `acp simulate --rules`): a problem, no read", () => {
    expect(at(loadRuleFiles(["/dev/zero"]).problems)).toEqual(["/dev/zero:1:1 unreadable: is a character device, not a regular file; it is not read"]);
  });
});

describe("acp.jsonc that is not a file", () => {
  it("a folder named acp.jsonc: the plugin and lint report it (lint used to read it as a folder of rule files)", () => {
    const p = project({ "mine.yaml": MINE });
    mkdirSync(p.config);
    writeFileSync(join(p.config, "x.yaml"), "rules: {}\n");
    const { problems, rules } = startUp(p);
    expect(at(problems)).toEqual([`${p.config}:1:1 unreadable: is a folder, not a file`]);
    expect(rules).toContain("my-rule");
    expect(at(lint([p.config]))).toEqual(at(problems));
  });
});

describe("acp rules lint on hostile files", () => {
  it("an alias bomb and /dev/zero: located errors, exit 1 (not a crash with exit 2)", async () => {
    const p = project({ "bomb.yaml": aliasBomb() });
    let out = "";
    let err = "";
    const code = await main(["rules", "lint", p.rulesDir, "/dev/zero"], { out: (s) => void (out += s), err: (s) => void (err += s) });
    expect({ code, err }).toEqual({ code: 1, err: "" });
    expect(out).toContain(join(p.rulesDir, "bomb.yaml"));
    expect(out).toMatch(/bomb\.yaml\n +2:10 +error +Excessive alias count/);
    expect(out).toMatch(/\/dev\/zero\n +1:1 +error +is a character device/);
  });
});
