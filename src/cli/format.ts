// Lint output: ESLint's stylish format (default) and JSON.
import type { Problem } from "../rules/problems.js";

export function stylish(problems: Problem[]): string {
  if (problems.length === 0) return "";
  const byFile = new Map<string, Problem[]>();
  for (const p of problems) byFile.set(p.file, [...(byFile.get(p.file) ?? []), p]);
  const out: string[] = [];
  for (const [file, list] of byFile) {
    out.push(file);
    list.sort((a, b) => a.line - b.line || a.col - b.col);
    const locW = Math.max(...list.map((p) => `${p.line}:${p.col}`.length));
    const sevW = Math.max(...list.map((p) => p.severity.length));
    const msgW = Math.max(...list.map((p) => p.message.length));
    for (const p of list) out.push(`  ${`${p.line}:${p.col}`.padEnd(locW)}  ${p.severity.padEnd(sevW)}  ${p.message.padEnd(msgW)}  ${p.ruleId}`);
    out.push("");
  }
  const errors = problems.filter((p) => p.severity === "error").length;
  const warnings = problems.length - errors;
  out.push(`✖ ${problems.length} problem${problems.length === 1 ? "" : "s"} (${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"})`);
  return out.join("\n");
}

export const jsonFormat = (problems: Problem[]) => JSON.stringify(problems, null, 2);
