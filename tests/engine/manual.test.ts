import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { replaceBetween } from "../../src/engine/manual-patch.js";
import { assistant, bigText, SID, toolPart, user } from "../helpers/session.js";

const history = () => [
  user("go"),
  assistant([
    { tool: "bash", input: { command: "npm test" }, output: bigText("test output"), id: "prt_b1" },
    { tool: "read", input: { filePath: "pkg/package.json" }, output: bigText("pkg"), id: "prt_pkg" },
    { tool: "grep", input: { pattern: "foo" }, output: bigText("grep"), id: "prt_g1" },
  ]),
  assistant([], "looking"),
];

function setup() {
  const p = createPruner({ config: { commit: { minTokens: 1_000_000 }, idsFromTokens: 0 } });
  const h = history();
  const first = structuredClone(h);
  p.transform(first);
  const idOf = (partId: string) => String(toolPart(first, partId)?.state?.output).match(/\[acp:(t\w+)\]$/)?.[1];
  return { p, h, first, idOf };
}

describe("ids and the prune tool", () => {
  it("tags unprotected outputs with a stable id and leaves protected ones untagged", () => {
    const { p, h, first, idOf } = setup();
    expect(idOf("prt_b1")).toMatch(/^t\w+$/);
    expect(idOf("prt_pkg")).toBeUndefined(); // protected file
    const second = structuredClone(h);
    p.transform(second);
    expect(toolPart(second, "prt_b1")).toEqual(toolPart(first, "prt_b1"));
  });

  it("discard, distill, replace and restore change the next request exactly, even inside the batched prefix", () => {
    const { p, h, idOf } = setup();
    const b1 = idOf("prt_b1")!;
    const g1 = idOf("prt_g1")!;
    expect(p.manual(SID, { action: "discard", targets: [b1] }, h).ok).toBe(true);
    expect(p.manual(SID, { action: "distill", targets: [{ id: g1, summary: "foo is used in 3 files" }] }, h).ok).toBe(true);
    let next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_b1")?.state?.output).toBe(`bash({command: "npm test"}) → discarded by the agent\n[acp:${b1}]`);
    expect(toolPart(next, "prt_g1")?.state?.output).toBe(`grep({pattern: "foo"}) → distilled by the agent: foo is used in 3 files\n[acp:${g1}]`);

    const r = p.manual(SID, { action: "replace", targets: [{ id: g1, start: "1: grep line 0", end: "3: grep line 2 " + "x".repeat(40) }] }, h);
    expect(r).toEqual({ ok: true, text: `${g1}: replaced` });
    next = structuredClone(h);
    p.transform(next);
    expect(String(toolPart(next, "prt_g1")?.state?.output).startsWith("[… ")).toBe(true);

    expect(p.manual(SID, { action: "restore", targets: [b1] }, h).text).toBe(`${b1}: restored; the full output is back from the next step`);
    next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_b1")?.state?.output).toBe(`${bigText("test output")}\n[acp:${b1}]`);
  });

  it("a second discard of the same part says it was discarded already, and changes nothing", () => {
    const { p, h, idOf } = setup();
    const b1 = idOf("prt_b1")!;
    expect(p.manual(SID, { action: "discard", targets: [b1] }, h)).toEqual({ ok: true, text: `${b1}: discarded` });
    const once = structuredClone(h);
    p.transform(once);
    expect(p.manual(SID, { action: "discard", targets: [b1] }, h)).toEqual({ ok: true, text: `${b1}: already discarded` });
    const twice = structuredClone(h);
    p.transform(twice);
    expect(twice).toEqual(once);
  });

  it("refuses protected parts and unknown ids with a useful message", () => {
    const { p, h } = setup();
    const unknown = p.manual(SID, { action: "discard", targets: ["t999"] }, h);
    expect(unknown.ok).toBe(false);
    expect(unknown.text).toMatch(/^t999: unknown id\. Available: t\w+ \(\d+ tokens\)/);
    const st = p.state(SID);
    (st.ids ??= {}).tzz = "prt_pkg"; // even with an id, a protected file is refused
    const prot = p.manual(SID, { action: "discard", targets: ["tzz"] }, h);
    expect(prot.ok).toBe(false);
    expect(prot.text).toContain("protected");
    expect(prot.text).toContain("protectedFiles in acp.jsonc");
  });

  it("takes the specification's tuples: [id], [id, summary], [id, start, end, replacement] and [start, end, replacement]", () => {
    const { p, h, idOf } = setup();
    const [b1, g1] = [idOf("prt_b1")!, idOf("prt_g1")!];
    expect(p.manual(SID, { action: "discard", targets: [[b1]] }, h)).toEqual({ ok: true, text: `${b1}: discarded` });
    expect(p.manual(SID, { action: "distill", targets: [[g1, "foo is used in 3 files"]] }, h)).toEqual({ ok: true, text: `${g1}: distilled` });
    let next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_b1")?.state?.output).toBe(`bash({command: "npm test"}) → discarded by the agent\n[acp:${b1}]`);
    expect(toolPart(next, "prt_g1")?.state?.output).toBe(`grep({pattern: "foo"}) → distilled by the agent: foo is used in 3 files\n[acp:${g1}]`);
    // replace without an id: the markers find the part
    const [start, end] = ["1: grep line 0", "3: grep line 2 " + "x".repeat(40)];
    expect(p.manual(SID, { action: "replace", targets: [[start, end, "[cut]"]] }, h)).toEqual({ ok: true, text: `${g1}: replaced` });
    expect(p.manual(SID, { action: "replace", targets: [[g1, "\n4: grep line 3 x", "6: grep line 5 " + "x".repeat(40)]] }, h)).toEqual({ ok: true, text: `${g1}: replaced` });
    next = structuredClone(h);
    p.transform(next);
    const cut = String(toolPart(next, "prt_g1")?.state?.output);
    expect(cut.startsWith("[cut][… ")).toBe(true); // lines 1-3, then (from the newline before it) lines 4-6
    expect(cut).toMatch(/^\[cut\]\[… \d+ chars removed by the agent\]\n7: grep line 6 /);
    const none = p.manual(SID, { action: "replace", targets: [["no such start marker here", "nor such an end marker"]] }, h);
    expect(none.ok).toBe(false);
    expect(none.text).toMatch(/^"no such start marker here" … "nor such an end marker": no output or message with an id holds these markers/);
  });

  it("unknown ids list what is still available: not what this call discarded, nor protected parts; a repeated target is answered once", () => {
    const { p, h, idOf } = setup();
    const [b1, g1] = [idOf("prt_b1")!, idOf("prt_g1")!];
    (p.state(SID).ids ??= {}).tzz = "prt_pkg"; // an id on a protected file (config changed since, say)
    const r = p.manual(SID, { action: "discard", targets: ["t999", b1, [b1], `[acp:${b1}]`] }, h);
    expect(r.ok).toBe(false);
    expect(r.text.split("\n")).toEqual([`t999: unknown id. Available: ${g1} (${Math.ceil(bigText("grep").length / 4)} tokens)`, `${b1}: discarded`]);
    const empty = p.manual(SID, { action: "discard", targets: [[""], 42 as unknown as string] }, h);
    expect(empty.text.split("\n")).toEqual(['[""]: the first element must be an id', "42: not an id (targets are ids such as t12, or [id, …] tuples)"]);
  });

  it("replace needs unique markers, a long enough span and one marker over 15 chars", () => {
    const text = "alpha beta gamma delta epsilon zeta eta theta";
    expect(replaceBetween(text, { start: "alpha", end: "theta" }).error).toMatch(/at least 16/);
    expect(replaceBetween(text, { start: "alpha beta gamma", end: "theta" }).error).toBeUndefined();
    expect(replaceBetween("aaaaaaaaaaaaaaaaaaaa x aaaaaaaaaaaaaaaaaaaa", { start: "aaaaaaaaaaaaaaaaaaaa", end: "x" }).error).toMatch(/more than once/);
    expect(replaceBetween(text, { start: "alpha beta gamma", end: "delta" }).error).toMatch(/at least 30/);
  });
});

