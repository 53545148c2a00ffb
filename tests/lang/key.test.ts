// Key templates parsed once: the loader reports their errors, the engine and lint read the segments.
import { describe, expect, it } from "vitest";
import { compileKey, KeyError } from "../../src/engine/key.js";
import { parseKey } from "../../src/lang/key.js";

describe("parseKey", () => {
  it("splits text and placeholders: fact, path, filters, optional", () => {
    const k = parseKey("file:{input.filePath|path}@{tool?}");
    expect(k.errors).toEqual([]);
    expect(k.segments).toMatchObject(["file:", { source: "{input.filePath|path}", fact: "input", path: ["filePath"], filters: ["path"], optional: false }, "@", { fact: "tool", optional: true }]);
    expect(parseKey("file:{input.filePath|path}@{tool?}")).toBe(k);
  });

  it("lists every problem, first first; compileKey throws the first", () => {
    const k = parseKey("{nope}{ageTurns}{tool|bogus}");
    expect(k.errors).toEqual([
      'key "{nope}{ageTurns}{tool|bogus}": unknown fact "nope"',
      'key "{nope}{ageTurns}{tool|bogus}": fact "ageTurns" changes over time; keys must use static facts',
      'key "{nope}{ageTurns}{tool|bogus}": unknown filter "bogus" (known: path, squash, head, lower, json)',
    ]);
    expect(() => compileKey("{nope}{ageTurns}")).toThrow(KeyError);
    expect(() => compileKey("{nope}{ageTurns}")).toThrow('unknown fact "nope"');
  });
});
