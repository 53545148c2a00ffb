// Ids on assistant text and reasoning, and context_prune on them: where the tags go, that they
// never change once sent, that the model's echoes are stripped but our own tags are not, and what
// discard / distill / replace / restore do to text and to (signed or unsigned) reasoning.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { idFor } from "../../src/engine/ids.js";
import { REASONING_DISCARDED } from "../../src/engine/manual-patch.js";
import type { Message, Part } from "../../src/graph/types.js";
import { assistant, bigText, SID, toolPart, user } from "../helpers/session.js";

const prose = (label: string) => Array.from({ length: 8 }, (_, i) => `${label} sentence ${i}: the plan is to look at the parser first, then the tests.`).join("\n");
const SIGNED = { anthropic: { signature: "EqQBCkYIBxgCKkD…" } };

/** An assistant step: optional reasoning (with metadata), text, tool calls; part ids are given. */
function step(id: string, opts: { reasoning?: string; meta?: Record<string, unknown>; text?: string; tool?: boolean }): Message {
  const m = assistant(opts.tool ? [{ tool: "bash", input: { command: `cat ${id}` }, output: bigText(id), id: `${id}_tool` }] : [], opts.text);
  const [start, ...rest] = m.parts;
  const textPart = rest.find((p) => p.type === "text");
  if (textPart) textPart.id = `${id}_text`;
  const reasoning: Part[] = opts.reasoning === undefined ? [] : [{ id: `${id}_reasoning`, sessionID: SID, messageID: m.info.id, type: "reasoning", text: opts.reasoning, metadata: opts.meta, time: { start: 1, end: 2 } }];
  m.parts = [start, ...reasoning, ...rest];
  return m;
}

const part = (ms: Message[], id: string) => ms.flatMap((m) => m.parts).find((p) => p.id === id);
const text = (ms: Message[], id: string) => part(ms, id)?.text;
const output = (ms: Message[], id: string) => String(toolPart(ms, id)?.state?.output);
const run = (p: ReturnType<typeof createPruner>, h: Message[]) => {
  const copy = structuredClone(h);
  p.transform(copy);
  return copy;
};
// verbose: no rule touches these parts, so every change seen is the ids' or the model's doing
const pruner = (extra: Record<string, unknown> = {}) => createPruner({ config: { preset: "verbose", tool: true, commit: { minTokens: 1_000_000, breakEven: 0 }, idsFromTokens: 0, ...extra } });

describe("ids on assistant text and reasoning", () => {
  it("long assistant text ends with an m id; short text gets none; both are stable across calls", () => {
    const p = pruner();
    const h = [user("go"), step("a1", { text: prose("A1") }), step("a2", { text: "short answer" }), user("next")];
    const first = run(p, h);
    const m = idFor("a1_text", {}, "m");
    expect(text(first, "a1_text")).toBe(`${prose("A1")}\n[acp:${m}]`);
    expect(text(first, "a2_text")).toBe("short answer");
    h.push(step("a3", { text: "ok" }));
    const second = run(p, h);
    expect(text(second, "a1_text")).toBe(text(first, "a1_text"));
    expect(p.state(SID).ids?.[m]).toBe("a1_text");
  });

  it("a reasoning block's id rides on its step's text, before the text's own id; the reasoning is untouched", () => {
    const p = pruner();
    const h = [user("go"), step("b1", { reasoning: prose("R1"), meta: SIGNED, text: prose("B1") })];
    const out = run(p, h);
    const [r, m] = [idFor("b1_reasoning", {}, "r"), idFor("b1_text", {}, "m")];
    expect(part(out, "b1_reasoning")).toEqual(part(h, "b1_reasoning"));
    expect(text(out, "b1_text")).toBe(`${prose("B1")}\n[acp:${r}] [acp:${m}]`);
  });

  it("without text, the reasoning id rides on the step's first completed tool output; with nothing to carry it, there is no id", () => {
    const p = pruner();
    const h = [user("go"), step("c1", { reasoning: prose("R"), tool: true }), step("c2", { reasoning: prose("R2") })];
    const out = run(p, h);
    const [r, t] = [idFor("c1_reasoning", {}, "r"), idFor("c1_tool", {}, "t")];
    expect(output(out, "c1_tool")).toBe(`${bigText("c1")}\n[acp:${r}] [acp:${t}]`);
    expect(Object.values(p.state(SID).ids ?? {})).not.toContain("c2_reasoning");
  });

  it("echoed ids are stripped from the model's text, our own tag stays; a transform of our own output changes nothing", () => {
    const p = pruner();
    const echoed = `${prose("E")}\nSee [acp:t123] and [acp:mabc] above.`;
    const h = [user("go"), step("d1", { text: echoed }), user("next")];
    const out = run(p, h);
    const m = idFor("d1_text", {}, "m");
    expect(text(out, "d1_text")).toBe(`${prose("E")}\nSee  and  above.\n[acp:${m}]`);
    const again = structuredClone(out);
    p.transform(again);
    expect(again).toEqual(out);
  });

  it("a new process renders the same tags", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-ids-"));
    const config = { preset: "verbose", tool: true, commit: { minTokens: 1_000_000, breakEven: 0 }, idsFromTokens: 0 };
    const h = [user("go"), step("e1", { reasoning: prose("R"), text: prose("E1"), tool: true }), user("next")];
    const a = run(createPruner({ config, stateDir: dir }), h);
    const b = run(createPruner({ config, stateDir: dir }), h);
    expect(b).toEqual(a);
  });

  it("the copy the compaction agent summarises gets no tags, but echoes are stripped and prunes apply", () => {
    const p = pruner();
    const h = [user("go"), step("f1", { reasoning: prose("R"), text: `${prose("F1")} [acp:t999]`, tool: true }), user("next"), step("f2", { text: "ok" })];
    run(p, h);
    const t = idFor("f1_tool", {}, "t");
    expect(p.manual(SID, { action: "discard", targets: [t] }, h).ok).toBe(true);
    const copy = structuredClone(h);
    p.transform(copy, { compaction: true });
    const sent = JSON.stringify(copy);
    expect(sent).not.toMatch(/\[acp:/);
    expect(output(copy, "f1_tool")).toBe('bash({command: "cat f1"}) → discarded by the agent');
    // and the next main request has them again, as before
    expect(text(run(p, h), "f1_text")).toMatch(/\n\[acp:r\w+\] \[acp:m\w+\]$/);
  });
});