describe("a prune request that would not make the part smaller", () => {
  const small = () => [
    user("go"),
    assistant([
      { tool: "bash", input: { command: "pwd" }, output: "/w", id: "prt_pwd" },
      { tool: "grep", input: { pattern: "foo" }, output: bigText("grep"), id: "prt_g1" },
    ]),
    assistant([], "looking"),
  ];

  it("is refused, not answered as done: nothing is stored and the next request shows the part as it was", () => {
    const p = createPruner({ config: { commit: { minTokens: 1_000_000 }, idsFromTokens: 0 } });
    const h = small();
    const first = structuredClone(h);
    p.transform(first);
    const idOf = (partId: string) => String(toolPart(first, partId)?.state?.output).match(/\[acp:(t\w+)\]$/)?.[1];
    // an output this small carries no id tag; the model can still name it by its part id
    expect(idOf("prt_pwd")).toBeUndefined();
    const pwd = "prt_pwd";
    const g1 = idOf("prt_g1")!;
    expect(p.manual(SID, { action: "discard", targets: [pwd] }, h)).toEqual({ ok: false, text: `${pwd}: kept: the output (2 chars) is no longer than its note would be, so discarding it frees nothing` });
    const long = "a summary far longer than the two characters of the output it would replace";
    expect(p.manual(SID, { action: "distill", targets: [{ id: pwd, summary: long }] }, h)).toEqual({ ok: false, text: `${pwd}: kept: the summary is not shorter than the output (2 chars)` });
    // the rest of the request still applies
    expect(p.manual(SID, { action: "discard", targets: [pwd, g1] }, h).text).toBe(`${pwd}: kept: the output (2 chars) is no longer than its note would be, so discarding it frees nothing\n${g1}: discarded`);
    const next = structuredClone(h);
    p.transform(next);
    expect(toolPart(next, "prt_pwd")?.state?.output).toBe("/w");
    expect(toolPart(next, "prt_g1")?.state?.output).toBe(`grep({pattern: "foo"}) → discarded by the agent\n[acp:${g1}]`);
    expect(p.state(SID).manual?.["prt_pwd"]).toBeUndefined();
  });
});
