// Text output of the CLI: ESLint's stylish and JSON formats for lint, and padded columns for the tables.
import type { Problem } from "../rules/problems.js";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Problems grouped by file (in order of first appearance), each group sorted by line, then column. */
function byFile(problems: Problem[]): [string, Problem[]][] {
  const groups = new Map<string, Problem[]>();
  for (const p of problems) groups.set(p.file, [...(groups.get(p.file) ?? []), p]);
  return [...groups].map(([file, list]) => [file, [...list].sort((a, b) => a.line - b.line || a.col - b.col)]);
}

/**
 * As ESLint's stylish: the file, then a table `line:col  severity  message  ruleId` (line numbers
 * right-aligned, columns left-aligned), a blank line, and `✖ N problems (E errors, W warnings)`.
 */
export function stylish(problems: Problem[]): string {
  if (problems.length === 0) return "";
  const out: string[] = [];
  for (const [file, list] of byFile(problems)) {
    out.push(file);
    const messages = list.map((p) => p.message.replace(/([^ ])\.$/, "$1"));
    const width = (f: (p: Problem, i: number) => string) => Math.max(...list.map(f).map((s) => s.length));
    const lineW = width((p) => String(p.line));
    const colW = width((p) => String(p.col));
    const sevW = width((p) => p.severity);
    const msgW = width((_p, i) => messages[i]);
    list.forEach((p, i) =>
      out.push(`  ${String(p.line).padStart(lineW)}:${String(p.col).padEnd(colW)}  ${p.severity.padEnd(sevW)}  ${messages[i].padEnd(msgW)}  ${p.ruleId}`),
    );
    out.push("");
  }
  const errors = problems.filter((p) => p.severity === "error").length;
  out.push(`✖ ${plural(problems.length, "problem")} (${plural(errors, "error")}, ${plural(problems.length - errors, "warning")})`);
  return out.join("\n");
}

/** ESLint's JSON format: one result per file with problems; severity 2 = error, 1 = warning. */
export function jsonFormat(problems: Problem[]): string {
  const results = byFile(problems).map(([filePath, list]) => {
    const errorCount = list.filter((p) => p.severity === "error").length;
    return {
      filePath,
      messages: list.map((p) => ({ ruleId: p.ruleId, severity: p.severity === "error" ? 2 : 1, message: p.message, line: p.line, column: p.col, ...(p.pointer ? { pointer: p.pointer } : {}) })),
      errorCount,
      warningCount: list.length - errorCount,
      fixableErrorCount: 0,
      fixableWarningCount: 0,
    };
  });
  return JSON.stringify(results, null, 2);
}

/**
 * A table's lines: each cell padded to its column's width (over every row given), cells joined by
 * two spaces. The first column is left-aligned, the others as `align` says; the last column is
 * left as it is when `padLast` is false (a free-text column).
 */
export function columns(rows: string[][], align: "left" | "right" = "left", padLast = true): string[] {
  const n = Math.max(0, ...rows.map((r) => r.length));
  const w = Array.from({ length: n }, (_, i) => Math.max(0, ...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((c, i) => (i === n - 1 && !padLast ? c : i === 0 || align === "left" ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  "));
}
