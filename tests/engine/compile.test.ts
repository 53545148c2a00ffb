// The condition code generator on the semantics that are easy to get wrong: each case states the
// expected verdict and is also run through json-rules-engine (the reference semantics), so the
// generated code, the expectation and the reference must all agree.
import { describe, expect, it } from "vitest";
import { CompileError, compileCondition, conditionSource } from "../../src/engine/compile.js";
import type { FactContext } from "../../src/engine/facts.js";
import type { PartNode } from "../../src/graph/graph.js";
import type { Condition } from "../../src/rules/types.js";
import { referenceFor } from "./reference-engine.js";

function node(part: Record<string, unknown> = {}, extra: Partial<PartNode> = {}): PartNode {
  const p = { id: "p1", type: "tool", tool: "read", state: { status: "completed", input: { filePath: "src/a.ts", todos: [{ status: "pending" }], deep: { a: null, s: "str" } }, output: "x" }, ...part };
  return { index: 0, msgIndex: 0, partIndex: 0, part: p, message: { info: { role: "assistant" }, parts: [] }, turn: 1, callIndex: 0, outputChars: 100, ageTurns: 2, ageCalls: 3, toolTokensNewer: 0, sig: "", ...extra } as unknown as PartNode;
}

function ctx(over: Partial<FactContext> = {}): FactContext {
  return {
    config: { protectedTools: ["task", "skill"], protectedFiles: ["**/.env"] },
    params: { turns: 2, minChars: 50 },
    isProtected: () => false,
    supersededRule: () => undefined,
    idleTurns: () => 0,
    idleCalls: () => 0,
    idleWorkCalls: () => 0,
    userNamedTurns: () => Infinity,
    useTurns: () => 1,
    changeTurns: () => 0,
    decidedRule: () => undefined,
    ...over,
  };
}

interface Case {
  name: string;
  cond: Condition;
  expected: boolean;
  node?: PartNode;
  ctx?: FactContext;
}

const leaf = (fact: string, operator: string, value: unknown, path?: string): Condition => ({ fact, operator, value, ...(path ? { path } : {}) });
const tool = (name: string) => leaf("tool", "equal", name);

// Strings a careless generator would break or execute if it wrote them into the source.
const NASTY = [`a"b`, `a'b`, "a`b${1}", "back\\slash\\", "*/ close", "/* open", "line\nbreak\r\u2028\u2029", "</script>", "'); throw 1; ('", "\\u0041", ""];

