// The context_prune tool's declared arguments: what the host validates and shows the model.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { pruneTool } from "../../src/host/prune-tool.js";

const args = z.object(pruneTool({} as never, async () => []).args);

describe("context_prune arguments", () => {
  it("take ids, objects and the specification's tuples", () => {
    for (const targets of [["t1"], [{ id: "t1", summary: "s" }], [["t1"]], [["t1", "summary"]], [["start marker", "end marker", "[cut]"]]])
      expect(args.safeParse({ action: "discard", targets }).success, JSON.stringify(targets)).toBe(true);
    expect(args.safeParse({ action: "discard", targets: [[]] }).success).toBe(false);
    expect(args.safeParse({ action: "shred", targets: ["t1"] }).success).toBe(false);
  });
});
