// Conditions (parsed once, lang/condition.ts) compiled into one generated
// function each (new Function), straight-line code whose every call site has one target, so V8
// can inline fact getters and operators (a tree of shared closures left every site megamorphic).
// Semantics follow json-rules-engine: all=every, any=some (both true when empty), not=negation,
// a missing path gives undefined, operators come from the shared table.
import type { PartNode } from "../graph/graph.js";
import { allowedValues, type ConditionNode, isConditionNode, type FactRead, fold, type LeafNode, parseCondition } from "../lang/condition.js";
import type { Condition } from "../rules/types.js";
import { factByName, type FactContext, type FactKind } from "./facts.js";
import { Emitter } from "./emit.js";

export type Predicate = (node: PartNode, ctx: FactContext) => boolean;

export interface CompiledCondition {
  test: Predicate;
  /** Strongest fact kind read: decides caching (static results are cached per part). */
  kinds: Set<FactKind>;
  /** Tool names the condition requires (from a top-level `tool equal|in`), for dispatch. */
  tools?: Set<string>;
}

/** Does the condition hold on the part (`tool`: its tool name, undefined for other parts)? Its required tools are checked first, without a call. */
export function holdsOn(c: CompiledCondition, n: PartNode, tool: string | undefined, ctx: FactContext): boolean {
  return (!c.tools || (tool !== undefined && c.tools.has(tool))) && c.test(n, ctx);
}

export class CompileError extends Error {
  constructor(message: string, readonly pointer: string) {
    super(message);
  }
}

type Expr = string;

/** Leaf operators whose evaluate is exactly `a OP b`: the generated code compares inline. */
const INFIX: Record<string, string> = { equal: "===", notEqual: "!==", lessThan: "<", lessThanInclusive: "<=", greaterThan: ">", greaterThanInclusive: ">=" };

/** A fact read, with its path unrolled from pathOf/getPath so each property load has its own site. */
function factExpr(e: Emitter, read: FactRead, pointer: string, kinds: Set<FactKind>): Expr {
  const def = factByName.get(read.fact);
  if (!def) throw new CompileError(`unknown fact "${read.fact}"`, pointer);
  kinds.add(def.kind);
  const get = `${e.bind("f", def.get)}(n, c)`;
  if (!read.path?.text) return get;
  if (read.path.error !== undefined) throw new Error(read.path.error);
  const segs = read.path.segments!;
  if (segs.length === 0) return get;
  const keys = segs.map((s) => e.bind("v", s));
  const t = e.temp();
  const isObj = `typeof ${t} === "object" && ${t} !== null`;
  // Innermost first: a non-object met on the way gives undefined, as getPath.
  let rest: Expr = t;
  for (let i = segs.length - 1; i >= 1; i--) rest = `(${isObj} ? (${t} = ${t}[${keys[i]}], ${rest}) : void 0)`;
  // A non-object fact value is returned as is (pathOf).
  return `(${t} = ${get}, ${isObj} ? (${t} = ${t}[${keys[0]}], ${rest}) : ${t})`;
}

/**
 * A leaf as generated code: `steps` read the fact into `a` and the value into `b`, then `test`
 * compares them; the leaf's result is `test` negated `negations` times. Explain builds its per-leaf
 * functions from these same pieces (engine/explain.ts).
 */
export interface LeafCode {
  steps: Expr[];
  a: Expr;
  b: Expr;
  test: Expr;
  negations: number;
}

export function leafCode(e: Emitter, leaf: LeafNode, kinds: Set<FactKind>): LeafCode {
  const { pointer } = leaf;
  const def = leaf.opDef;
  if (!def) throw new CompileError(`unknown operator "${leaf.operator}"`, `${pointer}/operator`);
  if (!leaf.fact) throw new CompileError("a leaf needs a fact", `${pointer}/fact`);
  const a = e.temp();
  const steps = [`${a} = ${factExpr(e, leaf.fact, `${pointer}/fact`, kinds)}`];
  const v = leaf.value as any;
  let b: Expr;
  if (leaf.ref) {
    b = e.temp();
    steps.push(`${b} = ${factExpr(e, leaf.ref, `${pointer}/value`, kinds)}`);
  } else b = e.bind("v", v);
  const literalArray = !leaf.ref && Array.isArray(v);
  let test: Expr;
  if (INFIX[def.name]) test = `${a} ${INFIX[def.name]} ${b}`;
  // A literal array needs no Array.isArray check at run time (it cannot stop being one).
  else if (def.name === "in" && literalArray) test = `${b}.indexOf(${a}) > -1`;
  else if (def.name === "notIn" && literalArray) test = `${b}.indexOf(${a}) === -1`;
  else test = `${e.bind("o", def.evaluate)}(${a}, ${b})`;
  if (def.validFact) test = `${e.bind("o", def.validFact)}(${a}) && ${test}`;
  return { steps, a, b, test, negations: leaf.negations };
}

function nodeExpr(e: Emitter, cond: ConditionNode, kinds: Set<FactKind>): Expr {
  return fold<Expr>(cond, {
    all: (_, parts) => (parts.length === 0 ? "true" : `(${parts.join(" && ")})`),
    // As json-rules-engine: an empty condition set passes.
    any: (_, parts) => (parts.length === 0 ? "true" : `(${parts.join(" || ")})`),
    not: (_, inner) => `!${inner}`,
    invalid: (node) => {
      throw new CompileError("not a condition (an object with all, any, not or fact)", node.pointer);
    },
    leaf: (leaf) => {
      // Fact and value are both read before the validator runs, as the closure's arguments were.
      const { steps, test, negations } = leafCode(e, leaf, kinds);
      return `${"!".repeat(negations)}(${steps.join(", ")}, ${test})`;
    },
  });
}

/** Tools named by a top-level `{fact: tool, operator: equal|in}` leaf, for per-tool dispatch. */
function dispatchTools(cond: ConditionNode): Set<string> | undefined {
  for (const l of cond.kind === "all" ? cond.children : [cond]) {
    const tools = l.kind === "leaf" ? allowedValues(l, "tool") : undefined;
    if (tools) return tools;
  }
  return undefined;
}

const tree = (cond: Condition | ConditionNode, pointer: string): ConditionNode => (isConditionNode(cond) ? cond : parseCondition(cond, pointer));

/** The generated source of a condition (for tests and debugging). */
export function conditionSource(cond: Condition | ConditionNode, pointer = "/when"): string {
  const e = new Emitter();
  return e.source(nodeExpr(e, tree(cond, pointer), new Set()));
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

/** Compiles a parsed condition, or parses one as written first (at `pointer` in its rule). */
export function compileCondition(cond: Condition | ConditionNode, pointer = "/when"): CompiledCondition {
  const node = tree(cond, pointer);
  const kinds = new Set<FactKind>();
  const e = new Emitter();
  // Emitting validates: unknown facts and operators throw here, not on first use.
  const expr = nodeExpr(e, node, kinds);
  return new Compiled(e, expr, kinds, dispatchTools(node));
}
