// The commit policy: when a decision on the already-sent (cached) prefix may apply.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message, Part } from "../../src/graph/types.js";
import { assistant, bigText, SID, toolPart, user } from "../helpers/session.js";
import { strategyPreset } from "../../src/cli/simulate.js";

/** Runs the pruner over messages[0..i) for every assistant message i, as the host does. */
function calls(p: ReturnType<typeof createPruner>, h: Message[]): Message[][] {
  const out: Message[][] = [];
  for (let i = 0; i <= h.length; i++) {
    if (i < h.length && h[i].info.role !== "assistant") continue;
    const ctx = structuredClone(h.slice(0, i));
    p.transform(ctx);
    out.push(ctx);
  }
  return out;
}
const superseded = (ms: Message[], id: string) => String(toolPart(ms, id)?.state?.output).includes("superseded");
const withReasoning = (m: Message, text: string): Message => {
  // Anthropic's thinking, signed: the provider drops it once a later user message is sent
  const r: Part = { id: `${m.info.id}_r`, sessionID: SID, messageID: m.info.id, type: "reasoning", text, metadata: { anthropic: { signature: "sig" } } };
  return { ...m, parts: [m.parts[0], r, ...m.parts.slice(1)] };
};
/** The same messages with reasoning as OpenAI-compatible providers send it: no signature. */
const unsigned = (h: Message[]): Message[] => h.map((m) => ({ ...m, parts: m.parts.map((p) => (p.type === "reasoning" ? { ...p, metadata: undefined } : p)) }));
const noBatches = { idsFromTokens: 0, tool: false, commit: { minTokens: 1_000_000, breakEven: 0, pressureTokens: 0 } };

describe("commit at a prefix break", () => {
  // turn 1: `ls` twice (the first is superseded while already sent); turn 2 starts with a new user message
  const session = (reasoning: boolean): Message[] => {
    const steps = [
      assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls one", 40), id: "prt_ls1" }]),
      assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls two", 40), id: "prt_ls2" }]),
    ];
    return [user("go"), ...(reasoning ? steps.map((m, k) => withReasoning(m, `thinking ${k}`)) : steps), assistant([], "listed"), user("next"), assistant([], "ok")];
  };

  it("a pending prune behind the previous turn's reasoning applies on the first call of the new turn", () => {
    const out = calls(createPruner({ preset: "verbose", config: noBatches }), session(true));
    // out[2]: context up to the second ls (the first is in the sent prefix: pending)
    expect(superseded(out[2], "prt_ls1")).toBe(false);
    // out[3]: a new user message; providers drop turn 1's reasoning, which precedes the first ls
    expect(superseded(out[3], "prt_ls1")).toBe(true);
  });

  it("reasoning the provider sends back (no signature: OpenAI-compatible reasoning_content) is no free break: it waits", () => {
    const out = calls(createPruner({ preset: "verbose", config: noBatches }), unsigned(session(true)));
    expect(superseded(out[3], "prt_ls1")).toBe(false);
    expect(superseded(out[4], "prt_ls1")).toBe(false);
  });

  it("acp.jsonc earlierReasoning overrides what the metadata says, both ways", () => {
    expect(superseded(calls(createPruner({ preset: "verbose", config: { ...noBatches, earlierReasoning: "dropped" } }), unsigned(session(true)))[3], "prt_ls1")).toBe(true);
    expect(superseded(calls(createPruner({ preset: "verbose", config: { ...noBatches, earlierReasoning: "sent" } }), session(true))[3], "prt_ls1")).toBe(false);
  });

  it("a user message the provider receives nothing of is not a new turn for the reasoning it drops", () => {
    // turn 1's reasoning stays sent across the empty user message, and is dropped at "next"
    const h = session(true);
    const withEmpty = [...h.slice(0, 4), user(""), assistant([], "still here"), ...h.slice(4)];
    const out = calls(createPruner({ preset: "verbose", config: noBatches }), withEmpty);
    expect(superseded(out[3], "prt_ls1")).toBe(false); // after the empty message: nothing dropped
    expect(superseded(out[4], "prt_ls1")).toBe(true); // after "next": the break turn 1's reasoning leaves
  });

  it("without reasoning to drop there is no break, so it waits for a batch", () => {
    const out = calls(createPruner({ preset: "verbose", config: noBatches }), session(false));
    expect(superseded(out[3], "prt_ls1")).toBe(false);
    expect(superseded(out[4], "prt_ls1")).toBe(false);
    expect(out).toHaveLength(5);
  });
});