const CASES: Case[] = [
  // all / any / not
  { name: "empty all is true", cond: { all: [] }, expected: true },
  { name: "empty any is true (json-rules-engine)", cond: { any: [] }, expected: true },
  { name: "not of empty any is false", cond: { not: { any: [] } }, expected: false },
  { name: "all with a false leaf", cond: { all: [tool("read"), tool("bash")] }, expected: false },
  { name: "any with one true leaf", cond: { any: [tool("bash"), tool("read")] }, expected: true },
  { name: "nested not/any/all", cond: { all: [{ not: { any: [tool("bash"), { all: [tool("read"), leaf("status", "equal", "error")] }] } }, { any: [] }] }, expected: true },
  { name: "double not", cond: { not: { not: tool("read") } }, expected: true },
  { name: "bare leaf", cond: tool("read"), expected: true },
  // not: decorator and validators
  { name: "not:equal", cond: leaf("tool", "not:equal", "read"), expected: false },
  { name: "validator rejects a non-number (lessThan)", cond: leaf("tool", "lessThan", 5), expected: false },
  { name: "not: negates the validator too", cond: leaf("tool", "not:lessThan", 5), expected: true },
  { name: "contains on a non-array is false, not a throw", cond: leaf("input", "contains", "x"), expected: false },
  { name: "not:contains on a non-array is true", cond: leaf("input", "not:contains", "x"), expected: true },
  { name: "contains on an array fact", cond: leaf("protectedTools", "contains", "skill"), expected: true },
  { name: "doesNotContain on an array fact", cond: leaf("protectedTools", "doesNotContain", "skill"), expected: false },
  { name: "glob on undefined is false", cond: leaf("fileName", "glob", "**"), expected: false },
  { name: "not:glob on undefined is true", cond: leaf("fileName", "not:glob", "**"), expected: true },
  { name: "glob on a path", cond: leaf("input", "glob", "src/**", "$.filePath"), expected: true },
  { name: "glob with a list", cond: leaf("input", "glob", ["*.md", "**/*.ts"], "$.filePath"), expected: true },
  { name: "regex on a string", cond: leaf("input", "regex", "\\.ts$", "$.filePath"), expected: true },
  { name: "regex on a number is false", cond: leaf("outputChars", "regex", "1"), expected: false },
  { name: "not:not:regex", cond: leaf("input", "not:not:regex", "^src/", "$.filePath"), expected: true },
  // numbers, strings that look like numbers, null and undefined
  { name: "number-like string passes the validator", cond: leaf("text", "greaterThan", 5), node: node({ type: "text", text: "10" }), expected: true },
  { name: "non-numeric string fails the validator", cond: leaf("text", "lessThan", 5), node: node({ type: "text", text: "abc" }), expected: false },
  { name: "empty string fails the validator", cond: leaf("text", "lessThan", 5), node: node({ type: "text", text: "" }), expected: false },
  { name: "null fails the validator", cond: leaf("text", "lessThanInclusive", 5), node: node({ type: "text", text: null }), expected: false },
  { name: "undefined fails the validator", cond: leaf("text", "greaterThanInclusive", 0), node: node({ type: "text" }), expected: false },
  { name: "string vs number is not equal", cond: leaf("text", "equal", 5), node: node({ type: "text", text: "5" }), expected: false },
  { name: "null equals null", cond: leaf("text", "equal", null), node: node({ type: "text", text: null }), expected: true },
  { name: "NaN fact passes no comparison", cond: leaf("outputChars", "greaterThan", -1), node: node({}, { outputChars: NaN }), expected: false },
  { name: "NaN is not in [NaN]", cond: leaf("outputChars", "in", [NaN]), node: node({}, { outputChars: NaN }), expected: false },
  { name: "in a literal array", cond: leaf("tool", "in", ["bash", "read"]), expected: true },
  { name: "notIn a literal array", cond: leaf("tool", "notIn", ["bash", "read"]), expected: false },
  { name: "in a non-array literal is false", cond: leaf("tool", "in", "read"), expected: false },
  { name: "notIn a non-array literal is false", cond: leaf("tool", "notIn", "bash"), expected: false },
  { name: "undefined is in [null]? no", cond: leaf("fileMime", "in", [null]), expected: false },
  { name: "equal to an object literal (identity) is false", cond: leaf("input", "equal", { filePath: "src/a.ts" }), expected: false },
  // paths
  { name: "path into an object", cond: leaf("input", "equal", "src/a.ts", "$.filePath"), expected: true },
  { name: "path with an index", cond: leaf("input", "equal", "pending", "$.todos[0].status"), expected: true },
  { name: "path through null gives undefined", cond: leaf("input", "equal", { fact: "fileMime" }, "$.deep.a.b"), expected: true },
  { name: "path through a string gives undefined", cond: leaf("input", "equal", { fact: "fileMime" }, "$.deep.s.length"), expected: true },
  { name: "missing key gives undefined", cond: leaf("input", "equal", { fact: "fileMime" }, "$.nope.deeper"), expected: true },
  { name: "path on a non-object fact returns the value", cond: leaf("tool", "equal", "read", "$.length"), expected: true },
  { name: "path on a number param object", cond: leaf("params", "equal", 7, "$.turns"), ctx: ctx({ params: 7 as never }), expected: true },
  { name: "path on a null param object", cond: leaf("params", "equal", null, "$.turns"), ctx: ctx({ params: null as never }), expected: true },
  { name: "path on an array fact", cond: leaf("protectedTools", "equal", "skill", "$[1]"), expected: true },
  // fact against fact
  { name: "fact vs fact with a path", cond: leaf("ageTurns", "greaterThanInclusive", { fact: "params", path: "$.turns" }), expected: true },
  { name: "fact vs fact, validator on the left", cond: leaf("tool", "greaterThan", { fact: "params", path: "$.turns" }), expected: false },
  { name: "in a fact list", cond: leaf("tool", "in", { fact: "protectedTools" }), node: node({ tool: "task" }), expected: true },
  { name: "glob against a fact list", cond: leaf("input", "glob", { fact: "protectedFiles" }, "$.filePath"), node: node({ state: { status: "completed", input: { filePath: "/r/.env" } } }), expected: true },
  { name: "both sides with paths", cond: leaf("params", "lessThan", { fact: "params", path: "$.minChars" }, "$.turns"), expected: true },
  { name: "fact vs a missing path", cond: leaf("ageTurns", "equal", { fact: "params", path: "$.none" }), expected: false },
  // values a generator must never serialise
  ...NASTY.map((s, i): Case => ({ name: `nasty value #${i} equal`, cond: leaf("text", "equal", s), node: node({ type: "text", text: s }), expected: true })),
  ...NASTY.map((s, i): Case => ({ name: `nasty value #${i} in`, cond: leaf("text", "in", ["x", s]), node: node({ type: "text", text: s }), expected: true })),
  { name: "nasty value, different text", cond: leaf("text", "equal", NASTY[0]), node: node({ type: "text", text: "a\\\"b" }), expected: false },
  { name: "nasty regex", cond: leaf("text", "regex", "^a\"b\\\\c'"), node: node({ type: "text", text: "a\"b\\c'" }), expected: true },
];

