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

// The host's placeholder in the middle of a chain of views: the views older than it are still views
// of the same thing (commit-invariants.test.ts, seed 1404546898: an empty search result, its compacted
// re-run, and a third run that compact's stale-web-page cleared while the empty first one stayed in full).
describe("a view the host compacted between two others", () => {
  const search = (output: string, id: string) => ({ tool: "websearch", input: { query: "vitest config" }, output, id });
  function searches(first: string): Message[] {
    const h = [user("look it up"), assistant([search(first, "prt_w1")]), user("again"), assistant([search(bigText("old", 40), "prt_w2"), search(bigText("new", 13), "prt_w3")]), user("thanks"), assistant([], "done"), user("next")];
    toolPart(h, "prt_w2")!.state!.time = { start: 1, end: 2, compacted: 3 };
    return h;
  }
  const inFull = (m: Message[], id: string, original: string) => output(m, id) === original || output(m, id).startsWith(original + "\n[acp:");

  it("never leaves the first view in full while the newest one goes, and both go once the cache expired", () => {
    const h = searches("");
    const p = createPruner({ preset: "compact", config: { protectedTools: [], protectedFiles: [] } });
    const calls = replay(h.slice(0, -1), (m) => p.transform(m));
    for (const m of calls) if (toolPart(m, "prt_w3") && !inFull(m, "prt_w3", bigText("new", 13))) expect(inFull(m, "prt_w1", "")).toBe(false);
    const expired = structuredClone(h); // the next user message, two hours later
    p.transform(expired, { now: Date.now() + 2 * HOUR });
    expect(inFull(expired, "prt_w3", bigText("new", 13))).toBe(false); // stale-web-page clears the newest
    expect(inFull(expired, "prt_w1", "")).toBe(false); // and a note goes on the first beside it
  });

  it("a prune request for the newest view is refused while the first one is restored", () => {
    const h = searches(bigText("first", 40));
    const p = createPruner({ preset: "balanced", config: { commit: { minTokens: 0, breakEven: 0 }, idsFromTokens: 0, protectedTools: [], protectedFiles: [] } });
    const first = replay(h, (m) => p.transform(m)).at(-1)!;
    expect(inFull(first, "prt_w1", bigText("first", 40))).toBe(false); // superseded
    expect(p.restore(SID, "prt_w1", "user", h)).toBe(true);
    const w3 = Object.entries(p.state(SID).ids ?? {}).find(([, part]) => part === "prt_w3")?.[0];
    expect(w3).toBeDefined(); // the id the agent sees, so the refusal is about the restored view, not an unknown id
    const r = p.manual(SID, { action: "discard", targets: [w3!] }, h);
    expect(r.ok).toBe(false);
    expect(r.text).toMatch(/restored/);
    const m = structuredClone(h);
    p.transform(m);
    expect(inFull(m, "prt_w1", bigText("first", 40))).toBe(true);
    expect(inFull(m, "prt_w3", bigText("new", 13))).toBe(true);
  });
});

describe("a blocked older view behind the host's placeholder", () => {
  // w0 (restored) ← w1 (empty: only a forced note hides it) ← w2 (compacted) ← w3 (cleared by age).
  // The note forced on w1 beside w3 is blocked by the restored w0, so w3 must be checked again and
  // stay in full; the newer view to check is w3, past the host's placeholder, not w2.
  const search = (output: string, id: string) => ({ tool: "websearch", input: { query: "vitest config" }, output, id });
  it("keeps the newest view in full while the views older than the placeholder stay", () => {
    const h = [user("look it up"), assistant([search(bigText("first", 40), "prt_v0")]), user("again"), assistant([search("", "prt_v1"), search(bigText("old", 40), "prt_v2"), search(bigText("new", 13), "prt_v3")]), user("next")];
    toolPart(h, "prt_v2")!.state!.time = { start: 1, end: 2, compacted: 3 };
    const p = createPruner({ preset: "compact", config: { commit: { minTokens: 0, breakEven: 0 }, protectedTools: [], protectedFiles: [] } });
    const upTo = h.length - 1; // the second turn, before its user message "next"
    replay(h.slice(0, upTo), (m) => p.transform(m));
    expect(p.restore(SID, "prt_v0", "user", h.slice(0, upTo))).toBe(true);
    const m = structuredClone(h);
    p.transform(m);
    expect(output(m, "prt_v0")).toBe(bigText("first", 40)); // restored
    expect(output(m, "prt_v1")).toBe(""); // nothing may hide it beside w3 while w0 stays
    expect(output(m, "prt_v3")).toBe(bigText("new", 13)); // so the newest stays too
  });
});
