import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { introText, isIntroPart, systemPrompt } from "../../src/engine/intro.js";
import { OPENCODE } from "../../src/host/profile.js";

const INTRO_TEXT = introText(OPENCODE);
const SYSTEM_PROMPT = systemPrompt(OPENCODE);
import type { Message } from "../../src/graph/types.js";
import { assistant, bigText, SID, user } from "../helpers/session.js";

// Each output is ~16.5K chars (~4.1K tokens): the prompt passes 8K tokens on the third call.
const session = (): Message[] => [
  user("go"),
  assistant([{ tool: "bash", input: { command: "npm test" }, output: bigText("one"), id: "prt_o1" }]),
  assistant([{ tool: "grep", input: { pattern: "x" }, output: bigText("two"), id: "prt_o2" }]),
  assistant([{ tool: "bash", input: { command: "ls -R" }, output: bigText("three"), id: "prt_o3" }]),
  assistant([{ tool: "grep", input: { pattern: "y" }, output: bigText("four"), id: "prt_o4" }]),
  assistant([], "done"),
];
const config = { preset: "verbose", tool: true, idsFromTokens: 8_000 };
/** The session of a thinking model, `next` (a user message) before its last step. */
const thinkingSession = (next: Message): Message[] => [...session().slice(0, 5).map((m) => (m.info.role === "assistant" ? thinking(m) : m)), next, thinking(assistant([], "done"))];
/** The prompt of every call of `h`, through one pruner. */
const replay = (h: Message[]): Message[][] => {
  const p = createPruner({ config });
  return calls(h).map((i) => {
    const ctx = structuredClone(h.slice(0, i));
    p.transform(ctx);
    return ctx;
  });
};
/** The message with a reasoning part before its other parts (a thinking model's step). */
const thinking = (m: Message): Message => {
  m.parts.splice(1, 0, { id: `${m.info.id}_r`, sessionID: SID, messageID: m.info.id, type: "reasoning", text: "let me think", time: { start: 1, end: 2 }, metadata: { anthropic: { signature: "sig" } } });
  return m;
};
/** What the provider receives: step-start markers are never sent (and verbose drops them). */
const sent = (ms: Message[]) => ms.map((m) => ({ ...m, parts: m.parts.filter((p) => p.type !== "step-start") }));
const calls = (h: Message[]) => h.map((m, i) => i).filter((i) => h[i].info.role === "assistant");
/** Where the instructions are: message index, the role the provider reads them under, the text. */
const intros = (ms: Message[]) => ms.flatMap((m, i) => m.parts.filter(isIntroPart).map((p) => ({ msg: i, role: m.info.role, text: p.text })));
const tagged = (ms: Message[]) => ms.flatMap((m) => m.parts).filter((p) => /\[acp:t\w+\]$/.test(String(p.state?.output ?? ""))).map((p) => p.id);

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

describe("the verbose preset", () => {
  const run = (options: Parameters<typeof createPruner>[0]) => {
    const h = session();
    const p = createPruner(options);
    return calls(h).map((i) => {
      const ctx = structuredClone(h.slice(0, i));
      p.transform(ctx);
      return { ctx, system: p.systemPrompt(SID) };
    });
  };
  it("adds no ids and no instructions unless the configuration sets tool: true", () => {
    for (const { ctx, system } of run({ preset: "verbose", config: { idsFromTokens: 8_000 } })) {
      expect(tagged(ctx)).toEqual([]);
      expect(intros(ctx)).toEqual([]);
      expect(system).toBe("");
    }
    const on = run({ preset: "verbose", config: { tool: true, idsFromTokens: 8_000 } });
    expect(tagged(on[on.length - 1].ctx).length).toBeGreaterThan(0);
    const balanced = run({ preset: "balanced", config: { idsFromTokens: 8_000 } });
    expect(intros(balanced[balanced.length - 1].ctx).length).toBe(1);
  });
});

