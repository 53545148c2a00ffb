// Key templates: "file:{input.filePath|path}" names the group a part belongs to; a newer part with
// the same key may supersede an older one. A template is parsed once into text and placeholders
// (fact, path, filters, optional `?`); the engine (engine/key.ts) reads it for each part.
import { factDecl, type FactDecl } from "./facts.js";

/** JSON with object keys sorted (undefined and functions as null, holes empty). */
export function stableJson(v: unknown): string {
  // Plain JSON data with keys already in order (the common case) is exactly what JSON.stringify
  // writes, in one native call; anything else takes the general path.
  return isPlainSorted(v, 0) && !prototypesHaveToJSON() ? JSON.stringify(v) : sortedJson(v);
}

const prototypesHaveToJSON = () => typeof (Object.prototype as any).toJSON === "function" || typeof (Array.prototype as any).toJSON === "function";

/** Strings, finite or not numbers, booleans, null, dense plain arrays and plain objects whose keys are sorted. */
function isPlainSorted(v: unknown, depth: number): boolean {
  if (v === null) return true;
  const t = typeof v;
  if (t === "string" || t === "number" || t === "boolean") return true;
  if (t !== "object" || depth > 64) return false;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return false;
    for (let i = 0; i < v.length; i++) if (!(i in v) || !isPlainSorted(v[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return false;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  for (let i = 0; i < keys.length; i++) if ((i > 0 && keys[i - 1] >= keys[i]) || !isPlainSorted(o[keys[i]], depth + 1)) return false;
  return true;
}

/**
 * JSON with object keys sorted (undefined and functions as null, holes empty), each string value
 * written by `str` when given (object keys always as JSON strings): stableJson's general path, and
 * the engine's key groups with long strings interned (engine/key.ts).
 */
export function sortedJson(v: unknown, str?: (s: string) => string): string {
  if (str !== undefined && typeof v === "string") return str(v);
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) {
    let s = "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) s += ",";
      if (i in v) s += sortedJson(v[i], str); // a hole stays empty, as Array#map + join leave it
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
    s += `${JSON.stringify(keys[i])}:${sortedJson(o[keys[i]], str)}`;
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

/** A placeholder `{fact.a.b|filter|filter?}`: `?` (after the reference or the last filter) makes an empty value fine. */
export interface KeyPlaceholder {
  /** As written, braces included. */
  source: string;
  fact: string;
  /** Undefined when the fact is not in the catalogue (an error of the template). */
  def?: FactDecl;
  path: string[];
  filters: string[];
  optional: boolean;
}

export type KeySegment = string | KeyPlaceholder;

export interface KeyTemplate {
  template: string;
  segments: KeySegment[];
  /** What is wrong with the template, first problem first; a template with errors is not run. */
  errors: string[];
}

export class KeyError extends Error {}

// One parse per template: the loader checks it, the compiler and lint read the same segments.
const parsedKeys = new Map<string, KeyTemplate>();

export function parseKey(template: string): KeyTemplate {
  let key = parsedKeys.get(template);
  if (!key) {
    if (parsedKeys.size >= 1000) parsedKeys.clear();
    parsedKeys.set(template, (key = parse(template)));
  }
  return key;
}

function parse(template: string): KeyTemplate {
  const segments: KeySegment[] = [];
  const errors: string[] = [];
  const at = `key ${JSON.stringify(template)}`;
  const re = /\{([^{}]+)\}/g;
  let last = 0;
  for (let m; (m = re.exec(template)); ) {
    if (m.index > last) segments.push(template.slice(last, m.index));
    last = m.index + m[0].length;
    const pieces = m[1].split("|").map((s) => s.trim());
    const optional = pieces.some((p) => p.endsWith("?"));
    const [ref, ...filters] = pieces.map((p) => p.replace(/\?$/, ""));
    const [fact, ...path] = ref.split(".");
    const def = factDecl.get(fact);
    if (!def) errors.push(`${at}: unknown fact "${fact}"`);
    else if (def.kind === "dynamic" || def.kind === "phase") errors.push(`${at}: fact "${fact}" changes over time; keys must use static facts`);
    else for (const f of filters) if (!KEY_FILTERS[f]) errors.push(`${at}: unknown filter "${f}" (known: ${Object.keys(KEY_FILTERS).join(", ")})`);
    segments.push({ source: m[0], fact, def, path, filters, optional });
  }
  if (last < template.length) segments.push(template.slice(last));
  return { template, segments, errors };
}
