// columns (src/cli/format.ts): the one table layout of `acp rules list`, `acp presets`, `acp simulate`
// and `acp rules test`.
import { describe, expect, it } from "vitest";
import { columns } from "../../src/cli/format.js";

describe("columns", () => {
  const rows = [["rule", "n", "note"], ["a-long-rule", "12", "x"], ["b", "3", "longer note"]];

  it("pads every cell to its column's width, two spaces between columns, left-aligned by default", () => {
    expect(columns(rows)).toEqual(["rule         n   note       ", "a-long-rule  12  x          ", "b            3   longer note"]);
  });

  it("right-aligns all but the first column, and leaves a free-text last column unpadded", () => {
    expect(columns(rows, "right")).toEqual(["rule          n         note", "a-long-rule  12            x", "b             3  longer note"]);
    expect(columns(rows, "left", false)).toEqual(["rule         n   note", "a-long-rule  12  x", "b            3   longer note"]);
  });
});
