// Supersede keys: a template such as "file:{input.filePath|path}" turns a part into a group
// name; a newer part with the same key may supersede an older one. A placeholder that has no
// value makes the whole key undefined, so the part joins no group; `{x?}` makes it optional.
import type { PartNode } from "../graph/graph.js";
import { getPath } from "../lang/path.js";
import { KEY_FILTERS, KeyError, type KeyTemplate, parseKey, sortedJson, stableJson } from "../lang/key.js";
import { factByName, type FactContext } from "./facts.js";

/** Strings shorter than this stay inline in a group name; longer ones (up to 1M chars) are interned. */
const INTERN_MIN = 64;
const INTERN_MAX = 1 << 20;

/**
 * The group name of a key `prefix + stableJson(input)` (a template ending in `{input|json}`, the
 * input fact being always an object). Writing out a tool's whole input as escaped JSON for every
 * part costs more than everything else a part needs, so the name interns long string values:
 * stableJson with each such string replaced by `#<id>` (ids per session, by string content).
 *
 * Exact: stableJson texts tokenise uniquely, so two are equal iff their token sequences are,
 * i.e. iff the strings at each value position are equal, i.e. iff the interned ids are; `#<id>`
 * is followed by , ] or } and never starts any other token. A prefix without "{" ends where the
 * first "{" is, so prefix + json keys are equal iff both parts are. A prefix with "{" (a tool
 * name with braces) keeps the whole key, in a separate namespace ("K" vs "E"): such a key never
 * equals one with a brace-free prefix, since a stableJson object text has no proper suffix that
 * is itself one (a suffix starting inside a string flips the string parity; one starting at an
 * inner brace closes before the end).
 */
function groupOfInput(prefix: string, input: unknown, key: () => string | undefined, strings: Map<string, number>): string | undefined {
  if (prefix.includes("{")) {
    const k = key();
    return k === undefined ? undefined : `K${k}`;
  }
  return `E${prefix}${internedJson(input, strings)}`;
}

/** stableJson with long strings (values, not keys) as #<id>. */
function internedJson(v: unknown, strings: Map<string, number>): string {
  return sortedJson(v, (str) => {
    if (str.length < INTERN_MIN || str.length > INTERN_MAX) return JSON.stringify(str);
    let id = strings.get(str);
    if (id === undefined) strings.set(str, (id = strings.size));
    return `#${id}`;
  });
}

type Segment = string | ((n: PartNode, c: FactContext) => string | undefined);

export interface CompiledKey {
  template: string;
  /**
   * Keys `prefix + {input|json}` only: the prefix (undefined when the key is) and the input. Two
   * such keys are equal when the prefixes are (and hold no "{", see groupOfInput) and the inputs
   * have the same stable JSON (sameJson), so a group index can find a part's group without
   * writing its input out.
   */
  prefix?(node: PartNode, ctx: FactContext): string | undefined;
  input?(node: PartNode, ctx: FactContext): unknown;
  get(node: PartNode, ctx: FactContext): string | undefined;
  /**
   * A group name for the key: group(a) === group(b) exactly when get(a) === get(b), cheaper to
   * build (see groupOfInput). `strings` interns long strings; one table per session.
   */
  group(node: PartNode, ctx: FactContext, strings: Map<string, number>): string | undefined;
}

export { KEY_FILTERS, KeyError } from "../lang/key.js";

/** The getters of a key template (parsed here when given as text); throws a KeyError when it has errors. */
export function compileKey(key: KeyTemplate | string): CompiledKey {
  const parsed = typeof key === "string" ? parseKey(key) : key;
  if (parsed.errors.length) throw new KeyError(parsed.errors[0]);
  const template = parsed.template;
  const segments: Segment[] = [];
  let inputJson = false; // the template ends with {input|json}
  for (const p of parsed.segments) {
    if (typeof p === "string") {
      segments.push(p);
      inputJson = false;
      continue;
    }
    const def = factByName.get(p.fact)!;
    const { path, optional } = p;
    const fns = p.filters.map((f) => KEY_FILTERS[f].apply);
    const segment = (n: PartNode, c: FactContext) => {
      let v: unknown = getPath(def.get(n, c), path);
      if (path.length === 0) v = def.get(n, c);
      for (const f of fns) v = v === undefined ? undefined : f(v);
      if (v === undefined || v === null || v === "") return optional ? "" : undefined;
      return typeof v === "string" ? v : stableJson(v);
    };
    segments.push(segment);
    inputJson = p.fact === "input" && path.length === 0 && p.filters.length === 1 && p.filters[0] === "json";
  }
  const placeholders = segments.filter((s) => typeof s !== "string") as ((n: PartNode, c: FactContext) => string | undefined)[];
  const only = placeholders.length === 1 && !inputJson ? placeholders[0] : undefined;
  const inputFact = factByName.get("input")!;
  const prefixOf = (n: PartNode, c: FactContext) => {
    let prefix = "";
    for (let i = 0; i < segments.length - 1; i++) {
      const s = segments[i];
      const v = typeof s === "string" ? s : s(n, c);
      if (v === undefined) return undefined;
      prefix += v;
    }
    return prefix;
  };
  return {
    template,
    ...(inputJson ? { prefix: prefixOf, input: inputFact.get } : {}),
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
    group(n, c, strings) {
      // One placeholder between fixed text: its value alone names the group (no new string to hash).
      if (only !== undefined) return only(n, c);
      if (!inputJson) return this.get(n, c);
      const prefix = prefixOf(n, c);
      if (prefix === undefined) return undefined;
      return groupOfInput(prefix, inputFact.get(n, c), () => this.get(n, c), strings);
    },
  };
}