describe("context_prune on assistant text and reasoning", () => {
  function setup(meta?: Record<string, unknown>) {
    const p = pruner();
    const h = [user("go"), step("g1", { reasoning: prose("R1"), meta, text: prose("G1"), tool: true }), user("next"), step("g2", { reasoning: prose("R2"), meta, text: "ok" })];
    run(p, h);
    const ids = { m: idFor("g1_text", {}, "m"), r: idFor("g1_reasoning", {}, "r"), r2: idFor("g2_reasoning", {}, "r") };
    return { p, h, ids };
  }

  it("discard, distill, replace and restore of an earlier message", () => {
    const { p, h, ids } = setup();
    expect(p.manual(SID, { action: "discard", targets: [ids.m] }, h)).toEqual({ ok: true, text: `${ids.m}: discarded` });
    expect(text(run(p, h), "g1_text")).toBe(`[message discarded by the agent: "G1 sentence 0: the plan is to look at the parser first, then…"]\n[acp:${ids.r}] [acp:${ids.m}]`);
    expect(p.manual(SID, { action: "distill", targets: [{ id: ids.m, summary: "plan: parser, then tests" }] }, h).ok).toBe(true);
    expect(text(run(p, h), "g1_text")).toBe(`[message distilled by the agent] plan: parser, then tests\n[acp:${ids.r}] [acp:${ids.m}]`);
    const cut = p.manual(SID, { action: "replace", targets: [{ id: ids.m, start: "G1 sentence 1:", end: "G1 sentence 6: the plan" }] }, h);
    expect(cut.ok).toBe(true);
    expect(text(run(p, h), "g1_text")).toMatch(/^G1 sentence 0: .*\n\[… \d+ chars removed by the agent\] is to look/);
    expect(p.manual(SID, { action: "restore", targets: [ids.m] }, h).text).toBe(`${ids.m}: restored; the full text is back from the next step`);
    expect(text(run(p, h), "g1_text")).toBe(`${prose("G1")}\n[acp:${ids.r}] [acp:${ids.m}]`);
  });

  it("discarding unsigned reasoning leaves a minimal text (providers that require the field still get one)", () => {
    const { p, h, ids } = setup();
    expect(p.manual(SID, { action: "discard", targets: [ids.r] }, h)).toEqual({ ok: true, text: `${ids.r}: discarded` });
    const out = run(p, h);
    expect(part(out, "g1_reasoning")).toMatchObject({ type: "reasoning", text: REASONING_DISCARDED });
    expect(p.manual(SID, { action: "distill", targets: [{ id: ids.r, summary: "parser first" }] }, h).ok).toBe(true);
    expect(text(run(p, h), "g1_reasoning")).toBe("[reasoning distilled by the agent] parser first");
    expect(p.manual(SID, { action: "restore", targets: [ids.r] }, h).ok).toBe(true);
    expect(part(run(p, h), "g1_reasoning")).toEqual(part(h, "g1_reasoning"));
  });

  it("signed reasoning is dropped whole on discard (its text must not change) and cannot be distilled", () => {
    const { p, h, ids } = setup(SIGNED);
    const distill = p.manual(SID, { action: "distill", targets: [{ id: ids.r, summary: "x" }] }, h);
    expect(distill).toEqual({ ok: false, text: `${ids.r}: this reasoning is signed by the provider, so it can be discarded but not distilled or cut` });
    expect(p.manual(SID, { action: "discard", targets: [ids.r] }, h).ok).toBe(true);
    const out = run(p, h);
    expect(part(out, "g1_reasoning")).toBeUndefined();
    // its tag stays on the step's text: the model can still restore it
    expect(text(out, "g1_text")).toBe(`${prose("G1")}\n[acp:${ids.r}] [acp:${ids.m}]`);
    expect(p.manual(SID, { action: "restore", targets: [ids.r] }, h).ok).toBe(true);
    expect(part(run(p, h), "g1_reasoning")).toEqual(part(h, "g1_reasoning"));
  });

  it("the current turn's reasoning is refused with a clear message, and stays untouched", () => {
    const { p, h, ids } = setup();
    const r = p.manual(SID, { action: "discard", targets: [ids.r2] }, h);
    expect(r.ok).toBe(false);
    expect(r.text).toBe(`${ids.r2}: reasoning of the current turn cannot be pruned: the provider checks it until the turn ends. It can be pruned after the user's next message`);
    expect(p.state(SID).manual?.g2_reasoning).toBeUndefined();
    expect(part(run(p, h), "g2_reasoning")).toEqual(part(h, "g2_reasoning"));
  });

  it("unknown ids list what can be pruned, text and reasoning included", () => {
    const { p, h, ids } = setup();
    const r = p.manual(SID, { action: "discard", targets: ["m000"] }, h);
    expect(r.ok).toBe(false);
    for (const id of [ids.m, ids.r]) expect(r.text).toContain(`${id} (`);
  });
});