describe("compiled conditions", () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const n = c.node ?? node();
      const x = c.ctx ?? ctx();
      expect(compileCondition(c.cond).test(n, x)).toBe(c.expected);
      expect(await referenceFor(c.cond).match(n, x)).toBe(c.expected);
    });
  }

  it("generated source holds only fixed tokens and index-named identifiers", () => {
    const cond: Condition = { all: CASES.map((c) => c.cond) };
    const src = conditionSource(cond);
    for (const s of NASTY.filter((s) => s.length > 2)) expect(src).not.toContain(s);
    const strings = src.match(/"[^"]*"/g) ?? [];
    expect(new Set(strings)).toEqual(new Set(['"use strict"', '"object"']));
    const words = new Set(src.replace(/"[^"]*"/g, "").match(/[A-Za-z_$][\w$]*/g));
    const allowed = /^(n|c|[fovt]\d+|return|function|test|let|typeof|null|void|true|indexOf)$/;
    expect([...words].filter((w) => !allowed.test(w))).toEqual([]);
    expect(compileCondition(cond).test(node(), ctx())).toBe(false);
  });

  it("conditions of one shape share generated code, never values or getters", () => {
    const read = compileCondition(tool("read")).test;
    const bash = compileCondition(tool("bash")).test;
    const role = compileCondition(leaf("role", "equal", "read")).test;
    expect(read).not.toBe(bash);
    expect(read.toString()).toBe(bash.toString());
    for (let i = 0; i < 3; i++) {
      expect(read(node(), ctx())).toBe(true);
      expect(bash(node(), ctx())).toBe(false);
      expect(bash(node({ tool: "bash" }), ctx())).toBe(true);
      expect(role(node(), ctx())).toBe(false); // same source as `read`, another getter
    }
  });

  it("collects kinds and dispatch tools", () => {
    const c = compileCondition({ all: [tool("read"), leaf("ageTurns", "greaterThan", { fact: "params", path: "$.turns" }), { not: leaf("protected", "equal", true) }] });
    expect([...c.kinds].sort()).toEqual(["config", "dynamic", "phase", "static"]);
    expect(c.tools).toEqual(new Set(["read"]));
    expect(compileCondition(leaf("tool", "in", ["a", 1, "b"])).tools).toEqual(new Set(["a", "b"]));
    expect(compileCondition({ any: [tool("read")] }).tools).toBeUndefined();
  });
});

describe("compile errors", () => {
  const pointerOf = (cond: Condition, pointer?: string) => {
    try {
      compileCondition(cond, pointer);
    } catch (e) {
      expect(e).toBeInstanceOf(CompileError);
      return [(e as CompileError).pointer, (e as Error).message];
    }
    throw new Error("compiled");
  };

  it("unknown fact, with the leaf's pointer", () => {
    expect(pointerOf({ all: [tool("read"), leaf("nope", "equal", 1)] })).toEqual(["/when/all/1/fact", 'unknown fact "nope"']);
  });
  it("unknown operator, checked before the fact", () => {
    expect(pointerOf({ any: [leaf("nope", "bogus", 1)] })).toEqual(["/when/any/0/operator", 'unknown operator "bogus"']);
    expect(pointerOf({ not: leaf("tool", "not:bogus", 1) }, "/then/by")).toEqual(["/then/by/not/operator", 'unknown operator "not:bogus"']);
  });
  it("unknown fact in a value reference", () => {
    expect(pointerOf({ all: [{ not: leaf("tool", "equal", { fact: "nope" }) }] })).toEqual(["/when/all/0/not/value", 'unknown fact "nope"']);
  });
  it("the first bad leaf in order is reported", () => {
    expect(pointerOf({ all: [{ any: [tool("a"), leaf("x", "equal", 1)] }, leaf("tool", "bad", 1)] })[0]).toBe("/when/all/0/any/1/fact");
  });
  it("a bad path is a plain error", () => {
    expect(() => compileCondition(leaf("input", "equal", 1, "$..a"))).toThrow(/unsupported path/);
  });
});
