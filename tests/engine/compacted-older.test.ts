// An older view the host compacted itself (state.time.compacted: the provider gets the host's
// placeholder, not its content) is not "an older view in full": it must not keep a newer view of the
// same thing in full. Before, commit treated it as one (compacted-parts protects it, so no note could
// be forced on it) and the superseded middle read stayed in full on every request.
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message } from "../../src/graph/types.js";
import { OPENCODE } from "../../src/host/profile.js";
import { assistant, bigText, replay, SID, toolPart, user } from "../helpers/session.js";

const HOUR = 3_600_000;
const read = (v: string, id: string) => assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText(v, 120), id }]);

function session(compactFirst: boolean): Message[] {
  const h = [user("t1"), read("calc v1", "prt_r1"), assistant([], "done"), user("t2"), read("calc v2", "prt_r2"), assistant([], "done"), user("t3"), read("calc v3", "prt_r3"), assistant([], "done"), user("t4")];
  if (compactFirst) toolPart(h, "prt_r1")!.state!.time = { start: 1, end: 2, compacted: 3 };
  return h;
}

/** The request after the whole session, with the cache expired (every pending change goes). */
function lastRequest(h: Message[]): Message[] {
  const p = createPruner({ config: { commit: { minTokens: 0 } } });
  replay(h, (m) => p.transform(m));
  const m = structuredClone(h);
  p.transform(m, { now: Date.now() + 2 * HOUR });
  return m;
}

const output = (m: Message[], id: string) => String(toolPart(m, id)?.state?.output);

describe("an older view the host compacted", () => {
  it("does not keep the superseded middle view in full", () => {
    const m = lastRequest(session(true));
    expect(output(m, "prt_r3")).toBe(bigText("calc v3", 120)); // the newest read is what the agent works from
    expect(output(m, "prt_r2")).not.toContain("calc v2 line 5"); // superseded: not sent in full
    // the compacted one is the host's own placeholder (the stored output is left as it is)
    expect(output(m, "prt_r1")).toBe(bigText("calc v1", 120));
  });

  it("the same session without the compaction supersedes both older views (the reference)", () => {
    const m = lastRequest(session(false));
    expect(output(m, "prt_r2")).not.toContain("calc v2 line 5");
    expect(output(m, "prt_r1")).not.toContain("calc v1 line 5");
  });
});
