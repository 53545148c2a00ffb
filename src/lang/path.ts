// Member paths (`path: $.filePath`, `{input.filePath}`): parsed once, read as json-rules-engine's
// Almanac reads them.

/** `$.a.b[0]` → ["a","b","0"]; only simple member paths are allowed. */
export function parsePath(path: string): string[] {
  if (!/^\$(\.[A-Za-z_$][\w$-]*|\[\d+\])*$/.test(path)) throw new Error(`unsupported path "${path}" (use $.a.b or $.a[0])`);
  return path
    .slice(1)
    .split(/\.|\[|\]/)
    .filter((s) => s.length > 0);
}

export function getPath(value: unknown, segments: string[]): unknown {
  let cur: any = value;
  for (const s of segments) {
    if (cur === null || cur === undefined || typeof cur !== "object") return undefined;
    cur = cur[s];
  }
  return cur;
}

/** json-rules-engine's Almanac: a path applies to object values; any other value is returned as is. */
export function pathOf(value: unknown, segments: string[]): unknown {
  return typeof value === "object" && value !== null ? getPath(value, segments) : value;
}
