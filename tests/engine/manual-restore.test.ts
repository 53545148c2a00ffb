// Restore (/acp restore, context_prune restore) beyond a committed prune: a part whose prune only
// waits for the commit policy is pinned, so the prune never lands (D2 of the live audit), and a
// restored older view brings its pruned newer views of the same thing back with it, so an outdated
// view is never sent in full while the newer ones are hidden (D3: never stale over fresh).
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message } from "../../src/graph/types.js";
import { assistant, bigText, replay, SID, toolPart, user, workTurns } from "../helpers/session.js";

const HOUR = 3_600_000;

/** src/calc.ts read in turns 1, 2 and 3, then ten turns of other work (two checks each): r1 and r2 superseded, r3 cleared by age (balanced's stale-read). */
function reads(): Message[] {
  const read = (v: string, id: string) => assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText(v, 120), id }]);
  const h = [user("t1"), read("calc v1", "prt_r1"), assistant([], "done"), user("t2"), read("calc v2", "prt_r2"), assistant([], "done"), user("t3"), read("calc v3", "prt_r3"), assistant([], "done")];
  h.push(...workTurns(4, 10));
  return h;
}

const outputOf = (ms: Message[], partId: string) => String(toolPart(ms, partId)?.state?.output);

function pruned(config: Record<string, unknown> = {}) {
  const p = createPruner({ config: { commit: { minTokens: 0 }, tool: false, ...config } });
  const h = reads();
  const original = structuredClone(h);
  replay(h, (m) => p.transform(m));
  const decided = (id: string) => p.explain(SID).find((e) => e.partId === id && e.slot === "output")?.rule;
  // the session as the audit found it: the turn-1 and turn-2 reads superseded, the newest cleared by age
  expect([decided("prt_r1"), decided("prt_r2"), decided("prt_r3")]).toEqual(["identical-call", "identical-call", "stale-read"]);
  return { p, h, original };
}

