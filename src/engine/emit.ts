// A small emitter for generated predicates. The source holds only fixed tokens and index-named
// identifiers (f0 fact getters, o0 operator functions, v0 values, t0 locals): every value it
// reads comes in as a parameter, so no rule-provided text ever reaches the parser.
export type BindKind = "f" | "o" | "v";

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

  /** One new function per call: its call sites get their own feedback, so V8 can inline them. */
  build<F>(expr: string): F {
    return new Function(...this.names, this.source(expr))(...this.values) as F;
  }
}