const mix = (h: number, x: number) => {
  h = Math.imul(h ^ x, 0x5bd1e995);
  return h ^ (h >>> 15);
};
const NULL_PRINT = 0x27d4eb2d; // everything stableJson writes as null
const HOLE_PRINT = 0x165667b1;

/** Strings up to this long are fingerprinted whole (paths, commands, patterns: those that differ in one character). */
const WHOLE_PRINT = 64;

/**
 * A string's length and three of its characters, or every character of a short one: equal
 * strings, equal prints. (Paths of one length often share those three: "src/mod1/a.ts", "src/mod2/a.ts".)
 */
function stringPrint(s: string): number {
  const n = s.length;
  if (n === 0) return 0x3c6ef372;
  if (n > WHOLE_PRINT) return mix(mix(n, s.charCodeAt(0)), mix(s.charCodeAt(n - 1), s.charCodeAt(n >> 1)));
  let h = mix(0x2545f491, n);
  for (let i = 0; i < n; i++) h = mix(h, s.charCodeAt(i));
  return h;
}

/**
 * A fingerprint of a value, the same for values whose stableJson is the same: strings by length
 * and three characters, finite numbers by value (-0 as 0), everything written as null alike, array
 * elements in order (holes apart from null), object members in any order (a commutative sum over
 * own enumerable keys, as stableJson sorts them). Undefined for what it does not cover (depth,
 * bigints): the caller then compares full keys. Reads no character beyond three of a long string,
 * so it costs little for the long strings (file contents, patches) that make full keys expensive.
 */
/** An array's length as the json filter writes it: a hole is written as nothing, so a lone hole is "[]". */
const jsonLength = (a: unknown[]) => (a.length === 1 && !(0 in a) ? 0 : a.length);

export function inputFingerprint(v: unknown, depth: number): number | undefined {
  switch (typeof v) {
    case "string":
      return stringPrint(v);
    case "number":
      return Number.isFinite(v) ? mix(mix(0x1b873593, v | 0), ((v % 1) * 0x7fffffff) | 0) : NULL_PRINT;
    case "boolean":
      return v ? 0x2c1b3c6d : 0x297a2d39;
    case "undefined":
    case "function":
    case "symbol":
      return NULL_PRINT;
    case "object":
      break;
    default:
      return undefined;
  }
  if (v === null) return NULL_PRINT;
  if (depth > 16) return undefined;
  if (Array.isArray(v)) {
    const n = jsonLength(v);
    let h = mix(0x7feb352d, n);
    for (let i = 0; i < n; i++) {
      const e = i in v ? inputFingerprint(v[i], depth + 1) : HOLE_PRINT;
      if (e === undefined) return undefined;
      h = mix(h, e);
    }
    return h;
  }
  const o = v as Record<string, unknown>;
  let sum = 0;
  let count = 0;
  for (const k of Object.keys(o)) {
    const e = inputFingerprint(o[k], depth + 1);
    if (e === undefined) return undefined;
    sum = (sum + mix(stringPrint(k), e)) | 0;
    count++;
  }
  return mix(mix(0x846ca68b, count), sum);
}

/** Written as null by stableJson: null, undefined, functions, symbols, NaN and infinities. */
const isNullJson = (v: unknown) => v === null || v === undefined || typeof v === "function" || typeof v === "symbol" || (typeof v === "number" && !Number.isFinite(v));

/**
 * Whether stableJson(a) === stableJson(b), without writing either out; undefined when it cannot
 * tell cheaply (depth, bigints): the caller then compares the texts.
 */
export function sameJson(a: unknown, b: unknown, depth: number): boolean | undefined {
  if (a === b) return typeof a !== "bigint" || undefined;
  const ta = typeof a;
  if (ta === "bigint" || typeof b === "bigint") return undefined;
  if (isNullJson(a) || isNullJson(b)) return isNullJson(a) && isNullJson(b);
  if (ta !== "object" || typeof b !== "object") return false; // distinct strings, numbers or booleans, or a scalar and an object
  if (depth > 64) return undefined;
  const arr = Array.isArray(a);
  if (arr !== Array.isArray(b)) return false;
  if (arr) {
    const x = a as unknown[];
    const y = b as unknown[];
    const n = jsonLength(x);
    if (n !== jsonLength(y)) return false;
    for (let i = 0; i < n; i++) {
      const h = i in x;
      if (h !== i in y) return false; // a hole is written as nothing, not as null
      const same = h ? sameJson(x[i], y[i], depth + 1) : true;
      if (same !== true) return same;
    }
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  if (kx.length !== ky.length) return false;
  for (const k of kx) if (!isEnumerableOwn(y, k)) return false;
  for (const k of kx) {
    const same = sameJson(x[k], y[k], depth + 1);
    if (same !== true) return same;
  }
  return true;
}

const isEnumerableOwn = (o: object, k: string) => Object.prototype.propertyIsEnumerable.call(o, k);