describe("the protected refusal is reachable", () => {
  it("an id given before a time-dependent protect rule started to match is refused, naming the rule", () => {
    // recent-turns protects the newest turn's tool outputs: dynamic, so those outputs do get ids
    const p = pruner({ rules: { "recent-turns": "on" } });
    const h = [user("go"), step("h1", { tool: true })];
    const t = idFor("h1_tool", {}, "t");
    expect(output(run(p, h), "h1_tool")).toMatch(new RegExp(`\\[acp:${t}\\]$`));
    const r = p.manual(SID, { action: "discard", targets: [t] }, h);
    expect(r.ok).toBe(false);
    expect(r.text).toMatch(new RegExp(`^${t}: protected \\(bash\\) by rule "recent-turns": Tool outputs of the newest turns are protected from every rule; protected tools: .* \\(change protectedTools / protectedFiles in acp\\.jsonc\\)$`));
    // a turn later the protection is over and the same id is accepted
    h.push(user("next"));
    expect(p.manual(SID, { action: "discard", targets: [t] }, h).ok).toBe(true);
  });

  it("an output OpenCode cleared itself after its id was shown is refused (compacted-parts)", () => {
    const p = pruner();
    const h = [user("go"), step("i1", { tool: true }), user("next")];
    run(p, h);
    const t = idFor("i1_tool", {}, "t");
    toolPart(h, "i1_tool")!.state!.time!.compacted = Date.now(); // the host's own prune
    const r = p.manual(SID, { action: "discard", targets: [t] }, h);
    expect(r.ok).toBe(false);
    expect(r.text).toContain(`${t}: protected (bash) by rule "compacted-parts"`);
  });

  it("a file protected after its id was given (protectedFiles changed, new process) is refused", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-prot-"));
    const config = { preset: "verbose", tool: true, commit: { minTokens: 1_000_000, breakEven: 0 }, idsFromTokens: 0 };
    const h = [user("go"), assistant([{ tool: "read", input: { filePath: "src/secret.ts" }, output: bigText("secret"), id: "j1" }]), user("next")];
    run(createPruner({ config, stateDir: dir }), h);
    const t = idFor("j1", {}, "t");
    const later = createPruner({ config: { ...config, protectedFiles: ["**/secret.ts"] }, stateDir: dir });
    const out = run(later, h);
    expect(output(out, "j1")).toBe(`${bigText("secret")}\n[acp:${t}]`); // the tag stays: the prefix is unchanged
    const r = later.manual(SID, { action: "discard", targets: [t] }, h);
    expect(r.ok).toBe(false);
    expect(r.text).toContain(`${t}: protected (read) by rule "protected-files"`);
    expect(r.text).toContain("protected files: **/secret.ts");
  });
});
