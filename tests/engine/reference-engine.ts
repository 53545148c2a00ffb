// json-rules-engine as the reference semantics (rule-engine-design.md §10.2): one Engine per
// condition, registering exactly our operator table (OPERATORS, with validFact as the
// factValueValidator) and only the `not:` decorator, a pathResolver equal to our `$.a.b` getter,
// and the catalogue facts the condition reads as runtime facts, each computed by its own
// get(node, ctx) (json-rules-engine never reads the others; passing all 27 only slows each run).
import { Engine, Operator } from "json-rules-engine";
import type { PartNode } from "../../src/graph/graph.js";
import { getPath, parsePath } from "../../src/lang/path.js";
import { FACTS, type FactContext } from "../../src/engine/facts.js";
import { OPERATORS } from "../../src/lang/operators.js";
import type { Condition, Leaf } from "../../src/rules/types.js";

const JRE_DECORATORS = ["someFact", "someValue", "everyFact", "everyValue", "swap"];

export interface Reference {
  /** json-rules-engine's verdict on `cond` for this part; "throws" when the run rejects. */
  match(node: PartNode, ctx: FactContext): Promise<boolean | "throws">;
}

export function referenceFor(cond: Condition): Reference {
  const engine = new Engine([], { allowUndefinedFacts: true, pathResolver: (value: unknown, path: string) => getPath(value, parsePath(path)) });
  for (const op of OPERATORS) engine.addOperator(new Operator(op.name, op.evaluate, op.validFact));
  for (const d of JRE_DECORATORS) engine.removeOperatorDecorator(d);
  // json-rules-engine needs all/any/not at the root; a bare leaf means the same as {all: [leaf]}.
  const root = "all" in cond || "any" in cond || "not" in cond ? cond : { all: [cond] };
  engine.addRule({ conditions: root as any, event: { type: "match" } });
  const read = FACTS.filter((f) => factsRead(cond).has(f.name));
  return {
    async match(node, ctx) {
      const facts: Record<string, unknown> = {};
      for (const f of read) facts[f.name] = f.get(node, ctx);
      try {
        const { events } = await engine.run(facts);
        return events.length === 1;
      } catch {
        return "throws";
      }
    },
  };
}

/** Names of the facts a condition reads (leaf facts and `value: {fact}` references). */
export function factsRead(cond: Condition, out = new Set<string>()): Set<string> {
  if ("all" in cond) cond.all.forEach((c) => factsRead(c, out));
  else if ("any" in cond) cond.any.forEach((c) => factsRead(c, out));
  else if ("not" in cond) factsRead(cond.not, out);
  else {
    const leaf = cond as Leaf;
    out.add(leaf.fact);
    const v = leaf.value as any;
    if (v && typeof v === "object" && "fact" in v) out.add(v.fact);
  }
  return out;
}

const exactOfObject = new WeakMap<object, string>();

/** Exact text of a value, telling undefined, NaN and -0 apart (cache keys for verdicts). Objects
 * are memoised by identity: fact objects (inputs, params) are not mutated while a test reads them. */
export function exact(v: unknown): string {
  if (v !== null && typeof v === "object") {
    let s = exactOfObject.get(v);
    if (s === undefined) exactOfObject.set(v, (s = exactText(v)));
    return s;
  }
  return exactText(v);
}

function exactText(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (x === undefined ? "\u0000u" : typeof x === "number" && !Number.isFinite(x) ? `\u0000${x}` : Object.is(x, -0) ? "\u0000-0" : x)) ?? "\u0000u";
}
