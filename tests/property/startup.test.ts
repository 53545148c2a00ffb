// Plugin start-up and `acp rules lint` on generated config and rule files: random bytes, mutated
// rule files and configs, deep nesting, maps of thousands of keys, YAML alias bombs, files over the size cap, folders where
// files should be, FIFOs, links to /dev/zero, dangling links and link loops, in every place the
// plugin reads (global and project acp.jsonc, their acp/rules/ folders, ruleFiles entries).
//
// Start-up never throws and never blocks, and the plugin still prunes; the problems go to the
// user once per session; lint never throws; every problem has a file and a line:col; and every
// error the plugin reports, lint reports too (one validation path; lint checks more, as it goes on
// into layers the plugin skips).
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fc, test } from "@fast-check/vitest";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { defaultTargets, lint } from "../../src/cli/lint.js";
import { createPruner } from "../../src/index.js";
import type { Message } from "../../src/graph/types.js";
import AcpPlugin from "../../src/host/plugin.js";
import { loadConfig } from "../../src/rules/config.js";
import { BUILTIN_RULES_DIR } from "../../src/rules/load.js";
import type { Problem } from "../../src/rules/problems.js";
import { MAX_FILE_BYTES } from "../../src/rules/read.js";
import { assistant, bigText, user } from "../helpers/session.js";
import { fcParams, runsFor, timeoutFor, TMP } from "./invariants.js";

const RUNS = runsFor("garbage") * 4;
const root = mkdtempSync(join(TMP, "acp-prop-startup-"));
const saved = { ...process.env };
let runs = 0;
const seen = { problems: 0, notified: 0, byRule: {} as Record<string, number> };
beforeAll(() => {
  process.env.XDG_DATA_HOME = join(root, "data");
  delete process.env.OPENCODE_CONFIG_DIR;
});
afterAll(() => {
  process.env = saved;
  rmSync(root, { recursive: true, force: true });
  console.log(`start-up: ${runs} generated projects, ${seen.problems} problems, ${seen.notified} notices; by check: ${JSON.stringify(seen.byRule)}`);
});

const BUILTIN_RULE_TEXT = readdirSync(BUILTIN_RULES_DIR).map((f) => readFileSync(join(BUILTIN_RULES_DIR, f), "utf8"));
const RULE_IDS = ["my-rule", "other-rule", "identical-call", "state-query", "state-qury", "large-output-head-tail", "old-error-first-line"];
const NAMES = ["a.yaml", "b.yml", "c.yaml", "x.session.yaml", "notes.txt"];

/** A small rule file of our own, valid or with a typo, to mutate further. */
const ruleText = fc
  .record({ id: fc.constantFrom(...RULE_IDS), phase: fc.constantFrom("age", "reduce", "supersede", "later"), fact: fc.constantFrom("tool", "tol", "ageTurns"), op: fc.constantFrom("equal", "equals", "in", "regex"), action: fc.constantFrom("clear", "truncate", "cleer") })
  .map((r) => `rules:\n  ${r.id}:\n    phase: ${r.phase}\n    description: generated\n    when: { fact: ${r.fact}, operator: ${r.op}, value: bash }\n    then: { action: ${r.action} }\n`);

/** A config: keys of acp.jsonc, mostly of the right type, ruleFiles naming generated entries. */
const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: bad });
const settingArb = mostly<unknown>(
  fc.oneof(fc.constantFrom("on", "off"), fc.record({ with: fc.dictionary(fc.constantFrom("headLines", "mdoe", "mode", "turns", "by"), fc.constantFrom<unknown>(20, "twenty", -1, "first-line", true), { maxKeys: 2 }) })),
  fc.constantFrom("maybe", 1, { with: 2 }),
);
const configArb = fc
  .record(
    {
      preset: mostly<unknown>(fc.constantFrom("balanced", "compact"), fc.constantFrom("balance", "./no-such.yaml", 3)),
      rules: mostly<unknown>(fc.dictionary(fc.constantFrom(...RULE_IDS), settingArb, { maxKeys: 3 }), fc.constant("all")),
      ruleFiles: fc.array(mostly<unknown>(fc.constantFrom("./rules-a.yaml", "./acp/rules", "/dev/zero", "./pipe.yaml", "../nowhere.yaml", "./loop.yaml"), fc.constant(7)), { maxLength: 3 }),
      protectedTools: mostly<unknown>(fc.constant(["x"]), fc.constant("x")),
      commit: mostly<unknown>(fc.constant({ minTokens: 0 }), fc.constant({ minToken: 5 })),
    },
    { requiredKeys: [] },
  )
  .map((c) => JSON.stringify(c, null, 2));

