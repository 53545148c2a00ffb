// One problem shape for every layer (YAML syntax, schema, semantics), ESLint/Spectral style.
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

function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  return d[a.length][b.length];
}

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
