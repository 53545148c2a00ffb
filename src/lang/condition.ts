// Conditions (json-rules-engine's TopLevelCondition: all / any / not / leaf) parsed once into one
// typed tree that the compiler, explain, the loader's checks and lint's advice all read. Parsing
// never throws: a rule file may hold anything, so what cannot be read is kept as an `invalid` node
// or an undefined field, and the loader reports it; the compiler refuses it.
import { factDecl, type FactDecl } from "./facts.js";
import { type OperatorDef, operatorByName } from "./operators.js";
import { parsePath } from "./path.js";

/** A member path as written (`$.filePath`), parsed. */
export interface PathRead {
  text: string;
  /** Undefined when the text is not a path. */
  segments?: string[];
  /** Why the text is not a path. */
  error?: string;
}

/** A fact read: the fact of a leaf, or a value `{fact, path?}` (json-rules-engine's fact reference). */
export interface FactRead {
  fact: string;
  /** Undefined when the fact is not in the catalogue. */
  def?: FactDecl;
  path?: PathRead;
}

export interface LeafNode {
  kind: "leaf";
  /** JSON pointer of the leaf inside the rule, e.g. /when/all/0. */
  pointer: string;
  /** The leaf as written. */
  raw: Record<string, unknown>;
  /** Undefined when `fact` is not a string. */
  fact?: FactRead;
  /** The leaf's `path` (when a string; the same object as `fact.path`). */
  path?: PathRead;
  /** As written, `not:` decorators included; undefined when not a string. */
  operator?: string;
  /** The operator without its `not:` decorators, and how many there were. */
  op?: string;
  negations: number;
  /** The table entry behind `op` (undefined when unknown). */
  opDef?: OperatorDef;
  /** The value as written (the same object, so matchers keyed by it are shared). */
  value: unknown;
  /** Set when the value is a fact reference. */
  ref?: FactRead;
}

export interface AllNode {
  kind: "all";
  pointer: string;
  children: ConditionNode[];
}
export interface AnyNode {
  kind: "any";
  pointer: string;
  children: ConditionNode[];
}
export interface NotNode {
  kind: "not";
  pointer: string;
  child: ConditionNode;
}
/** Not an object: nothing in it can be read (the schema says what it should be). */
export interface InvalidNode {
  kind: "invalid";
  pointer: string;
  raw: unknown;
}
export type ConditionNode = LeafNode | AllNode | AnyNode | NotNode | InvalidNode;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** A `value` of the form {fact, path?} reads another fact. */
export const isFactRef = (v: unknown): v is { fact: string; path?: unknown } => isObject(v) && typeof v.fact === "string";

function pathRead(text: string): PathRead {
  try {
    return { text, segments: parsePath(text) };
  } catch (e) {
    return { text, error: (e as Error).message };
  }
}

const factRead = (fact: string, path: PathRead | undefined): FactRead => ({ fact, def: factDecl.get(fact), path });

/** `not:not:in` → in, two negations (json-rules-engine's decorator, any number of times). */
export function parseOperator(name: string): { op: string; negations: number; def?: OperatorDef } {
  const op = name.replace(/^(not:)+/, "");
  return { op, negations: (name.length - op.length) / 4, def: operatorByName(op) };
}

function parseLeaf(raw: Record<string, unknown>, pointer: string): LeafNode {
  const operator = typeof raw.operator === "string" ? raw.operator : undefined;
  const parsed = operator === undefined ? undefined : parseOperator(operator);
  const path = typeof raw.path === "string" ? pathRead(raw.path) : undefined;
  return {
    kind: "leaf",
    pointer,
    raw,
    fact: typeof raw.fact === "string" ? factRead(raw.fact, path) : undefined,
    path,
    operator,
    op: parsed?.op,
    negations: parsed?.negations ?? 0,
    opDef: parsed?.def,
    value: raw.value,
    ref: isFactRef(raw.value) ? factRead(raw.value.fact, raw.value.path === undefined ? undefined : pathRead(String(raw.value.path))) : undefined,
  };
}

