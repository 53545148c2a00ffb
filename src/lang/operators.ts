// The one operator table. The compiled evaluator and the json-rules-engine reference both
// register exactly these, so their semantics cannot drift apart.
import picomatch from "picomatch";
import { compileSafeRegex } from "./safe-regex.js";

export interface OperatorDef {
  name: string;
  description: string;
  /** json-rules-engine's factValueValidator: a false result makes the leaf false. */
  validFact?: (factValue: unknown) => boolean;
  evaluate: (factValue: any, value: any) => boolean;
}

// A number parses back to itself unless it is NaN, so only other values need the parse.
const isNumberLike = (v: unknown) => (typeof v === "number" ? v === v : Number.parseFloat(v as string).toString() !== "NaN");
const isString = (v: unknown): v is string => typeof v === "string";

const globCache = new Map<string, (s: string) => boolean>();
export function globMatcher(pattern: string): (s: string) => boolean {
  let m = globCache.get(pattern);
  if (!m) {
    // dot: protected files like .env must match; basename-free patterns match whole paths.
    const match = picomatch(pattern, { dot: true, nocase: false });
    const seen = new Map<string, boolean>(); // the same paths come back on every call of a tool
    m = (s: string) => {
      if (s.length > 1024) return match(s) || match(s.replace(/^\/+/, ""));
      let r = seen.get(s);
      if (r === undefined) {
        r = match(s) || match(s.replace(/^\/+/, ""));
        if (seen.size >= 10_000) seen.clear();
        seen.set(s, r);
      }
      return r;
    };
    if (globCache.size > 5000) globCache.clear();
    globCache.set(pattern, m);
  }
  return m;
}

/** Per list of patterns: its elements when the matcher was made, and the matcher (any matches, results memoised). */
const listMatchers = new WeakMap<unknown[], { patterns: unknown[]; match: (s: string) => boolean }>();

/** Patterns may be one glob or a list (any matches). */
function globAny(path: string, patterns: unknown): boolean {
  if (!Array.isArray(patterns)) return typeof patterns === "string" && globMatcher(patterns)(path);
  // A rule's list is the same array on every part: one memo for the list instead of a lookup per pattern.
  let m = listMatchers.get(patterns);
  if (m === undefined || !sameElements(m.patterns, patterns)) {
    const list = patterns.slice();
    const any = (s: string) => list.some((p) => typeof p === "string" && globMatcher(p)(s));
    const seen = new Map<string, boolean>();
    const match = (s: string) => {
      if (s.length > 1024) return any(s);
      let r = seen.get(s);
      if (r === undefined) {
        r = any(s);
        if (seen.size >= 10_000) seen.clear();
        seen.set(s, r);
      }
      return r;
    };
    listMatchers.set(patterns, (m = { patterns: list, match }));
  }
  return m.match(path);
}

function sameElements(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// compile.ts inlines equal…greaterThanInclusive as `a OP b` and in/notIn on a literal array as
// indexOf: change those evaluates there too.
export const OPERATORS: OperatorDef[] = [
  { name: "equal", description: "fact === value", evaluate: (a, b) => a === b },
  { name: "notEqual", description: "fact !== value", evaluate: (a, b) => a !== b },
  { name: "in", description: "fact is one of the values (array)", evaluate: (a, b) => Array.isArray(b) && b.indexOf(a) > -1 },
  { name: "notIn", description: "fact is none of the values (array)", evaluate: (a, b) => Array.isArray(b) && b.indexOf(a) === -1 },
  { name: "contains", description: "fact (array) contains value", validFact: Array.isArray, evaluate: (a, b) => a.indexOf(b) > -1 },
  { name: "doesNotContain", description: "fact (array) lacks value", validFact: Array.isArray, evaluate: (a, b) => a.indexOf(b) === -1 },
  { name: "lessThan", description: "fact < value", validFact: isNumberLike, evaluate: (a, b) => a < b },
  { name: "lessThanInclusive", description: "fact <= value", validFact: isNumberLike, evaluate: (a, b) => a <= b },
  { name: "greaterThan", description: "fact > value", validFact: isNumberLike, evaluate: (a, b) => a > b },
  { name: "greaterThanInclusive", description: "fact >= value", validFact: isNumberLike, evaluate: (a, b) => a >= b },
  { name: "glob", description: "fact (a path) matches the glob, or any glob of a list (picomatch, dotfiles included)", validFact: isString, evaluate: (a, b) => globAny(a, b) },
  { name: "regex", description: "fact (a string) matches the regular expression (linear-time engine)", validFact: isString, evaluate: (a, b) => typeof b === "string" && compileSafeRegex(b).test(a) },
];

export const OPERATOR_NAMES = OPERATORS.map((o) => o.name);
const byName = new Map(OPERATORS.map((o) => [o.name, o]));

/** The table entry behind a plain name (`not:` decorators are parsed with the condition, lang/condition.ts). */
export const operatorByName = (name: string): OperatorDef | undefined => byName.get(name);

/** An operator as json-rules-engine applies it: a fact its validator refuses makes the leaf false. */
export function applyOperator(def: OperatorDef, fact: unknown, value: unknown): boolean {
  return def.validFact ? def.validFact(fact) && def.evaluate(fact, value) : def.evaluate(fact, value);
}