describe("a batch that repays the re-cache waits for the turn (commit.minTurnCalls)", () => {
  // turn 1: `ls` twice, no reasoning (the first is pending: sent); then a user message and a turn of
  // short steps. A batch may pay (breakEven 1), but a session often ends a few calls into a turn.
  const h: Message[] = [
    user("go"),
    assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls one", 200), id: "prt_ls1" }]),
    assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls two", 200), id: "prt_ls2" }]),
    user("next"),
    ...Array.from({ length: 8 }, (_, k) => assistant([{ tool: "bash", input: { command: `echo ${k}` }, output: "ok" }])),
  ];
  /** Assistant messages of the last turn in the first prompt that shows prt_ls1 superseded. */
  const turnCallsAtCommit = (minTurnCalls?: number) => {
    const out = calls(createPruner({ preset: "verbose", config: { idsFromTokens: 0, tool: false, commit: { minTokens: 1_000_000, breakEven: 1, pressureTokens: 0, ...(minTurnCalls ? { minTurnCalls } : {}) } } }), h);
    const first = out.findIndex((ms) => superseded(ms, "prt_ls1"));
    expect(first).toBeGreaterThan(0);
    const ms = out[first];
    const lastUser = ms.map((m) => m.info.role).lastIndexOf("user");
    return ms.slice(lastUser + 1).filter((m) => m.info.role === "assistant").length;
  };

  it("commits once the turn has made minTurnCalls calls (default 3)", () => {
    expect(turnCallsAtCommit(undefined)).toBe(3);
    expect(turnCallsAtCommit(5)).toBe(5);
  });

  it("balanced waits for 5 calls", () => {
    expect(createPruner({ preset: "balanced" }).resolved.commit.minTurnCalls).toBe(5);
  });
});

describe("context pressure", () => {
  // Two identical 12K-token listings in one step (the first is pruned at once: unsent), then two
  // identical 1K-token greps in two steps (the first is pending: sent). Unpruned ~26K tokens,
  // as rendered ~14K.
  const session = (): Message[] => [
    user("go"),
    assistant([
      { tool: "bash", input: { command: "ls -R" }, output: bigText("big", 870), id: "prt_big1" },
      { tool: "bash", input: { command: "ls -R" }, output: bigText("big", 870), id: "prt_big2" },
    ]),
    assistant([{ tool: "grep", input: { pattern: "x" }, output: bigText("grep", 72), id: "prt_g1" }]),
    assistant([{ tool: "grep", input: { pattern: "x" }, output: bigText("grep", 72), id: "prt_g2" }]),
    assistant([], "done"),
  ];
  const run = (pressureTokens: number) => calls(createPruner({ preset: "verbose", config: { ...noBatches, commit: { ...noBatches.commit, pressureTokens } } }), session());

  it("is measured on the prompt as rendered, not before pruning", () => {
    const out = run(20_000);
    expect(superseded(out[1], "prt_big1")).toBe(true);
    expect(superseded(out[3], "prt_g1")).toBe(false); // rendered ~14K < 20K although ~26K unpruned
  });

  it("commits pending prunes once the rendered prompt passes the threshold", () => {
    const out = run(12_000);
    expect(superseded(out[3], "prt_g1")).toBe(true);
  });

  it("the host's pressure point for a call (TransformOptions.pressureTokens) commits them too, where the config has none", () => {
    const h = session();
    expect(superseded(calls(createPruner({ preset: "verbose", config: noBatches }), h)[3], "prt_g1")).toBe(false);
    const q = createPruner({ preset: "verbose", config: noBatches });
    expect(superseded(calls({ transform: (ms: Message[]) => q.transform(ms, { pressureTokens: 12_000 }) } as ReturnType<typeof createPruner>, h)[3], "prt_g1")).toBe(true);
    // a configured threshold below the host's still applies
    const r = createPruner({ preset: "verbose", config: { ...noBatches, commit: { ...noBatches.commit, pressureTokens: 12_000 } } });
    expect(superseded(calls({ transform: (ms: Message[]) => r.transform(ms, { pressureTokens: 50_000 }) } as ReturnType<typeof createPruner>, h)[3], "prt_g1")).toBe(true);
  });
});