function parse(raw: unknown, pointer: string): ConditionNode {
  if (!isObject(raw)) return { kind: "invalid", pointer, raw };
  const list = (v: unknown, at: string) => (Array.isArray(v) ? v.map((c, i) => parseCondition(c, `${pointer}/${at}/${i}`)) : []);
  if ("all" in raw) return { kind: "all", pointer, children: list(raw.all, "all") };
  if ("any" in raw) return { kind: "any", pointer, children: list(raw.any, "any") };
  if ("not" in raw) return { kind: "not", pointer, child: parseCondition(raw.not, `${pointer}/not`) };
  return parseLeaf(raw, pointer);
}

// One tree per condition object and pointer: the loader parses a rule's conditions when it checks
// them, and the compiler, explain and lint get the same nodes (copies of a rule share the objects).
const parsed = new WeakMap<object, Map<string, ConditionNode>>();

/** The tree of a condition as written; `pointer` locates it in its rule (/when, /then/by). */
export function parseCondition(raw: unknown, pointer = "/when"): ConditionNode {
  if (raw === null || typeof raw !== "object") return parse(raw, pointer);
  let byPointer = parsed.get(raw);
  if (!byPointer) parsed.set(raw, (byPointer = new Map()));
  let node = byPointer.get(pointer);
  if (!node) byPointer.set(pointer, (node = parse(raw, pointer)));
  return node;
}

const KINDS = new Set(["leaf", "all", "any", "not", "invalid"]);
/** A parsed node rather than a condition as written (the file format has no `kind` and `pointer`; the schema refuses them). */
export const isConditionNode = (c: unknown): c is ConditionNode => isObject(c) && typeof c.pointer === "string" && KINDS.has(c.kind as string);

/** One visitor: folds a tree bottom-up (invalid nodes fold like an empty `all` unless given). */
export interface ConditionFold<T> {
  leaf(node: LeafNode): T;
  all(node: AllNode, children: T[]): T;
  any(node: AnyNode, children: T[]): T;
  not(node: NotNode, child: T): T;
  invalid?(node: InvalidNode): T;
}

export function fold<T>(node: ConditionNode, f: ConditionFold<T>): T {
  switch (node.kind) {
    case "leaf":
      return f.leaf(node);
    case "all":
      return f.all(node, node.children.map((c) => fold(c, f)));
    case "any":
      return f.any(node, node.children.map((c) => fold(c, f)));
    case "not":
      return f.not(node, fold(node.child, f));
    case "invalid":
      return f.invalid ? f.invalid(node) : f.all({ kind: "all", pointer: node.pointer, children: [] }, []);
  }
}

/** Every leaf, in the order written. */
export function leaves(node: ConditionNode): LeafNode[] {
  return fold<LeafNode[]>(node, { leaf: (l) => [l], all: (_, c) => c.flat(), any: (_, c) => c.flat(), not: (_, c) => c, invalid: () => [] });
}

/** The leaves that must all hold for the condition to hold (through nested `all` only). */
export function conjuncts(node: ConditionNode): LeafNode[] {
  return fold<LeafNode[]>(node, { leaf: (l) => [l], all: (_, c) => c.flat(), any: () => [], not: () => [], invalid: () => [] });
}

/** The literal values a leaf allows for `fact` (`equal` a string, `in` a list; strings only), or undefined for no limit. */
export function allowedValues(leaf: LeafNode, fact: string): Set<string> | undefined {
  if (leaf.fact?.fact !== fact || leaf.path?.text) return undefined;
  if (leaf.operator === "equal" && typeof leaf.value === "string") return new Set([leaf.value]);
  if (leaf.operator === "in" && Array.isArray(leaf.value)) return new Set(leaf.value.filter((x): x is string => typeof x === "string"));
  return undefined;
}
