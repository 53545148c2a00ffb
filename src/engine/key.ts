// Supersede keys: a template such as "file:{input.filePath|path}" turns a part into a group
// name; a newer part with the same key may supersede an older one. A placeholder that has no
// value makes the whole key undefined, so the part joins no group; `{x?}` makes it optional.
import type { PartNode } from "../graph/graph.js";
import { getPath } from "./compile.js";
import { factByName, type FactContext } from "./facts.js";

/** JSON with object keys sorted; built by concatenation (no intermediate arrays): keys of large inputs are on the hot path. */
function stableJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) {
    let s = "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) s += ",";
      if (i in v) s += stableJson(v[i]); // a hole stays empty, as Array#map + join leave it
    }
    return `${s}]`;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  for (let i = 1; i < keys.length; i++)
    if (keys[i - 1] > keys[i]) {
      keys.sort();
      break;
    }
  let s = "{";
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) s += ",";
    s += `${JSON.stringify(keys[i])}:${stableJson(o[keys[i]])}`;
  }
  return `${s}}`;
}

/** The `path` filter; most paths are already normal, so they skip the four replacements. */
function normalPath(v: string): string {
  if (!v.includes("\\") && !v.includes("//") && !v.startsWith("./") && !v.endsWith("/")) return v;
  return v.replace(/\\/g, "/").replace(/\/{2,}/g, "/").replace(/^(\.\/)+/, "").replace(/(.)\/$/, "$1");
}

export const KEY_FILTERS: Record<string, { description: string; apply: (v: unknown) => string | undefined }> = {
  path: {
    description: "normalise a file path (./ and duplicate slashes removed, no trailing slash)",
    apply: (v) => (typeof v === "string" ? normalPath(v) : undefined),
  },
  squash: { description: "trim and collapse whitespace", apply: (v) => (typeof v === "string" ? v.trim().replace(/\s+/g, " ") : undefined) },
  head: { description: "first word (a command's program name)", apply: (v) => (typeof v === "string" ? v.trim().split(/\s+/)[0] || undefined : undefined) },
  lower: { description: "lower case", apply: (v) => (typeof v === "string" ? v.toLowerCase() : undefined) },
  json: { description: "stable JSON of any value (keys sorted)", apply: (v) => (v === undefined ? undefined : stableJson(v)) },
};

type Segment = string | ((n: PartNode, c: FactContext) => string | undefined);

export interface CompiledKey {
  template: string;
  get(node: PartNode, ctx: FactContext): string | undefined;
}

export class KeyError extends Error {}

export function compileKey(template: string): CompiledKey {
  const segments: Segment[] = [];
  const re = /\{([^{}]+)\}/g;
  let last = 0;
  for (let m; (m = re.exec(template)); ) {
    if (m.index > last) segments.push(template.slice(last, m.index));
    last = m.index + m[0].length;
    // `?` marks the placeholder optional; it may follow the reference or the last filter.
    const pieces = m[1].split("|").map((s) => s.trim());
    const optional = pieces.some((p) => p.endsWith("?"));
    const [ref, ...filters] = pieces.map((p) => p.replace(/\?$/, ""));
    const [fact, ...path] = ref.split(".");
    const def = factByName.get(fact);
    if (!def) throw new KeyError(`key ${JSON.stringify(template)}: unknown fact "${fact}"`);
    if (def.kind === "dynamic" || def.kind === "phase") throw new KeyError(`key ${JSON.stringify(template)}: fact "${fact}" changes over time; keys must use static facts`);
    const fns = filters.map((f) => {
      const filter = KEY_FILTERS[f];
      if (!filter) throw new KeyError(`key ${JSON.stringify(template)}: unknown filter "${f}" (known: ${Object.keys(KEY_FILTERS).join(", ")})`);
      return filter.apply;
    });
    segments.push((n, c) => {
      let v: unknown = getPath(def.get(n, c), path);
      if (path.length === 0) v = def.get(n, c);
      for (const f of fns) v = v === undefined ? undefined : f(v);
      if (v === undefined || v === null || v === "") return optional ? "" : undefined;
      return typeof v === "string" ? v : stableJson(v);
    });
  }
  if (last < template.length) segments.push(template.slice(last));
  return {
    template,
    get(n, c) {
      let out = "";
      for (const s of segments) {
        if (typeof s === "string") out += s;
        else {
          const v = s(n, c);
          if (v === undefined) return undefined;
          out += v;
        }
      }
      return out;
    },
  };
}