describe("plain batch (comparison baselines: commit.plainBatch)", () => {
  const CLEARED = "[Old tool result content cleared]";
  const cleared = (ms: Message[], id: string) => toolPart(ms, id)?.state?.output === CLEARED;
  // batch10's bundle (plainBatch: true) with a window of one call, so that a few small outputs make
  // a batch; `plainBatch: false` is the cache-aware policy for comparison
  const make = (commit: Record<string, unknown>) =>
    createPruner({
      preset: strategyPreset("batch10"),
      config: { tool: false, commit, rules: { "mask-old-outputs": { with: { keepCalls: 1, text: CLEARED, allowGrowth: true } } } },
    });
  const out = (id: string, chars: number) => ({ tool: "bash", input: { command: id }, output: "x".repeat(chars), id });

  it("parts the provider has not seen yet wait for the batch too", () => {
    // three outputs of 1,000 tokens in one step: the older two are out of the window at once
    const h = [user("go"), assistant([out("prt_a", 4000), out("prt_b", 4000), out("prt_c", 4000)]), assistant([], "ok"), assistant([out("prt_d", 4000)]), assistant([], "done")];
    const plain = calls(make({ minTokens: 2500, plainBatch: true }), h);
    expect(cleared(plain[2], "prt_a")).toBe(false); // 2,000 pending < 2,500
    expect(cleared(plain[3], "prt_a") && cleared(plain[3], "prt_b") && cleared(plain[3], "prt_c")).toBe(true); // 3,000: all at once
    const cacheAware = calls(make({ minTokens: 2500, plainBatch: false }), h);
    expect(cleared(cacheAware[2], "prt_a")).toBe(true); // unsent: applied at once
  });

  it("nothing is pulled in where the previous turn's reasoning is dropped", () => {
    const h = [user("go"), withReasoning(assistant([out("prt_a", 4000)]), "thinking"), withReasoning(assistant([out("prt_b", 4000)]), "more"), user("next"), assistant([], "ok")];
    const plain = calls(make({ minTokens: 1_000_000, plainBatch: true }), h);
    expect(cleared(plain[3], "prt_a")).toBe(false);
    const cacheAware = calls(make({ minTokens: 1_000_000, plainBatch: false }), h);
    expect(cleared(cacheAware[3], "prt_a")).toBe(true); // behind the dropped reasoning: free
  });

  it("counts the size of the outputs it prunes, not what they free", () => {
    // one pending output of 100 tokens; its breadcrumb is 9, so it frees 91
    const h = [user("go"), assistant([out("prt_a", 400)]), assistant([out("prt_b", 400)]), assistant([], "ok")];
    expect(cleared(calls(make({ minTokens: 100, plainBatch: true }), h)[2], "prt_a")).toBe(true);
    expect(cleared(calls(make({ minTokens: 100, plainBatch: false }), h)[2], "prt_a")).toBe(false);
  });
});

