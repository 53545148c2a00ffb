// The one parsed condition tree: what the compiler, explain, the loader and lint read.
import { describe, expect, it } from "vitest";
import { allowedValues, conjuncts, fold, type LeafNode, leaves, parseCondition, parseOperator } from "../../src/lang/condition.js";
import { ruleAst } from "../../src/rules/ast.js";

const leaf = (fact: unknown, operator: unknown, value: unknown, path?: string) => ({ fact, operator, value, ...(path === undefined ? {} : { path }) }) as never;

describe("parseCondition", () => {
  it("parses all / any / not and leaves, each node with its pointer in the rule", () => {
    const tree = parseCondition({ all: [leaf("tool", "equal", "read"), { any: [leaf("ageTurns", "greaterThan", 2)] }, { not: leaf("protected", "equal", true) }] });
    expect(tree.kind).toBe("all");
    expect(leaves(tree).map((l) => [l.pointer, l.fact?.fact])).toEqual([
      ["/when/all/0", "tool"],
      ["/when/all/1/any/0", "ageTurns"],
      ["/when/all/2/not", "protected"],
    ]);
    expect(parseCondition(leaf("tool", "equal", "x"), "/then/by").pointer).toBe("/then/by");
  });

  it("parses a condition object once: every reader gets the same nodes", () => {
    const when = { all: [leaf("tool", "equal", "read")] };
    expect(parseCondition(when)).toBe(parseCondition(when));
    expect(ruleAst({ when, then: { action: "clear" } }).when).toBe(parseCondition(when, "/when"));
    // A copy of the rule (a preset override) shares the condition object, so the tree too.
    const rule = { when, then: { action: "clear" } };
    expect(ruleAst({ ...rule, then: { ...rule.then, show: ["x"] } }).when).toBe(ruleAst(rule).when);
  });

  it("splits not: decorators off the operator once, any number of them", () => {
    expect(parseOperator("in")).toMatchObject({ op: "in", negations: 0, def: { name: "in" } });
    expect(parseOperator("not:not:regex")).toMatchObject({ op: "regex", negations: 2, def: { name: "regex" } });
    expect(parseOperator("not:bogus")).toEqual({ op: "bogus", negations: 1, def: undefined });
    const l = parseCondition(leaf("tool", "not:in", ["a"])) as LeafNode;
    expect([l.operator, l.op, l.negations, l.opDef?.name]).toEqual(["not:in", "in", 1, "in"]);
  });

  it("reads fact references and paths, keeping what is wrong for the loader to report", () => {
    const l = parseCondition(leaf("input", "equal", { fact: "params", path: "$.x" }, "$.filePath")) as LeafNode;
    expect(l.fact).toMatchObject({ fact: "input", def: { kind: "static" }, path: { text: "$.filePath", segments: ["filePath"] } });
    expect(l.path).toBe(l.fact?.path);
    expect(l.ref).toMatchObject({ fact: "params", def: { kind: "config" }, path: { segments: ["x"] } });
    const bad = parseCondition(leaf("nope", 5, { fact: "x", path: "$..y" }, "a.b")) as LeafNode;
    expect(bad.fact).toEqual({ fact: "nope", def: undefined, path: { text: "a.b", error: expect.stringMatching(/unsupported path "a.b"/) } });
    expect(bad.operator).toBeUndefined();
    expect(bad.ref?.path?.error).toMatch(/unsupported path/);
  });

  it("never throws: what is not an object is an invalid node, skipped by the walkers", () => {
    for (const raw of [null, 5, "x", [1]]) expect(parseCondition(raw).kind).toBe("invalid");
    const tree = parseCondition({ all: [7, leaf("tool", "equal", "a")] });
    expect(leaves(tree).map((l) => l.pointer)).toEqual(["/when/all/1"]);
    expect(parseCondition({ all: "nope" })).toEqual({ kind: "all", pointer: "/when", children: [] });
  });
});

describe("visitors", () => {
  const tree = parseCondition({ all: [leaf("partType", "equal", "tool"), { all: [leaf("tool", "in", ["a", 1, "b"])] }, { any: [leaf("role", "equal", "user")] }, { not: leaf("x", "equal", 1) }] });

  it("conjuncts are the leaves that must all hold (through nested all only)", () => {
    expect(conjuncts(tree).map((l) => l.pointer)).toEqual(["/when/all/0", "/when/all/1/all/0"]);
    expect(leaves(tree)).toHaveLength(4);
  });

  it("allowedValues reads equal / in on literal strings, without a path", () => {
    const [partType, tool] = conjuncts(tree);
    expect(allowedValues(partType, "partType")).toEqual(new Set(["tool"]));
    expect(allowedValues(tool, "tool")).toEqual(new Set(["a", "b"]));
    expect(allowedValues(tool, "partType")).toBeUndefined();
    expect(allowedValues(parseCondition(leaf("tool", "equal", "a", "$.x")) as LeafNode, "tool")).toBeUndefined();
  });

  it("fold walks bottom-up with each node's children in order", () => {
    const text = fold<string>(tree, { leaf: (l) => l.fact?.fact ?? "?", all: (_, c) => `all(${c.join(",")})`, any: (_, c) => `any(${c.join(",")})`, not: (_, c) => `not(${c})` });
    expect(text).toBe("all(partType,all(tool),any(role),not(x))");
  });
});
