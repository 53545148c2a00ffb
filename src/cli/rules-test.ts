// `acp rules test [paths...]`: runs Semgrep-style rule fixtures and prints a confusion matrix per
// rule. Pure: returns the exit code and the text instead of printing/exiting, so commander (and
// tests) decide what to do with them. Exit 0 = all expectations hold, 1 = a mismatch, 2 = a
// fixture could not be read or understood.
import { existsSync } from "node:fs";
import { isAbsolute, relative } from "node:path";
import { configFiles } from "../rules/config.js";
import { runFixtures, type Counts, type FixtureError, type Mismatch } from "./fixtures.js";
import { columns } from "./format.js";

export interface RulesTestOptions {
  json?: boolean;
}

/** Paths under the working folder are shown relative to it, so they are clickable and short. */
function shown(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

/**
 * With no path, like `semgrep --test`, the working folder; and the project's rule folder
 * (`.opencode/acp/rules/`, where fixtures sit beside the rules they test), which the search skips
 * as a hidden folder.
 */
export function defaultFixturePaths(cwd: string): string[] {
  const project = configFiles({ projectDir: cwd }).at(-1)!.ruleDir;
  return existsSync(project) ? [cwd, project] : [cwd];
}

const at = (w: { file: string; line: number; col: number }) => `${shown(w.file)}:${w.line}:${w.col}`;

function table(counts: [string, Counts][]): string[] {
  const head = ["rule", "TP", "FP", "FN", "TN", "todo"];
  const total: Counts = { tp: 0, fp: 0, fn: 0, tn: 0, todo: 0 };
  const rows = counts.map(([rule, c]) => {
    for (const k of ["tp", "fp", "fn", "tn", "todo"] as const) total[k] += c[k];
    return [rule, c.tp, c.fp, c.fn, c.tn, c.todo].map(String);
  });
  rows.push(["total", total.tp, total.fp, total.fn, total.tn, total.todo].map(String));
  const lines = columns([head, ...rows], "right");
  return [...lines.slice(0, -1), "-".repeat(lines[0].length), lines[lines.length - 1]];
}

const mismatchLine = (m: Mismatch) => `${at(m)}: ${m.kind} ${m.rule}: ${m.message}`;
const errorLine = (e: FixtureError) => `${at(e.where)}: error: ${e.detail}`;

export function runRulesTest(paths: string[], opts: RulesTestOptions = {}): { exitCode: number; output: string } {
  const summary = runFixtures(paths.length ? paths : defaultFixturePaths(process.cwd()));
  const { results, errors, counts, mismatches, todos } = summary;
  if (results.length === 0 && errors.length === 0)
    errors.push({ where: { file: paths.join(" ") || shown(process.cwd()), line: 1, col: 1 }, detail: "no fixture files found (*.session.yaml, *.session.yml, *.session.json)" } as FixtureError);
  const exitCode = errors.length ? 2 : mismatches.length ? 1 : 0;

  if (opts.json) {
    const out = {
      exitCode,
      fixtures: results.length,
      rules: counts.map(([rule, c]) => ({ rule, ...c })),
      mismatches: mismatches.map((m) => ({ ...m, file: shown(m.file) })),
      todos: todos.map((m) => ({ ...m, file: shown(m.file) })),
      errors: errors.map((e) => ({ file: shown(e.where.file), line: e.where.line, col: e.where.col, message: e.detail })),
    };
    return { exitCode, output: JSON.stringify(out, null, 2) };
  }

  const lines: string[] = [];
  if (results.length) {
    lines.push(...table(counts), "");
    if (mismatches.length) lines.push(`${mismatches.length} mismatch${mismatches.length === 1 ? "" : "es"}:`, ...mismatches.map((m) => `  ${mismatchLine(m)}`), "");
    if (todos.length) lines.push(`${todos.length} known gap${todos.length === 1 ? "" : "s"} (todo annotations, not failing):`, ...todos.map((m) => `  ${at(m)}: ${m.message}`), "");
  }
  if (errors.length) lines.push(`${errors.length} fixture${errors.length === 1 ? "" : "s"} could not be run:`, ...errors.map((e) => `  ${errorLine(e)}`), "");
  const failed = new Set(mismatches.map((m) => m.file)).size;
  lines.push(`${results.length} fixture${results.length === 1 ? "" : "s"} run, ${failed} failed, ${errors.length} unreadable`);
  return { exitCode, output: lines.join("\n") };
}