describe("break-even after the cache expired", () => {
  // 60 quick calls, then a pause longer than the cache lifetime, then `ls` twice: the first `ls`
  // is superseded while already sent. Freeing it repays re-caching what follows only if enough
  // calls come before the cache expires again; the calls since it last expired are the estimate.
  const MIN = 60_000;
  const session = (): { messages: Message[]; at: number[] } => {
    const messages: Message[] = [user("go")];
    const at: number[] = [0];
    for (let k = 0; k < 60; k++) {
      messages.push(assistant([{ tool: "grep", input: { pattern: `p${k}` }, output: `hit ${k}`, id: `prt_g${k}` }]));
      at.push(k * 1000);
    }
    const late = 60 * 1000 + 10 * MIN;
    messages.push(assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls one", 60), id: "prt_ls1" }]));
    messages.push(assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls two", 60), id: "prt_ls2" }]));
    messages.push(assistant([], "listed"));
    at.push(late, late + 1000, late + 2000);
    return { messages, at };
  };
  const run = () => {
    const { messages, at } = session();
    const p = createPruner({ preset: "verbose", config: { idsFromTokens: 0, tool: false, commit: { minTokens: 1_000_000, breakEven: 20, pressureTokens: 0, cacheTtlMinutes: 5 } } });
    const out: Message[][] = [];
    for (let i = 1; i <= messages.length; i++) {
      if (i < messages.length && messages[i].info.role !== "assistant") continue;
      const ctx = structuredClone(messages.slice(0, i));
      p.transform(ctx, { now: at[i - 1] });
      out.push(ctx);
    }
    return out;
  };

  it("a supersede on the sent prefix waits: two calls since the cache expired do not repay re-caching", () => {
    const out = run();
    const last = out[out.length - 1];
    expect(toolPart(last, "prt_ls2")).toBeDefined();
    // 60 calls in the session would have repaid it (the estimate before the cache lifetime counted)
    expect(superseded(last, "prt_ls1")).toBe(false);
  });
});

describe("never stale over fresh, when the older view is too small to prune on its own", () => {
  // a short failing run, then the same command passing with a long output that an age rule clears
  const session = (): Message[] => [
    user("run the tests"),
    assistant([{ tool: "bash", input: { command: "sh run-tests.sh" }, output: "FAIL: 1 test", id: "prt_fail" }]),
    assistant([{ tool: "bash", input: { command: "sh run-tests.sh" }, output: bigText("PASS", 60), id: "prt_pass" }]),
    assistant([], "fixed"),
    user("thanks"),
    assistant([], "ok"),
    user("next"),
    assistant([], "done"),
  ];
  const eager = { idsFromTokens: 0, tool: false, commit: { minTokens: 0, breakEven: 0, pressureTokens: 0 } };

  it("the newer view is cleared and the older one is replaced beside it, though its note is larger", () => {
    const out = calls(createPruner({ preset: "compact", config: eager }), session());
    const last = out[out.length - 1];
    const pass = String(toolPart(last, "prt_pass")?.state?.output);
    const fail = String(toolPart(last, "prt_fail")?.state?.output);
    expect(pass).not.toContain("PASS"); // cleared by stale-shell-output
    expect(fail).not.toBe("FAIL: 1 test");
    expect(fail).toContain("superseded");
  });
});

describe("an acknowledgement is not a view (write-superseded: views false)", () => {
  // read a.ts, edit it ("Edit applied successfully."), read it again; a rule clears reads a turn old.
  // The edit is superseded by the second read, but its output shows nothing stale: when the read
  // is cleared, it stays as it is, not replaced by a longer note.
  const dir = mkdtempSync(join(tmpdir(), "acp-ack-"));
  const clearReads = join(dir, "clear-reads.yaml");
  writeFileSync(clearReads, "rules:\n  clear-old-reads:\n    phase: age\n    description: test\n    when:\n      all:\n        - { fact: tool, operator: equal, value: read }\n        - { fact: ageTurns, operator: greaterThanInclusive, value: 1 }\n    then: { action: clear }\n");
  const ack = "Edit applied successfully.";
  const h = [
    user("fix a.ts"),
    assistant([{ tool: "read", input: { filePath: "/p/a.ts" }, output: bigText("a1", 40), id: "prt_r1" }]),
    assistant([{ tool: "edit", input: { filePath: "/p/a.ts", oldString: "x", newString: "y" }, output: ack, id: "prt_e" }]),
    assistant([{ tool: "read", input: { filePath: "/p/a.ts" }, output: bigText("a2", 40), id: "prt_r2" }]),
    assistant([], "fixed"),
    user("thanks"),
    assistant([], "ok"),
  ];

  it("stays in full when the newer read is cleared", () => {
    const out = calls(createPruner({ preset: "balanced", rules: [clearReads], config: { idsFromTokens: 0, tool: false, commit: { minTokens: 0, breakEven: 0, pressureTokens: 0 } } }), h);
    const last = out.at(-1)!;
    expect(String(toolPart(last, "prt_r2")?.state?.output)).toMatch(/output cleared/);
    expect(toolPart(last, "prt_e")?.state?.output).toBe(ack);
  });
});

describe("the first change to the sent prefix counts only what goes through", () => {
  // ls1 is held in full by a rule, so a prune of ls2 (a newer view of the same output) is blocked
  // (never stale over fresh); two `git status` runs later, the first one's supersede waits for a batch
  const dir = mkdtempSync(join(tmpdir(), "acp-commit-"));
  const hold = join(dir, "hold.yaml");
  const ls = (id: string, lines: number) => assistant([{ tool: "bash", input: { command: "ls" }, output: bigText(id, lines), id }]);
  const status = (id: string, lines: number) => assistant([{ tool: "bash", input: { command: "git status" }, output: bigText(id, lines), id }]);
  writeFileSync(
    hold,
    `rules:\n  hold-first-ls:\n    phase: protect\n    description: test\n    when:\n      all:\n        - { fact: tool, operator: equal, value: bash }\n        - { fact: outputChars, operator: equal, value: ${bigText("prt_ls1", 40).length} }\n    then: { action: protect }\n`,
  );
  const h = [user("go"), ls("prt_ls1", 40), ls("prt_ls2", 41), status("prt_st1", 30), status("prt_st2", 31), assistant([], "done"), assistant([], "still")];

  it("a prune request that is blocked changes nothing, so the pending prunes behind it keep waiting", () => {
    const p = createPruner({ preset: "balanced", rules: [hold], config: { idsFromTokens: 0, commit: { minTokens: 1_000_000, breakEven: 0, pressureTokens: 0 } } });
    let before: Message[] = [];
    for (let i = 1; i <= 6; i++) p.transform((before = structuredClone(h.slice(0, i))));
    expect(superseded(before, "prt_st1")).toBe(false); // sent before st2 came: waits for a batch
    const ls2 = String(toolPart(before, "prt_ls2")?.state?.output).match(/\[acp:(t\w+)\]$/)?.[1];
    expect(ls2).toBeDefined();
    p.manual(SID, { action: "discard", targets: [ls2!] }, h);
    const after = structuredClone(h);
    p.transform(after);
    // ls2 stays in full beside the held ls1, so the sent prefix does not change: st1 keeps waiting
    expect(String(toolPart(after, "prt_ls2")?.state?.output)).toContain(bigText("prt_ls2", 41));
    expect(superseded(after, "prt_st1")).toBe(false);
    expect(toolPart(after, "prt_st1")).toEqual(toolPart(before, "prt_st1"));
  });
});

/**
 * ls1's supersede by ls2 is on the sent prefix and does not repay its re-cache (breakEven 25): it
 * waits. Then the model (or the user, /acp sweep) discards `target` by its id; returns the pruner and
 * the next call's messages.
 */
function discardWhileSupersedeWaits(target: "prt_ls1" | "prt_ls2") {
  const ls = (id: string, lines: number) => assistant([{ tool: "bash", input: { command: "ls" }, output: bigText(id, lines), id }]);
  const h = [user("go"), ls("prt_ls1", 40), ls("prt_ls2", 41), assistant([], "done"), assistant([], "still")];
  const p = createPruner({ preset: "balanced", config: WAITING });
  let before: Message[] = [];
  for (let i = 1; i <= h.length; i++) p.transform((before = structuredClone(h.slice(0, i))));
  expect(superseded(before, "prt_ls1")).toBe(false); // pending: does not repay on its own
  const id = String(toolPart(before, target)?.state?.output).match(/\[acp:(t\w+)\]$/)?.[1];
  expect(id).toBeDefined();
  expect(p.manual(SID, { action: "discard", targets: [id!] }, h).text).toMatch(/discarded/);
  const after = structuredClone(h);
  p.transform(after);
  return { p, after };
}
/** Batches that wait: 1M tokens, or a re-cache repaid 25 times over. */
const WAITING = { idsFromTokens: 0, commit: { minTokens: 1_000_000, breakEven: 25, pressureTokens: 0 } };

describe("a prune request on a newer view whose older view waits for a batch", () => {
  // A request is never deferred, and ls1 may not stay in full beside a pruned ls2, so ls1's supersede goes with it.
  it("goes on the next call, and takes the older view's pending supersede with it", () => {
    const { p, after } = discardWhileSupersedeWaits("prt_ls2");
    expect(String(toolPart(after, "prt_ls2")?.state?.output)).not.toContain(bigText("prt_ls2", 41));
    expect(superseded(after, "prt_ls1")).toBe(true);
    expect(p.explain(SID).find((x) => x.partId === "prt_ls2")?.rule).toBe("manual");
  });
});

describe("a prune request on a part whose own rule prune waits for a batch", () => {
  // The model discards ls1 itself. The request is never deferred: it takes the place of the waiting
  // supersede (before the fix the rule's want on this call hid the request, and ls1 stayed in full
  // while the reply said "discarded"). Likewise an earlier turn's reasoning that old-reasoning waits to prune.
  it("goes on the next call in the request's own form", () => {
    const { p, after } = discardWhileSupersedeWaits("prt_ls1");
    expect(String(toolPart(after, "prt_ls1")?.state?.output)).not.toContain(bigText("prt_ls1", 40));
    expect(p.explain(SID).find((x) => x.partId === "prt_ls1")?.rule).toBe("manual");
  });

  it("an earlier turn's reasoning the provider gets back, which old-reasoning waits to prune", () => {
    const think = "unsigned reasoning the provider gets back and bills on every request. ".repeat(20);
    const answer = "The plan, at length: ".concat("look at the tokenizer, then the parser. ".repeat(10));
    const h = unsigned([user("go"), withReasoning(assistant([], answer), think), user("next"), assistant([], "ok"), assistant([], "still")]);
    const p = createPruner({ preset: "balanced", config: WAITING });
    let before: Message[] = [];
    for (let i = 1; i <= h.length; i++) p.transform((before = structuredClone(h.slice(0, i))));
    expect(JSON.stringify(before)).toContain("unsigned reasoning the provider gets back"); // old-reasoning's placeholder waits for its batch
    const rid = JSON.stringify(before[1].parts).match(/\[acp:(r\w+)\]/)?.[1];
    expect(rid).toBeDefined();
    expect(p.manual(SID, { action: "discard", targets: [rid!] }, h).text).toMatch(/discarded/);
    const after = structuredClone(h);
    p.transform(after);
    expect(JSON.stringify(after)).not.toContain("unsigned reasoning the provider gets back");
  });
});

describe("a rule that rewrites signed reasoning", () => {
  // With earlierReasoning: sent, signed reasoning of earlier turns goes back to the provider, which
  // verifies its text: a rule's text patch there (old-reasoning's placeholder) becomes a drop.
  // Unsigned reasoning gets the placeholder: providers such as Kimi reject a tool-call message without it.
  const think = "reasoning long enough to be worth a placeholder, about the parser and the lexer. ".repeat(6);
  const h = [user("go"), withReasoning(assistant([], "planned"), think), user("next"), assistant([], "ok")];
  const run = (history: Message[]) => {
    const p = createPruner({ preset: "balanced", config: { earlierReasoning: "sent", idsFromTokens: 0, tool: false, commit: { minTokens: 0, breakEven: 0, pressureTokens: 0 } } });
    const out = structuredClone(history);
    p.transform(out);
    return out[1].parts.find((x) => x.type === "reasoning");
  };

  it("drops a signed block whole, and gives an unsigned one the placeholder", () => {
    expect(run(h)).toBeUndefined();
    expect(run(unsigned(h))?.text).toBe("[reasoning of an earlier turn pruned]");
  });
});

describe("an older view taken in beside a newer one that goes at a free break", () => {
  // turn 1: ls (O) and a large read; turn 2: ls (N), ls again (N2). At turn 3 the provider drops
  // turn 2's reasoning: N's supersede is behind that break (free), O's is pending before it, with
  // the large read between. Taking O in beside N re-caches the read for the little both free.
  const session = (): Message[] => [
    user("go"),
    withReasoning(assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls one", 8), id: "prt_o" }]), "thinking 1"),
    assistant([{ tool: "read", input: { filePath: "/big.txt" }, output: bigText("big", 400), id: "prt_big" }]),
    assistant([], "read"),
    user("next"),
    withReasoning(assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls two", 8), id: "prt_n" }]), "thinking 2"),
    assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("ls three", 8), id: "prt_n2" }]),
    assistant([], "listed"),
    user("again"),
    assistant([], "ok"),
  ];
  const run = (breakEven: number) => calls(createPruner({ preset: "verbose", config: { idsFromTokens: 0, tool: false, commit: { minTokens: 1_000_000, breakEven, pressureTokens: 0 } } }), session());

  it("goes only where the two repay re-caching up to the break; otherwise both stay in full", () => {
    const last = run(20).at(-1)!;
    expect(superseded(last, "prt_o")).toBe(false); // never stale over fresh: N stays in full too
    expect(superseded(last, "prt_n")).toBe(false);
  });

  it("goes where they repay it", () => {
    const last = run(0.01).at(-1)!;
    expect(superseded(last, "prt_o")).toBe(true);
    expect(superseded(last, "prt_n")).toBe(true);
  });
});

describe("a decision on reasoning the provider no longer receives", () => {
  // A user rule drops reasoning two turns old, signed or not. Signed reasoning of an earlier turn
  // is left out of the prompt by the host: dropping it changes nothing the provider receives, so it
  // goes at once, even where nothing else may change the cached prefix (no batches here).
  const dir = mkdtempSync(join(tmpdir(), "acp-commit-"));
  const rule = join(dir, "old-thinking.yaml");
  writeFileSync(
    rule,
    `rules:\n  old-thinking:\n    phase: reduce\n    description: test\n    when:\n      all:\n        - { fact: partType, operator: equal, value: reasoning }\n        - { fact: ageTurns, operator: greaterThanInclusive, value: 2 }\n    then: { action: drop }\n`,
  );
  const think = (k: number) => `thinking of turn ${k}, about the parser and the lexer at some length. `.repeat(8);
  const h = [user("go"), withReasoning(assistant([], "planned"), think(1)), user("next"), withReasoning(assistant([], "ok"), think(2)), user("third"), assistant([], "fine"), assistant([], "still")];
  const run = (history: Message[]) => calls(createPruner({ preset: "verbose", rules: [rule], config: noBatches }), history);
  const hasReasoning = (ms: Message[], k: number) => JSON.stringify(ms).includes(`thinking of turn ${k}`);

  it("is free: the first call of the turn where the rule matches drops it", () => {
    const out = run(h);
    // out[k]: the context of the k-th call (out[1] ends with "next", out[2] with "third")
    expect(hasReasoning(out[1], 1)).toBe(true); // turn 2: one turn old, the rule does not match
    expect(hasReasoning(out[2], 1)).toBe(false); // turn 3: dropped, though no batch may go
    expect(hasReasoning(out[2], 2)).toBe(true);
  });

  it("reasoning the provider gets back (unsigned) is part of the cached prefix: it waits", () => {
    const out = run(unsigned(h));
    expect(hasReasoning(out[2], 1)).toBe(true);
    expect(hasReasoning(out[4], 1)).toBe(true);
  });
});

describe("a restore is a free break", () => {
  // cat's output is discarded by request and sent so; ls1's supersede by ls2 is on the sent prefix
  // and waits for a batch. Then the user restores cat: the next prompt changes at cat anyway.
  const cat = assistant([{ tool: "bash", input: { command: "cat notes" }, output: bigText("prt_cat", 40), id: "prt_cat" }]);
  const ls = (id: string, lines: number) => assistant([{ tool: "bash", input: { command: "ls" }, output: bigText(id, lines), id }]);
  const h = [user("go"), cat, assistant([], "read"), ls("prt_ls1", 40), ls("prt_ls2", 41), assistant([], "done"), assistant([], "still")];

  /** Discards cat, replays up to "done" with ls1's supersede pending, restores cat; returns the next call's messages, transformed by `next`. */
  function restoreWhileWaiting(p: ReturnType<typeof createPruner>, next: (messages: Message[]) => void): Message[] {
    let before: Message[] = [];
    p.transform((before = structuredClone(h.slice(0, 2))));
    const id = String(toolPart(before, "prt_cat")?.state?.output).match(/\[acp:(t\w+)\]$/)?.[1];
    expect(p.manual(SID, { action: "discard", targets: [id!] }, h.slice(0, 2)).text).toMatch(/discarded/);
    for (let i = 3; i <= 6; i++) p.transform((before = structuredClone(h.slice(0, i))));
    expect(String(toolPart(before, "prt_cat")?.state?.output)).not.toContain(bigText("prt_cat", 40));
    expect(superseded(before, "prt_ls1")).toBe(false); // pending: does not repay on its own
    expect(p.restore(SID, "prt_cat", "user", h.slice(0, 6))).toBe(true);
    const after = structuredClone(h);
    next(after);
    expect(String(toolPart(after, "prt_cat")?.state?.output)).toContain(bigText("prt_cat", 40));
    return after;
  }

  it("what waits behind the restored part goes in the same call", () => {
    const p = createPruner({ preset: "balanced", config: WAITING });
    expect(superseded(restoreWhileWaiting(p, (m) => p.transform(m)), "prt_ls1")).toBe(true);
  });

  it("a process started between the restore and the next call decides the same (the state holds it)", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-restore-"));
    const p = createPruner({ preset: "balanced", config: WAITING, stateDir: dir });
    const fresh = (m: Message[]) => createPruner({ preset: "balanced", config: WAITING, stateDir: dir }).transform(m);
    expect(superseded(restoreWhileWaiting(p, fresh), "prt_ls1")).toBe(true);
  });
});
