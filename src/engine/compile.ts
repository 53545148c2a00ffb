// Conditions (json-rules-engine's TopLevelCondition format) compiled once into synchronous
// closures. Semantics follow json-rules-engine: all=every, any=some, not=negation, a missing
// path gives undefined, operators come from the shared table.
import type { PartNode } from "../graph/graph.js";
import type { Condition, Leaf } from "../rules/types.js";
import { factByName, type FactContext, type FactKind } from "./facts.js";
import { resolveOperator } from "./operators.js";

export type Predicate = (node: PartNode, ctx: FactContext) => boolean;

export interface CompiledCondition {
  test: Predicate;
  /** Strongest fact kind read: decides caching (static results are cached per part). */
  kinds: Set<FactKind>;
  /** Tool names the condition requires (from a top-level `tool equal|in`), for dispatch. */
  tools?: Set<string>;
}

export class CompileError extends Error {
  constructor(message: string, readonly pointer: string) {
    super(message);
  }
}

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

type Getter = (node: PartNode, ctx: FactContext) => unknown;

function factGetter(fact: string, path: string | undefined, pointer: string, kinds: Set<FactKind>): Getter {
  const def = factByName.get(fact);
  if (!def) throw new CompileError(`unknown fact "${fact}"`, pointer);
  kinds.add(def.kind);
  if (!path) return def.get;
  const segs = parsePath(path);
  return (n, c) => pathOf(def.get(n, c), segs);
}

function compileLeaf(leaf: Leaf, pointer: string, kinds: Set<FactKind>): Predicate {
  const op = resolveOperator(leaf.operator);
  if (!op) throw new CompileError(`unknown operator "${leaf.operator}"`, `${pointer}/operator`);
  const fact = factGetter(leaf.fact, leaf.path, `${pointer}/fact`, kinds);
  const v = leaf.value as any;
  if (v && typeof v === "object" && !Array.isArray(v) && typeof v.fact === "string") {
    const other = factGetter(v.fact, v.path, `${pointer}/value`, kinds);
    return (n, c) => op(fact(n, c), other(n, c));
  }
  return (n, c) => op(fact(n, c), v);
}

function compileNode(cond: Condition, pointer: string, kinds: Set<FactKind>): Predicate {
  if ("all" in cond) {
    const parts = cond.all.map((c, i) => compileNode(c, `${pointer}/all/${i}`, kinds));
    return (n, c) => {
      for (const p of parts) if (!p(n, c)) return false;
      return true;
    };
  }
  if ("any" in cond) {
    const parts = cond.any.map((c, i) => compileNode(c, `${pointer}/any/${i}`, kinds));
    if (parts.length === 0) return () => true; // as json-rules-engine: an empty condition set passes
    return (n, c) => {
      for (const p of parts) if (p(n, c)) return true;
      return false;
    };
  }
  if ("not" in cond) {
    const inner = compileNode(cond.not, `${pointer}/not`, kinds);
    return (n, c) => !inner(n, c);
  }
  return compileLeaf(cond as Leaf, pointer, kinds);
}

/** Tools named by a top-level `{fact: tool, operator: equal|in}` leaf, for per-tool dispatch. */
function dispatchTools(cond: Condition): Set<string> | undefined {
  const leaves = "all" in cond ? cond.all : [cond];
  for (const l of leaves) {
    const leaf = l as Leaf;
    if (leaf.fact !== "tool" || leaf.path) continue;
    if (leaf.operator === "equal" && typeof leaf.value === "string") return new Set([leaf.value]);
    if (leaf.operator === "in" && Array.isArray(leaf.value)) return new Set(leaf.value.filter((x) => typeof x === "string"));
  }
  return undefined;
}

export function compileCondition(cond: Condition, pointer = "/when"): CompiledCondition {
  const kinds = new Set<FactKind>();
  const test = compileNode(cond, pointer, kinds);
  return { test, kinds, tools: dispatchTools(cond) };
}