describe("restoring an older view restores its pruned newer views (never stale over fresh)", () => {
  it("the turn-1 read comes back with the turn-2 read and the newest read an age rule cleared, all exact, and they stay", () => {
    const { p, h, original } = pruned();
    expect(p.restore(SID, "prt_r1", "user", h)).toBe(true);
    for (let k = 0; k < 3; k++) {
      // this call and later ones: every view of calc.ts is sent exactly as it was read
      const next = structuredClone(h);
      p.transform(next, k === 2 ? { now: Date.now() + 2 * HOUR } : {});
      for (const [id, v] of [["prt_r1", "calc v1"], ["prt_r2", "calc v2"], ["prt_r3", "calc v3"]]) expect(outputOf(next, id)).toBe(bigText(v, 120));
    }
    // pinned until the file is viewed again after the restore's newest message (pins.ts)
    const at = h[h.length - 1].info.id;
    expect(p.state(SID).pinned).toEqual({ prt_r1: at, prt_r2: at, prt_r3: at });
    // only the part the user restored counts as regret: the newer views came back because it did
    expect(Object.values(p.state(SID).regret ?? {})).toEqual([{ rule: "identical-call", kind: "user", part: "prt_r1" }]);
    expect(h).toEqual(original); // the stored session is never changed
  });

  it("the report names the newer views restored with it, nearest first", () => {
    const { p, h } = pruned();
    expect(p.restoreReport(SID, "prt_r1", "user", h)).toEqual({ restored: true, waiting: [], newer: ["prt_r2", "prt_r3"], wasPinned: false });
  });

  it("a middle view brings only the views newer than itself; older views stay pruned", () => {
    const { p, h } = pruned();
    expect(p.restore(SID, "prt_r2")).toBe(true);
    const next = structuredClone(h);
    p.transform(next);
    expect(outputOf(next, "prt_r1")).toMatch(/^read\(.*→ /); // the stale view stays a breadcrumb
    expect(outputOf(next, "prt_r2")).toBe(bigText("calc v2", 120));
    expect(outputOf(next, "prt_r3")).toBe(bigText("calc v3", 120));
  });

  it("the newest view alone comes back alone", () => {
    const { p, h } = pruned();
    expect(p.restoreReport(SID, "prt_r3", "user", h).newer).toEqual([]);
    const next = structuredClone(h);
    p.transform(next);
    expect(outputOf(next, "prt_r1")).toMatch(/→ /);
    expect(outputOf(next, "prt_r2")).toMatch(/→ /);
    expect(outputOf(next, "prt_r3")).toBe(bigText("calc v3", 120));
  });

  it("a new process (opencode run --command acp) finds the newer views from the history", () => {
    const dir = `${process.env.TMPDIR ?? "/tmp"}/acp-restore-${process.pid}-${Date.now()}`;
    const config = { commit: { minTokens: 0 }, tool: false };
    const live = createPruner({ config, stateDir: dir });
    const h = reads();
    replay(h, (m) => live.transform(m));
    const fresh = createPruner({ config, stateDir: dir });
    expect(fresh.restoreReport(SID, "prt_r1", "user", h).newer).toEqual(["prt_r2", "prt_r3"]);
    const next = structuredClone(h);
    createPruner({ config, stateDir: dir }).transform(next);
    for (const [id, v] of [["prt_r1", "calc v1"], ["prt_r2", "calc v2"], ["prt_r3", "calc v3"]]) expect(outputOf(next, id)).toBe(bigText(v, 120));
  });

  it("the model's context_prune restore does the same, and its answer names the newer views by their ids", () => {
    const { p, h } = pruned({ tool: true, idsFromTokens: 0 });
    const idOf = (partId: string) => Object.entries(p.state(SID).ids ?? {}).find(([, v]) => v === partId)![0];
    const [r1, r2, r3] = [idOf("prt_r1"), idOf("prt_r2"), idOf("prt_r3")];
    expect(p.manual(SID, { action: "restore", targets: [r1] }, h)).toEqual({
      ok: true,
      text: `${r1}: restored; the full output is back from the next step; its newer views of the same thing ${r2}, ${r3} were pruned and are restored with it (an older view is never shown in full while a newer one is hidden)`,
    });
    const next = structuredClone(h);
    p.transform(next);
    expect(outputOf(next, "prt_r1")).toBe(`${bigText("calc v1", 120)}\n[acp:${r1}]`);
    expect(outputOf(next, "prt_r2")).toBe(`${bigText("calc v2", 120)}\n[acp:${r2}]`);
    expect(outputOf(next, "prt_r3")).toBe(`${bigText("calc v3", 120)}\n[acp:${r3}]`);
  });
});

describe("restoring a part whose prune waits for the commit policy pins it", () => {
  /** balanced's commit policy: the identical ls of call 1 is superseded, but the change to the sent prefix waits for a batch. */
  function waiting() {
    const p = createPruner({ config: { tool: false } });
    const h = [user("go"), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls one", 40), id: "prt_ls1" }]), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls two", 41), id: "prt_ls2" }]), assistant([], "done")];
    for (let i = 2; i <= h.length; i++) p.transform(structuredClone(h.slice(0, i)));
    expect(p.explain(SID).filter((e) => e.tokensSaved > 0)).toEqual([]);
    expect(p.lastCall(SID)?.pendingParts).toEqual([{ partId: "prt_ls1", slot: "output" }]);
    return { p, h };
  }

  it("the waiting prune never lands: not when the cache expires, nor on later calls", () => {
    const { p, h } = waiting();
    expect(p.restore(SID, "prt_ls1", "user", h)).toBe(false); // nothing was pruned, but the part is pinned
    // the cache expired: everything pending applies for free, but not the prune of a pinned part
    const later = structuredClone(h);
    p.transform(later, { now: Date.now() + 2 * HOUR });
    expect(outputOf(later, "prt_ls1")).toBe(bigText("ls one", 40));
    expect(p.state(SID).pinned).toEqual({ prt_ls1: h[h.length - 1].info.id });
    expect(p.explain(SID).filter((e) => e.partId === "prt_ls1")).toEqual([]);
    expect(p.lastCall(SID)?.pending).toBe(0);
    expect(p.state(SID).regret).toBeUndefined(); // nothing was hidden, so no rule regrets anything
    // a second restore says it was restored before
    expect(p.restoreReport(SID, "prt_ls1", "user", h)).toEqual({ restored: false, waiting: [], newer: [], wasPinned: true });
  });

  it("the report names the rule that waited and what it would have saved", () => {
    const { p, h } = waiting();
    const r = p.restoreReport(SID, "prt_ls1", "user", h);
    expect(r).toEqual({ restored: false, waiting: [{ rule: "identical-call", tokens: expect.any(Number) }], newer: [], wasPinned: false });
    expect(r.waiting[0].tokens).toBeGreaterThan(500);
  });

  it("so does the model's restore, and explain then says the part is pinned", () => {
    const { p, h } = waiting();
    (p.state(SID).ids ??= {}).tls1 = "prt_ls1";
    expect(p.manual(SID, { action: "restore", targets: ["tls1"] }, h).text).toBe('tls1: was not pruned yet, but rule "identical-call" waited to prune it; it now stays in full until you view the same thing again');
    expect(p.why(SID, "prt_ls1", h)?.standing?.find((s) => s.id === "identical-call")?.standing).toBe("restored");
    const later = structuredClone(h);
    p.transform(later, { now: Date.now() + 2 * HOUR });
    expect(outputOf(later, "prt_ls1")).toBe(bigText("ls one", 40));
  });

  it("a part nothing wants is pinned too: an age rule that would clear it later leaves it alone", () => {
    const p = createPruner({ config: { commit: { minTokens: 0 }, tool: false } });
    const h = reads();
    const upTo = 9; // the end of turn 3: nothing wants prt_r3 yet
    replay(h.slice(0, upTo), (m) => p.transform(m));
    expect(p.restore(SID, "prt_r3", "user", h.slice(0, upTo))).toBe(false);
    for (let i = upTo + 1; i < h.length; i++) if (h[i].info.role === "assistant") p.transform(structuredClone(h.slice(0, i)));
    const last = structuredClone(h);
    p.transform(last);
    expect(p.explain(SID).find((e) => e.partId === "prt_r3")).toBeUndefined();
    expect(outputOf(last, "prt_r3")).toBe(bigText("calc v3", 120));
    expect(outputOf(last, "prt_r2")).toMatch(/→ /); // older views are still superseded
  });
});

