// A prune request of a newer view while an older view of the same thing stays in full (restored,
// say): commit never hides the newer view then (never stale over fresh), so the request is refused
// and says why, instead of answering "discarded" for a prune that never lands (the live audit's
// pinned discard). Hiding the older view in the same request hides both, in any order.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message } from "../../src/graph/types.js";
import { assistant, bigText, replay, SID, toolPart, user, workTurns } from "../helpers/session.js";

const HOUR = 3_600_000;
const read = (v: string, id: string, filePath = "src/calc.ts") => assistant([{ tool: "read", input: { filePath }, output: bigText(v, 120), id }]);

/** src/calc.ts read in turns 1, 2 and 3 (r1, r2 superseded, r3 cleared by age later), ten turns of other work, and a grep in the last turn. */
function reads(): Message[] {
  const h = [user("t1"), read("calc v1", "prt_r1"), assistant([], "done"), user("t2"), read("calc v2", "prt_r2"), assistant([], "done"), user("t3"), read("calc v3", "prt_r3"), assistant([], "done")];
  h.push(...workTurns(4, 10));
  h.push(user("t14"), assistant([{ tool: "grep", input: { pattern: "calc" }, output: bigText("grep", 80), id: "prt_g" }]));
  return h;
}

const outputOf = (ms: Message[], partId: string) => String(toolPart(ms, partId)?.state?.output);

/** The session with ids; the three reads pruned, then the older ones restored by the model (`restore`), which pins their newer views too. */
function restored(restore: "prt_r1" | "prt_r2", stateDir?: string) {
  const p = createPruner({ config: { commit: { minTokens: 0 }, tool: true, idsFromTokens: 0 }, stateDir });
  const h = reads();
  replay(h, (m) => p.transform(m));
  expect(["prt_r1", "prt_r2", "prt_r3"].map((id) => p.state(SID).decisions[id]?.output?.rule)).toEqual(["identical-call", "identical-call", "stale-read"]);
  const idOf = (partId: string) => Object.entries(p.state(SID).ids ?? {}).find(([, v]) => v === partId)![0];
  const [r1, r2, r3, g] = [idOf("prt_r1"), idOf("prt_r2"), idOf("prt_r3"), idOf("prt_g")];
  expect(p.manual(SID, { action: "restore", targets: [restore === "prt_r1" ? r1 : r2] }, h).ok).toBe(true);
  /** The next request as the provider gets it (`later`: with the cache expired, when everything pending goes). */
  const next = (later = false) => {
    const m = structuredClone(h);
    p.transform(m, later ? { now: Date.now() + 2 * HOUR } : {});
    return m;
  };
  return { p, h, r1, r2, r3, g, next };
}

const full = (m: Message[], partId: string, v: string, id: string) => expect(outputOf(m, partId)).toBe(`${bigText(v, 120)}\n[acp:${id}]`);
const discarded = (m: Message[], partId: string) => expect(outputOf(m, partId)).toMatch(/→ discarded by the agent\n\[acp:t\w+\]$/);