/** Text that breaks a parser: aliases that expand exponentially, nesting deeper than the limit. */
const aliasBomb = fc.record({ levels: fc.integer({ min: 3, max: 12 }), fan: fc.integer({ min: 2, max: 12 }) }).map(({ levels, fan }) => {
  const lines = [`a0: &a0 [${Array(fan).fill("lol").join(", ")}]`];
  for (let i = 1; i <= levels; i++) lines.push(`a${i}: &a${i} [${Array(fan).fill(`*a${i - 1}`).join(", ")}]`);
  return `${lines.join("\n")}\nrules: {}\n`;
});
const deep = fc.record({ depth: fc.integer({ min: 40, max: 20_000 }), kind: fc.constantFrom("[", "{", "- ") }).map(({ depth, kind }) =>
  kind === "- " ? `rules:\n  x:\n    ${"- ".repeat(depth)}x\n` : kind === "[" ? `{"rules": ${"[".repeat(depth)}${"]".repeat(depth)}}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`,
);

const wide = fc.record({ n: fc.integer({ min: 900, max: 3000 }), yaml: fc.boolean() }).map(({ n, yaml }) =>
  yaml ? `rules:\n${Array.from({ length: n }, (_, i) => `  r${i}: {}`).join("\n")}\n` : `{ "protectedTools": [${Array.from({ length: n }, (_, i) => `"t${i}"`).join(",")}] }`,
);

/** Cuts, repeats or replaces a random slice of a text (turns valid files into every kind of broken one). */
const mutated = (base: fc.Arbitrary<string>) =>
  fc.tuple(base, fc.nat(), fc.nat(), fc.constantFrom("cut", "dup", "noise", "none", "none", "none"), fc.string({ maxLength: 8 })).map(([t, a, b, how, noise]) => {
    const [i, j] = [a % (t.length + 1), b % (t.length + 1)].sort((x, y) => x - y);
    if (how === "cut") return t.slice(0, i) + t.slice(j);
    if (how === "dup") return t.slice(0, j) + t.slice(i, j) + t.slice(j);
    if (how === "noise") return t.slice(0, i) + noise + t.slice(i);
    return t;
  });

type Entry = { kind: "text"; text: string } | { kind: "bytes"; bytes: Uint8Array } | { kind: "huge" | "folder" | "fifo" | "zero" | "dangling" | "loop" | "unreadable" };
const textEntry = (t: fc.Arbitrary<string>) => t.map((text): Entry => ({ kind: "text", text }));
const entryArb: fc.Arbitrary<Entry> = fc.oneof(
  { weight: 4, arbitrary: textEntry(mutated(fc.oneof(ruleText, fc.constantFrom(...BUILTIN_RULE_TEXT)))) },
  { weight: 2, arbitrary: textEntry(mutated(configArb)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 3000 }).map((bytes): Entry => ({ kind: "bytes", bytes })) },
  { weight: 1, arbitrary: textEntry(aliasBomb) },
  { weight: 1, arbitrary: textEntry(deep) },
  { weight: 1, arbitrary: textEntry(wide) },
  { weight: 2, arbitrary: fc.constantFrom<Entry>({ kind: "huge" }, { kind: "folder" }, { kind: "fifo" }, { kind: "zero" }, { kind: "dangling" }, { kind: "loop" }, { kind: "unreadable" }) },
);

/** One config location: acp.jsonc (maybe absent, maybe anything), its acp/rules/ entries, files its ruleFiles may name. */
const locationArb: fc.Arbitrary<Location> = fc.record({
  config: fc.option(fc.oneof({ weight: 3, arbitrary: textEntry(mutated(configArb)) }, { weight: 1, arbitrary: entryArb }), { nil: undefined }),
  rules: fc.dictionary(fc.constantFrom(...NAMES), entryArb, { maxKeys: 3 }),
  named: fc.record({ "rules-a.yaml": entryArb, "pipe.yaml": fc.constant<Entry>({ kind: "fifo" }), "loop.yaml": fc.constant<Entry>({ kind: "loop" }) }, { requiredKeys: [] }),
});

