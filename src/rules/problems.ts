// One problem shape for every layer (YAML syntax, schema, semantics), ESLint/Spectral style.
import { distance } from "fastest-levenshtein";

export interface Problem {
  file: string;
  line: number;
  col: number;
  severity: "error" | "warning";
  message: string;
  /** Which check produced it, e.g. schema/additionalProperties, unknown-fact. */
  ruleId: string;
  pointer?: string;
}

export class ProblemError extends Error {
  constructor(readonly problems: Problem[]) {
    super(problems.map(formatProblem).join("\n"));
  }
}

export const formatProblem = (p: Problem) => `${p.file}:${p.line}:${p.col}: ${p.severity}: ${p.message} (${p.ruleId})`;

/** " (did you mean "x"?)" when a known name is close, else "". */
export function didYouMean(word: string, known: Iterable<string>): string {
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const dist = distance(word.toLowerCase(), k.toLowerCase());
    if (dist < bestD) [best, bestD] = [k, dist];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 3)) ? ` (did you mean "${best}"?)` : "";
}