describe("a prune request of a newer view while a restored older view stays in full", () => {
  it("is refused, naming the older views, and the next requests send every view in full", () => {
    const { p, h, r1, r2, r3, next } = restored("prt_r1");
    expect(p.manual(SID, { action: "discard", targets: [r3] }, h)).toEqual({
      ok: false,
      text: `${r3}: ${r2}, ${r1}, older views of the same thing, were restored and stay in full; a newer view cannot be hidden while an older one is shown (discard ${r2}, ${r1} too, in the same request, to hide them all)`,
    });
    expect(p.state(SID).manual?.prt_r3).toBeUndefined(); // no request is left standing, to land later
    expect(Object.keys(p.state(SID).pinned ?? {})).toEqual(["prt_r1", "prt_r2", "prt_r3"]);
    for (const m of [next(), next(true)]) {
      full(m, "prt_r1", "calc v1", r1);
      full(m, "prt_r2", "calc v2", r2);
      full(m, "prt_r3", "calc v3", r3);
    }
  });

  it("distill and replace are refused the same way, naming only the older views that stay in full", () => {
    const { p, h, r1, r2, r3, next } = restored("prt_r2"); // r1 stays pruned: it holds nothing
    expect(p.manual(SID, { action: "distill", targets: [[r3, "calc.ts: add and sub"]] }, h)).toEqual({
      ok: false,
      text: `${r3}: ${r2}, an older view of the same thing, was restored and stays in full; a newer view cannot be hidden while an older one is shown (distill ${r2} too, in the same request, to hide both)`,
    });
    const cut = { id: r3, start: "1: calc v3 line 0 x", end: "4: calc v3 line 3 x" };
    expect(p.manual(SID, { action: "replace", targets: [cut] }, h).text).toBe(
      `${r3}: ${r2}, an older view of the same thing, was restored and stays in full; a newer view cannot be hidden while an older one is shown (replace ${r2} too, in the same request, to hide both)`,
    );
    const m = next();
    expect(outputOf(m, "prt_r1")).toMatch(/^read\(.*→ /);
    full(m, "prt_r2", "calc v2", r2);
    full(m, "prt_r3", "calc v3", r3);
  });

  it("the other targets of the request apply, and what the reply says was discarded is hidden in the next request", () => {
    const { p, h, r1, r2, r3, g, next } = restored("prt_r1");
    const reply = p.manual(SID, { action: "discard", targets: [r3, g] }, h);
    expect(reply.ok).toBe(false);
    expect(reply.text.split("\n")).toEqual([expect.stringMatching(new RegExp(`^${r3}: ${r2}, ${r1}, older views`)), `${g}: discarded`]);
    const m = next();
    discarded(m, "prt_g");
    full(m, "prt_r3", "calc v3", r3);
  });

  for (const order of [["r3", "r1"], ["r1", "r3"]] as const)
    it(`hiding the older views in the same request hides them all, whatever the order of the targets (${order.join(", ")} first)`, () => {
      const { p, h, r1, r2, r3, next } = restored("prt_r1");
      const ids = { r1, r2, r3 };
      // r1 goes, but r2 is still restored and in full: r3 stays, and the reply says so
      const first = p.manual(SID, { action: "discard", targets: order.map((k) => ids[k]) }, h);
      expect(first.ok).toBe(false);
      expect(first.text.split("\n")).toEqual(
        order.map((k) => (k === "r1" ? `${r1}: discarded` : `${r3}: ${r2}, an older view of the same thing, was restored and stays in full; a newer view cannot be hidden while an older one is shown (discard ${r2} too, in the same request, to hide both)`)),
      );
      let m = next();
      discarded(m, "prt_r1");
      full(m, "prt_r2", "calc v2", r2);
      full(m, "prt_r3", "calc v3", r3);
      const [a, b] = order[0] === "r3" ? [r3, r2] : [r2, r3];
      expect(p.manual(SID, { action: "discard", targets: [a, b] }, h)).toEqual({ ok: true, text: `${a}: discarded\n${b}: discarded` });
      m = next();
      for (const id of ["prt_r1", "prt_r2", "prt_r3"]) discarded(m, id);
      expect(p.state(SID).pinned).toEqual({});
    });

  it("a new process (the state on disk, no request seen yet) finds the restored older views from the history", () => {
    const dir = `${process.env.TMPDIR ?? "/tmp"}/acp-held-${process.pid}-${Date.now()}`;
    const { h, r1, r2, r3 } = restored("prt_r1", dir);
    const fresh = createPruner({ config: { commit: { minTokens: 0 }, tool: true, idsFromTokens: 0 }, stateDir: dir });
    expect(fresh.manual(SID, { action: "discard", targets: [r3] }, h).ok).toBe(false);
    const m = structuredClone(h);
    createPruner({ config: { commit: { minTokens: 0 }, tool: true, idsFromTokens: 0 }, stateDir: dir }).transform(m);
    full(m, "prt_r3", "calc v3", r3);
    full(m, "prt_r1", "calc v1", r1);
    full(m, "prt_r2", "calc v2", r2);
  });
});

describe("a prune request of a newer view whose older view stays in full for another reason", () => {
  it("the rule that would hide the older view beside it backed off: refused, and discarding both hides both", () => {
    // regretLimit 1: identical-call backs off once the user restores one of its prunes
    const p = createPruner({ config: { commit: { minTokens: 0, regretLimit: 1 }, tool: true, idsFromTokens: 0 } });
    const h = [user("t1"), read("a v1", "prt_a1", "a.ts"), read("a v2", "prt_a2", "a.ts"), assistant([], "done")];
    replay(h, (m) => p.transform(m));
    expect(p.restore(SID, "prt_a1", "user", h)).toBe(true);
    h.push(user("t2"), read("calc v1", "prt_r1"), assistant([], "done"), user("t3"), read("calc v1", "prt_r2"), assistant([], "done"));
    replay(h, (m) => p.transform(m));
    const idOf = (partId: string) => Object.entries(p.state(SID).ids ?? {}).find(([, v]) => v === partId)![0];
    const [r1, r2] = [idOf("prt_r1"), idOf("prt_r2")];
    expect(p.state(SID).decisions.prt_r1).toBeUndefined(); // the identical read is left in full: the rule backed off
    expect(p.manual(SID, { action: "discard", targets: [r2] }, h)).toEqual({
      ok: false,
      text: `${r2}: ${r1}, an older view of the same thing, stays in full: rule "identical-call", which would hide it beside the newer view, backed off after regret in this session; a newer view cannot be hidden while an older one is shown (discard ${r1} too, in the same request, to hide both)`,
    });
    let m = structuredClone(h);
    p.transform(m);
    expect(outputOf(m, "prt_r2")).toBe(`${bigText("calc v1", 120)}\n[acp:${r2}]`);
    expect(p.manual(SID, { action: "discard", targets: [r2, r1] }, h)).toEqual({ ok: true, text: `${r2}: discarded\n${r1}: discarded` });
    m = structuredClone(h);
    p.transform(m);
    discarded(m, "prt_r1");
    discarded(m, "prt_r2");
  });

  it("the older view is protected (a user's protect rule): refused, with nothing to advise", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-held-"));
    const rule = join(dir, "keep-long-reads.yaml");
    writeFileSync(rule, [
      "rules:",
      "  keep-long-reads:",
      "    phase: protect",
      "    description: reads over 150 lines stay",
      "    when:",
      "      all:",
      "        - { fact: tool, operator: equal, value: read }",
      "        - { fact: outputLines, operator: greaterThan, value: 150 }",
      "    then: { action: protect }",
      "",
    ].join("\n"));
    const p = createPruner({ config: { commit: { minTokens: 0 }, tool: true, idsFromTokens: 0 }, rules: [rule] });
    const long = assistant([{ tool: "read", input: { filePath: "src/calc.ts" }, output: bigText("calc v1", 200), id: "prt_r1" }]);
    const h = [user("t1"), long, assistant([], "done"), user("t2"), read("calc v2", "prt_r2"), assistant([], "done")];
    replay(h, (m) => p.transform(m));
    const r2 = Object.entries(p.state(SID).ids ?? {}).find(([, v]) => v === "prt_r2")![0];
    expect(p.manual(SID, { action: "discard", targets: [r2] }, h)).toEqual({
      ok: false,
      text: `${r2}: prt_r1, an older view of the same thing, is protected by rule "keep-long-reads"; a newer view is hidden only together with its older views, and no prune request hides a protected part`,
    });
    const m = structuredClone(h);
    p.transform(m);
    expect(outputOf(m, "prt_r2")).toBe(`${bigText("calc v2", 120)}\n[acp:${r2}]`);
  });

  it("an older view the host cleared itself (compacted) holds nothing: the discard applies", () => {
    const p = createPruner({ config: { commit: { minTokens: 0 }, tool: true, idsFromTokens: 0 } });
    const h = [user("t1"), read("calc v1", "prt_r1"), assistant([], "done"), user("t2"), read("calc v2", "prt_r2"), assistant([], "done")];
    toolPart(h, "prt_r1")!.state!.time!.compacted = 5;
    replay(h, (m) => p.transform(m));
    const r2 = Object.entries(p.state(SID).ids ?? {}).find(([, v]) => v === "prt_r2")![0];
    expect(p.manual(SID, { action: "discard", targets: [r2] }, h)).toEqual({ ok: true, text: `${r2}: discarded` });
    const m = structuredClone(h);
    p.transform(m);
    discarded(m, "prt_r2");
  });
});