function write(path: string, e: Entry) {
  if (e.kind === "text") writeFileSync(path, e.text);
  else if (e.kind === "bytes") writeFileSync(path, e.bytes);
  else if (e.kind === "huge") writeFileSync(path, `# ${"x".repeat(MAX_FILE_BYTES)}\nrules: {}\n`);
  else if (e.kind === "folder") mkdirSync(join(path, "inner.yaml"), { recursive: true });
  else if (e.kind === "fifo") execFileSync("mkfifo", [path]);
  else if (e.kind === "zero") symlinkSync("/dev/zero", path);
  else if (e.kind === "dangling") symlinkSync(join(path, "..", "gone"), path);
  else if (e.kind === "loop") symlinkSync(path, path);
  else {
    writeFileSync(path, "rules: {}\n");
    chmodSync(path, 0); // still readable by root, as CI runs
  }
}

interface Location {
  config?: Entry;
  rules: Record<string, Entry>;
  named: Partial<Record<string, Entry>>;
}

function lay(dir: string, loc: Location) {
  mkdirSync(join(dir, "acp", "rules"), { recursive: true });
  if (loc.config) write(join(dir, "acp.jsonc"), loc.config);
  for (const [name, e] of Object.entries(loc.rules)) write(join(dir, "acp", "rules", name), e);
  for (const [name, e] of Object.entries(loc.named)) if (e) write(join(dir, name), e);
}

const key = (p: Problem) => `${p.file}:${p.line}:${p.col} ${p.ruleId}: ${p.ruleId === "duplicate-rule" ? "" : p.message}`;

function stubClient() {
  const prompts: string[] = [];
  const client = {
    session: {
      prompt: async (req: any) => void prompts.push(String(req?.body?.parts?.[0]?.text)),
      get: async ({ path }: any) => ({ data: { id: path.id } }),
      messages: async () => ({ data: [] }),
    },
  };
  return { prompts, client };
}

describe("start-up on generated config and rule files", () => {
  test.prop([locationArb, locationArb], fcParams(RUNS))(
    "the plugin starts, prunes and tells the user once; lint reports every error the plugin reports",
    async (global, project) => {
      const run = join(root, `r${++runs}`);
      const xdg = join(run, "xdg");
      const projectDir = join(run, "project");
      lay(join(xdg, "opencode"), global);
      lay(join(projectDir, ".opencode"), project);
      process.env.XDG_CONFIG_HOME = xdg;
      try {
        // Start-up as the host calls it: never throws, never blocks.
        const { prompts, client } = stubClient();
        const started = Date.now();
        const hooks = (await AcpPlugin({ client, worktree: projectDir, directory: projectDir } as any)) as any;
        expect(Date.now() - started).toBeLessThan(20_000);
        expect(typeof hooks["experimental.chat.messages.transform"]).toBe("function");

        // What the plugin reported, through the code it calls (it exposes only hooks).
        const loaded = loadConfig({ projectDir });
        const pruner = createPruner({ config: loaded.config, layers: loaded.layers, ruleDirs: loaded.ruleDirs });
        const errors = [...loaded.problems, ...pruner.problems].filter((p) => p.severity === "error");
        seen.problems += errors.length;
        for (const p of errors) seen.byRule[p.ruleId] = (seen.byRule[p.ruleId] ?? 0) + 1;

        // It still works: a session goes through, and the problems are told once per session.
        const sid = `ses_${runs}`;
        const messages: Message[] = [user("go"), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls", 50) }]), user("again")].map((m) => ({ ...m, info: { ...m.info, sessionID: sid }, parts: m.parts.map((p) => ({ ...p, sessionID: sid })) }));
        await hooks["experimental.chat.messages.transform"]({}, { messages });
        expect(messages.length).toBeGreaterThanOrEqual(3);
        for (let i = 0; i < 2; i++) await hooks.event({ event: { type: "session.idle", properties: { sessionID: sid } } });
        const notices = prompts.filter((t) => t.startsWith("acp: configuration problems"));
        expect(notices).toHaveLength(errors.length ? 1 : 0);
        seen.notified += notices.length;
        if (errors.length) expect(notices[0]).toContain(`${errors[0].file}:${errors[0].line}:${errors[0].col}`);

        // Lint: never throws; every problem located; the plugin's errors are among lint's.
        const linted = lint(defaultTargets(projectDir));
        for (const p of linted) {
          expect(typeof p.file).toBe("string");
          expect(p.line).toBeGreaterThanOrEqual(1);
          expect(p.col).toBeGreaterThanOrEqual(1);
        }
        const lintKeys = new Set(linted.filter((p) => p.severity === "error").map(key));
        expect(errors.map(key).filter((k) => !lintKeys.has(k))).toEqual([]);
      } finally {
        rmSync(run, { recursive: true, force: true });
      }
    },
    timeoutFor(RUNS, 3000),
  );
});
