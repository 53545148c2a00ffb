#!/usr/bin/env node
// The `acp` command. Each subcommand is a small module; this file only wires them to commander
// and maps outcomes to exit codes (0 ok, 1 problems found, 2 usage or input errors).
import { Command, CommanderError } from "commander";
import { stylish, jsonFormat } from "./format.js";
import { defaultTargets, lint } from "./lint.js";
import { catalog, listPresets, listRules } from "./list.js";
import { registerSimulate } from "./simulate.js";
import { registerExplain } from "./explain.js";
import { runRulesTest } from "./rules-test.js";
import type { Io } from "./io.js";

export type { Io } from "./io.js";

/**
 * A reader that goes away (`acp explain … | head -1`) closes the pipe: the rest of that stream's
 * output is dropped quietly and the command ends with its own exit code, instead of Node's
 * unhandled 'error' event (EPIPE) and its stack trace.
 */
const closed = { out: false, err: false };
let guarded = false;
function quietBrokenPipes(): void {
  if (guarded) return;
  guarded = true;
  const guard = (stream: NodeJS.WriteStream, which: keyof typeof closed) =>
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code !== "EPIPE") throw e;
      closed[which] = true;
    });
  guard(process.stdout, "out");
  guard(process.stderr, "err");
}

const stdio: Io = { out: (s) => void (closed.out || process.stdout.write(s)), err: (s) => void (closed.err || process.stderr.write(s)) };

export async function main(argv: string[], io: Io = stdio): Promise<number> {
  if (io === stdio) quietBrokenPipes();
  let code = 0;
  const program = new Command("acp")
    .description("opencode-acp: agentic context pruning for OpenCode")
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });

  const rules = program.command("rules").description("check, list and test pruning rules");
  rules
    .command("lint [paths...]")
    .description("lint rule files, presets and acp.jsonc (default: built-in and configured locations)")
    .option("--format <format>", "stylish | json", "stylish")
    .option("--max-warnings <n>", "fail when there are more warnings than this", (v) => {
      if (!/^\d+$/.test(v)) throw new CommanderError(2, "acp.usage", `--max-warnings takes a whole number, not "${v}"`);
      return Number.parseInt(v, 10);
    })
    .action((paths: string[], opts: { format: string; maxWarnings?: number }) => {
      if (!["stylish", "json"].includes(opts.format)) throw new CommanderError(2, "acp.usage", `unknown format "${opts.format}" (stylish | json)`);
      const problems = lint(paths.length ? paths : defaultTargets(process.cwd()));
      const text = opts.format === "json" ? jsonFormat(problems) : stylish(problems);
      if (text) io.out(`${text}\n`);
      const errors = problems.filter((p) => p.severity === "error").length;
      const warnings = problems.length - errors;
      const tooMany = opts.maxWarnings !== undefined && warnings > opts.maxWarnings;
      if (tooMany && errors === 0) io.err(`acp rules lint found too many warnings (maximum: ${opts.maxWarnings})\n`);
      // Nothing could be read at all: that is a usage problem, not a finding.
      const onlyUnreadable = errors > 0 && problems.every((p) => p.ruleId === "unreadable");
      code = onlyUnreadable ? 2 : errors > 0 || tooMany ? 1 : 0;
    });
  rules
    .command("list")
    .description("list the rules the plugin would run here (built-in, ~/.config/opencode/acp/rules/, $OPENCODE_CONFIG_DIR/acp/rules/, .opencode/acp/rules/, ruleFiles) with phase, action, presets, on/off and description")
    .option("--rules <paths...>", "extra rule files or folders")
    .action((opts: { rules?: string[] }) => {
      const r = listRules(process.cwd(), opts.rules);
      io.out(`${r.text}\n`);
      if (r.problems) io.err(`acp: ${r.problems} configuration problem${r.problems === 1 ? "" : "s"}; \`npx acp rules lint\` shows them\n`);
    });
  rules
    .command("test [paths...]")
    .description("run annotated rule fixtures (ruleid: / ok: comments), Semgrep style")
    .option("--json", "print the results as JSON")
    .action((paths: string[], opts: { json?: boolean }) => {
      const r = runRulesTest(paths, { json: opts.json });
      io.out(`${r.output}\n`);
      code = r.exitCode;
    });
  rules
    .command("catalog")
    .description("facts, operators, actions and key filters a rule may use")
    .action(() => io.out(`${catalog()}\n`));
  program
    .command("presets")
    .description("show the three presets side by side")
    .action(() => io.out(`${listPresets()}\n`));

  for (const extend of extensions) await extend(program, io, (c) => (code = c));

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return 0;
      if (e.code === "commander.help") return 2; // a command group without its subcommand
      if (e.code !== "commander.executeSubCommandAsync" && e.exitCode !== 0) {
        if (e.code === "acp.usage") io.err(`error: ${e.message}\n`);
        return 2;
      }
      return 0;
    }
    io.err(`error: ${(e as Error).message}\n`);
    return 2;
  }
  return code;
}

/** Subcommands living in their own modules register here. */
const extensions: ((program: Command, io: Io, setCode: (c: number) => void) => void | Promise<void>)[] = [registerSimulate, registerExplain];