describe("a prune request of a newer view whose older view is too small for any note", () => {
  // the same grep twice: the first found nothing, and identical-call's note on it (naming a long path,
  // pattern and include) would outgrow its output by more than commit allows, so no note is forced
  // on it and it stays in full; commit then keeps the newer grep in full too
  const path = `src/${"deep/".repeat(50)}calc.ts`;
  const grep = (output: string, id: string) => assistant([{ tool: "grep", input: { path, pattern: "p".repeat(120), include: `*.{${"ts,".repeat(40)}js}` }, output, id }]);

  it("is refused, naming the older view, and the newer view stays in full", () => {
    const p = createPruner({ config: { commit: { minTokens: 0 }, tool: true, idsFromTokens: 0 } });
    const h = [user("t1"), grep("No files found", "prt_g1"), assistant([], "done"), user("t2"), grep(bigText("calc v2", 120), "prt_g2"), assistant([], "done")];
    replay(h, (m) => p.transform(m));
    const g2 = Object.entries(p.state(SID).ids ?? {}).find(([, v]) => v === "prt_g2")![0];
    expect(p.manual(SID, { action: "discard", targets: [g2] }, h)).toEqual({
      ok: false,
      text: `${g2}: prt_g1, an older view of the same thing, stays in full: rule "identical-call" has no note short enough to replace it beside the newer view; a newer view is hidden only together with its older views, and no prune request hides an output smaller than its note`,
    });
    expect(p.state(SID).manual?.prt_g2).toBeUndefined();
    const m = structuredClone(h);
    p.transform(m);
    expect(outputOf(m, "prt_g2")).toBe(`${bigText("calc v2", 120)}\n[acp:${g2}]`);
    expect(outputOf(m, "prt_g1")).toBe("No files found");
  });
});
