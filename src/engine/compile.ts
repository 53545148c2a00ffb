// Conditions (json-rules-engine's TopLevelCondition format) compiled once into one generated
// function each (new Function), straight-line code whose every call site has one target, so V8
// can inline fact getters and operators (a tree of shared closures left every site megamorphic).
// Semantics follow json-rules-engine: all=every, any=some (both true when empty), not=negation,
// a missing path gives undefined, operators come from the shared table.
import type { PartNode } from "../graph/graph.js";
import type { Condition, Leaf } from "../rules/types.js";
import { factByName, type FactContext, type FactKind } from "./facts.js";
import { Emitter } from "./emit.js";
import { operatorDef } from "../lang/operators.js";
import { parsePath } from "../lang/path.js";

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

type Expr = string;

/** Leaf operators whose evaluate is exactly `a OP b`: the generated code compares inline. */
const INFIX: Record<string, string> = { equal: "===", notEqual: "!==", lessThan: "<", lessThanInclusive: "<=", greaterThan: ">", greaterThanInclusive: ">=" };

const isFactRef = (v: any): v is { fact: string; path?: string } => v && typeof v === "object" && !Array.isArray(v) && typeof v.fact === "string";

/** A fact read, with its path unrolled from pathOf/getPath so each property load has its own site. */
function factExpr(e: Emitter, fact: string, path: string | undefined, pointer: string, kinds: Set<FactKind>): Expr {
  const def = factByName.get(fact);
  if (!def) throw new CompileError(`unknown fact "${fact}"`, pointer);
  kinds.add(def.kind);
  const read = `${e.bind("f", def.get)}(n, c)`;
  if (!path) return read;
  const segs = parsePath(path);
  if (segs.length === 0) return read;
  const keys = segs.map((s) => e.bind("v", s));
  const t = e.temp();
  const isObj = `typeof ${t} === "object" && ${t} !== null`;
  // Innermost first: a non-object met on the way gives undefined, as getPath.
  let rest: Expr = t;
  for (let i = segs.length - 1; i >= 1; i--) rest = `(${isObj} ? (${t} = ${t}[${keys[i]}], ${rest}) : void 0)`;
  // A non-object fact value is returned as is (pathOf).
  return `(${t} = ${read}, ${isObj} ? (${t} = ${t}[${keys[0]}], ${rest}) : ${t})`;
}

function leafExpr(e: Emitter, leaf: Leaf, pointer: string, kinds: Set<FactKind>): Expr {
  const resolved = operatorDef(leaf.operator);
  if (!resolved) throw new CompileError(`unknown operator "${leaf.operator}"`, `${pointer}/operator`);
  const { def, negations } = resolved;
  const a = e.temp();
  const steps = [`${a} = ${factExpr(e, leaf.fact, leaf.path, `${pointer}/fact`, kinds)}`];
  const v = leaf.value as any;
  let b: Expr;
  if (isFactRef(v)) {
    b = e.temp();
    steps.push(`${b} = ${factExpr(e, v.fact, v.path, `${pointer}/value`, kinds)}`);
  } else b = e.bind("v", v);
  const literalArray = !isFactRef(v) && Array.isArray(v);
  let test: Expr;
  if (INFIX[def.name]) test = `${a} ${INFIX[def.name]} ${b}`;
  // A literal array needs no Array.isArray check at run time (it cannot stop being one).
  else if (def.name === "in" && literalArray) test = `${b}.indexOf(${a}) > -1`;
  else if (def.name === "notIn" && literalArray) test = `${b}.indexOf(${a}) === -1`;
  else test = `${e.bind("o", def.evaluate)}(${a}, ${b})`;
  if (def.validFact) test = `${e.bind("o", def.validFact)}(${a}) && ${test}`;
  // Fact and value are both read before the validator runs, as the closure's arguments were.
  return `${"!".repeat(negations)}(${steps.join(", ")}, ${test})`;
}

function nodeExpr(e: Emitter, cond: Condition, pointer: string, kinds: Set<FactKind>): Expr {
  if ("all" in cond) {
    const parts = cond.all.map((c, i) => nodeExpr(e, c, `${pointer}/all/${i}`, kinds));
    return parts.length === 0 ? "true" : `(${parts.join(" && ")})`;
  }
  if ("any" in cond) {
    const parts = cond.any.map((c, i) => nodeExpr(e, c, `${pointer}/any/${i}`, kinds));
    // As json-rules-engine: an empty condition set passes.
    return parts.length === 0 ? "true" : `(${parts.join(" || ")})`;
  }
  if ("not" in cond) return `!${nodeExpr(e, cond.not, `${pointer}/not`, kinds)}`;
  return leafExpr(e, cond as Leaf, pointer, kinds);
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

/** The generated source of a condition (for tests and debugging). */
export function conditionSource(cond: Condition, pointer = "/when"): string {
  const e = new Emitter();
  return e.source(nodeExpr(e, cond, pointer, new Set()));
}

/** `test` is generated on first use: the rule set also compiles sub-conditions only to read
 * their kinds, and new Function costs far more than emitting the source. */
class Compiled implements CompiledCondition {
  private fn?: Predicate;
  constructor(
    private readonly emitter: Emitter,
    private readonly expr: Expr,
    readonly kinds: Set<FactKind>,
    public tools: Set<string> | undefined,
  ) {}
  get test(): Predicate {
    return (this.fn ??= this.emitter.build<Predicate>(this.expr));
  }
}

export function compileCondition(cond: Condition, pointer = "/when"): CompiledCondition {
  const kinds = new Set<FactKind>();
  const e = new Emitter();
  // Emitting validates: unknown facts and operators throw here, not on first use.
  const expr = nodeExpr(e, cond, pointer, kinds);
  return new Compiled(e, expr, kinds, dispatchTools(cond));
}