describe("a restore lasts until the thing is viewed again", () => {
  /** reads() with calc.ts restored after turn 11, then turn 12 reads it again (prt_r4). */
  function readAgain() {
    const { p, h } = pruned();
    expect(p.restoreReport(SID, "prt_r1", "user", h).newer).toEqual(["prt_r2", "prt_r3"]);
    const more = [...h, user("t12"), assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText("calc v4", 120), id: "prt_r4" }]), assistant([], "done")];
    return { p, h, more };
  }

  it("the restored read and its newer views are stale beside a read made after the restore: they go, the new read stays", () => {
    const { p, h, more } = readAgain();
    // before the new read: all three in full, however many calls
    for (let k = 0; k < 2; k++) {
      const next = structuredClone(h);
      p.transform(next);
      for (const [id, v] of [["prt_r1", "calc v1"], ["prt_r2", "calc v2"], ["prt_r3", "calc v3"]]) expect(outputOf(next, id)).toBe(bigText(v, 120));
    }
    replay(more.slice(h.length), (m) => p.transform([...structuredClone(h), ...m]));
    expect(p.state(SID).pinned).toEqual({});
    // the stale views go as any prune of the cached prefix does under the commit policy: here at
    // once (minTokens 0), the restored read under its own supersede again
    const next = structuredClone(more);
    p.transform(next);
    for (const id of ["prt_r1", "prt_r2", "prt_r3"]) expect(outputOf(next, id)).toMatch(/^read\(.*→ /);
    expect(outputOf(next, "prt_r4")).toBe(bigText("calc v4", 120));
    expect(p.explain(SID).find((e) => e.partId === "prt_r1" && e.slot === "output")?.rule).toBe("identical-call");
    expect(p.state(SID).pinned).toEqual({});
  });

  it("the stale views wait for the batch like any other prune of the cached prefix, and go at once when the cache expires", () => {
    const p = createPruner({ config: { commit: { minTokens: 1_000_000 }, tool: false } });
    const h = reads();
    replay(h, (m) => p.transform(m));
    const expired = [...structuredClone(h), user("t12")];
    p.transform(expired, { now: Date.now() + 2 * HOUR });
    expect(outputOf(expired, "prt_r1")).toMatch(/→ /);
    const upTo = [...h, user("t12")];
    p.restore(SID, "prt_r1", "user", upTo);
    const more = [...upTo, assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText("calc v4", 120), id: "prt_r4" }]), assistant([], "done")];
    const at = Date.now() + 2 * HOUR + 60_000;
    replay(more.slice(upTo.length), (m) => p.transform([...structuredClone(upTo), ...m], { now: at }));
    expect(p.state(SID).pinned).toEqual({});
    const waiting = structuredClone(more);
    p.transform(waiting, { now: at + 1000 });
    expect(outputOf(waiting, "prt_r1")).toBe(bigText("calc v1", 120));
    expect(outputOf(waiting, "prt_r4")).toBe(bigText("calc v4", 120));
    const last = [...structuredClone(more), user("t13")];
    p.transform(last, { now: at + 2 * HOUR });
    expect(outputOf(last, "prt_r1")).toMatch(/^read\(.*→ /);
    expect(outputOf(last, "prt_r4")).toBe(bigText("calc v4", 120));
  });

  it("once the pin ends, a live process prunes the restored part as a new process from the state file does", () => {
    // presets.test.ts (seed 1195459112): the live process had dropped the restored part's
    // supersede for good while it was pinned, so it kept the part in full where a restart pruned it
    const dir = `${process.env.TMPDIR ?? "/tmp"}/acp-revive-${process.pid}-${Date.now()}`;
    const config = { commit: { minTokens: 0 }, tool: false };
    const h = reads();
    const live = createPruner({ config, stateDir: dir });
    replay(h, (m) => live.transform(m));
    live.restore(SID, "prt_r1", "user", h);
    live.transform(structuredClone(h)); // the pin holds: sent in full
    const more = [...h, user("t12"), assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText("calc v4", 120), id: "prt_r4" }])];
    const restarted = createPruner({ config, stateDir: dir });
    const a = structuredClone(more);
    const b = structuredClone(more);
    live.transform(a);
    restarted.transform(b);
    expect(outputOf(a, "prt_r1")).toMatch(/→ /);
    expect(a).toEqual(b);
  });

  it("a new process reads the pin from the state file and ends it the same way", () => {
    const dir = `${process.env.TMPDIR ?? "/tmp"}/acp-repin-${process.pid}-${Date.now()}`;
    const config = { commit: { minTokens: 0 }, tool: false };
    const h = reads();
    replay(h, (m) => createPruner({ config, stateDir: dir }).transform(m));
    createPruner({ config, stateDir: dir }).restore(SID, "prt_r1", "user", h);
    const more = [...h, user("t12"), assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText("calc v4", 120), id: "prt_r4" }])];
    const p = createPruner({ config, stateDir: dir });
    const last = structuredClone(more);
    p.transform(last, { now: Date.now() + 2 * HOUR });
    for (const id of ["prt_r1", "prt_r2", "prt_r3"]) expect(outputOf(last, id)).toMatch(/→ /);
    expect(p.state(SID).pinned).toEqual({});
    // and the journal carries the ended pins: another process agrees
    const again = structuredClone(more);
    createPruner({ config, stateDir: dir }).transform(again, { now: Date.now() + 2 * HOUR });
    expect(again).toEqual(last);
  });

  it("a pin this process ends is not a request: another process's discard of the part made meanwhile stands", () => {
    const dir = `${process.env.TMPDIR ?? "/tmp"}/acp-unpin-${process.pid}-${Date.now()}`;
    const config = { commit: { minTokens: 0 }, tool: true, idsFromTokens: 0 };
    const h = [...reads(), user("t12")];
    const a = createPruner({ config, stateDir: dir });
    replay(h, (m) => a.transform(m));
    const b = createPruner({ config, stateDir: dir });
    a.restore(SID, "prt_r1", "user", h);
    b.transform(structuredClone(h)); // b reads the pins
    const r1 = Object.entries(a.state(SID).ids ?? {}).find(([, v]) => v === "prt_r1")![0];
    expect(a.manual(SID, { action: "discard", targets: [r1] }, h).text).toBe(`${r1}: discarded`);
    // b has not seen the discard; the file is read again, so b ends its pin on prt_r1 and merges
    const more = [...h, assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText("calc v4", 120), id: "prt_r4" }])];
    b.transform(structuredClone(more));
    expect(b.state(SID).manual?.prt_r1).toEqual({ action: "discard" });
    expect(createPruner({ config, stateDir: dir }).state(SID).manual?.prt_r1).toEqual({ action: "discard" });
  });

  it("a pin written before pins ended (true) holds for good", () => {
    const { p, more } = readAgain();
    for (const id of ["prt_r1", "prt_r2", "prt_r3"]) p.state(SID).pinned![id] = true;
    const last = structuredClone(more);
    p.transform(last);
    for (const [id, v] of [["prt_r1", "calc v1"], ["prt_r2", "calc v2"], ["prt_r3", "calc v3"]]) expect(outputOf(last, id)).toBe(bigText(v, 120));
  });
});