describe("deferred ids and instructions", () => {
  it("add nothing while the prompt is small, then appear once in the unsent tail and stay put", () => {
    const h = session();
    const p = createPruner({ config });
    const out = calls(h).map((i) => {
      const ctx = structuredClone(h.slice(0, i));
      p.transform(ctx);
      return ctx;
    });
    expect(p.systemPrompt(SID)).toBe("");
    // calls 1-2 (prompt below 10K tokens): untouched
    expect(sent(out[0])).toEqual(sent(h.slice(0, 1)));
    expect(sent(out[1])).toEqual(sent(h.slice(0, 2)));
    // call 3: the instructions are a user message after the newest (assistant) message, whose output gets the first id
    expect(intros(out[2])).toEqual([{ msg: 3, role: "user", text: INTRO_TEXT }]);
    expect(out[2][2].parts.filter(isIntroPart)).toEqual([]); // nothing added to the assistant's own message
    expect(out[2][2].parts.every((p) => h[2].parts.some((q) => q.id === p.id))).toBe(true);
    expect(tagged(out[2])).toEqual(["prt_o2"]);
    // later calls: the same place, and the older outputs never get a tag (they were sent untagged)
    for (const later of out.slice(3)) {
      expect(intros(later)).toEqual([{ msg: 3, role: "user", text: INTRO_TEXT }]);
      expect(tagged(later)).not.toContain("prt_o1");
      expect(later.slice(0, 4)).toEqual(out[2]);
    }
    expect(tagged(out[4])).toEqual(["prt_o2", "prt_o3", "prt_o4"]);
  });

  it("a repeated pass over its own output keeps one copy, and a restarted process renders the same", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-intro-"));
    dirs.push(dir);
    const h = session();
    const a = createPruner({ config, stateDir: dir });
    for (const i of calls(h).slice(0, 3)) a.transform(structuredClone(h.slice(0, i)));
    const ctx = structuredClone(h.slice(0, 4));
    a.transform(ctx);
    const once = structuredClone(ctx);
    a.transform(ctx);
    expect(ctx).toEqual(once);
    expect(intros(ctx)).toHaveLength(1);
    a.transform(ctx); // a third pass over the same array (the second was a repeat)
    expect(ctx).toEqual(once);
    const b = createPruner({ config, stateDir: dir });
    const again = structuredClone(h.slice(0, 4));
    b.transform(again);
    expect(again).toEqual(once);
  });

  it("a new anchor is found when the old one left the history (compaction, revert)", () => {
    const h = session();
    const p = createPruner({ config });
    for (const i of calls(h).slice(0, 4)) p.transform(structuredClone(h.slice(0, i)));
    const cut = [user("summary of what we did"), ...structuredClone(h.slice(4, 5))];
    p.transform(cut);
    expect(intros(cut)).toEqual([]); // 1 output, below the threshold again
    const grown = [...structuredClone(cut), ...structuredClone(h.slice(1, 3)).map((m, k) => ({ ...m, info: { ...m.info, id: `msg_new_${k}` }, parts: m.parts.map((x) => ({ ...x, id: `${x.id}_new${k}` })) }))];
    p.transform(grown);
    expect(intros(grown)).toEqual([{ msg: 4, role: "user", text: INTRO_TEXT }]);
  });

  it("with reasoning in the current turn, the instructions wait for the next user message (a user message mid-turn would drop that reasoning)", () => {
    const h = thinkingSession(user("next, please"));
    const out = replay(h);
    // calls 3-4 are past the threshold, but their turn has reasoning: no note, no ids yet
    for (const ctx of out.slice(0, 4)) {
      expect(intros(ctx)).toEqual([]);
      expect(tagged(ctx)).toEqual([]);
    }
    // the first call after the user's next message: the note follows that message
    expect(intros(out[4])).toEqual([{ msg: 6, role: "user", text: INTRO_TEXT }]);
    expect(out[4][5].info.id).toBe(h[5].info.id);
  });

  it("a user message that sends nothing does not start a turn: the turn's reasoning still holds the note back", () => {
    // property tests, seed 741498959: an empty user text counted as a user turn, so the note followed it
    // and, as the first user message the provider receives since, dropped the reasoning before it
    const h = thinkingSession(user(""));
    const out = replay(h);
    for (const ctx of out) {
      expect(intros(ctx)).toEqual([]);
      expect(tagged(ctx)).toEqual([]);
    }
  });

  it("with idsFromTokens 0 the instructions are in the system prompt and ids start at once", () => {
    const h = session();
    const p = createPruner({ config: { ...config, idsFromTokens: 0 } });
    const ctx = structuredClone(h.slice(0, 2));
    p.transform(ctx);
    expect(p.systemPrompt(SID)).toBe(SYSTEM_PROMPT);
    expect(intros(ctx)).toEqual([]);
    expect(tagged(ctx)).toEqual(["prt_o1"]);
  });
});
