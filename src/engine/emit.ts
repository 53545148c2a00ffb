// A small emitter for generated predicates. The source holds only fixed tokens and index-named
// identifiers (f0 fact getters, o0 operator functions, v0 values, t0 locals): every value it
// reads comes in as a parameter, so no rule-provided text ever reaches the parser.
export type BindKind = "f" | "o" | "v";

type Factory = (...args: unknown[]) => unknown;

// Factories by source and bound functions: conditions of one shape over the same getters and
// operators (across rules, rule-set compilations and pruners) share one function, so its
// feedback and optimised code are reused and its call sites still have one target each.
// Values are arguments, not part of the key.
const factories = new Map<string, Factory>();
// Ids of the bound functions (fact getters and operator functions: a fixed, small set).
const fnIds = new Map<unknown, number>();

export class Emitter {
  private readonly names: string[] = [];
  private readonly values: unknown[] = [];
  private readonly counts: Record<BindKind, number> = { f: 0, o: 0, v: 0 };
  /** Functions are bound once each; values stay separate (an identity map would buy nothing). */
  private readonly fnNames = new Map<unknown, string>();
  private temps = 0;

  /** The identifier under which the generated code reads `value`. */
  bind(kind: BindKind, value: unknown): string {
    if (kind !== "v") {
      const known = this.fnNames.get(value);
      if (known) return known;
    }
    const name = `${kind}${this.counts[kind]++}`;
    this.names.push(name);
    this.values.push(value);
    if (kind !== "v") this.fnNames.set(value, name);
    return name;
  }

  /** A fresh local of the generated function. */
  temp(): string {
    return `t${this.temps++}`;
  }

  /** Source of `function test(n, c) { return expr }` inside its parameter scope. */
  source(expr: string): string {
    const locals = this.temps > 0 ? `let ${Array.from({ length: this.temps }, (_, i) => `t${i}`).join(", ")};\n` : "";
    return `"use strict";\nreturn function test(n, c) {\n${locals}return ${expr};\n};`;
  }

  /** The generated function, its parameters bound to this emitter's values. */
  build<F>(expr: string): F {
    const body = this.source(expr);
    const fns = this.values.map((v, i) => (this.names[i][0] === "v" ? "" : idOf(v)));
    const key = `${this.names.join(",")}|${fns.join(",")}|${body}`;
    let factory = factories.get(key);
    if (!factory) {
      factory = new Function(...this.names, body) as Factory;
      if (factories.size >= 2000) factories.clear();
      factories.set(key, factory);
    }
    return factory(...this.values) as F;
  }
}

function idOf(fn: unknown): number {
  let id = fnIds.get(fn);
  if (id === undefined) fnIds.set(fn, (id = fnIds.size));
  return id;
}
