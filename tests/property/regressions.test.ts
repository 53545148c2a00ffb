// Minimal counterexamples the property tests found, shrunk by fast-check and written out by hand;
// the seed and the property that found it are given. Fixed ones pass; an open one is `it.fails`
// (it passes while the bug is there) and its key is in KNOWN_OPEN (arbitraries.ts).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message, Part } from "../../src/graph/types.js";
import { ErrorSink, newStats, replayAndCheck, TMP } from "./invariants.js";
import { buildSession } from "./arbitraries.js";

const sid = "ses_regression";
const made: string[] = [];
const tmp = (p: string) => {
  const dir = mkdtempSync(join(TMP, p));
  made.push(dir);
  return dir;
};
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
const types = (ms: Message[]) => ms.map((m) => m.parts.map((p) => p.type));

/**
 * Replays a shrunk fail-open counterexample under compact with every invariant checked: reading
 * `prop` of what `target` picks throws once, on call `call` (as fail-open.test.ts injects it).
 */
function replayWithFault(label: string, dirPrefix: string, spec: unknown, schedule: object, call: number, target: (input: Message[]) => unknown, prop: string): string[] {
  const sink = new ErrorSink();
  const dir = tmp(dirPrefix);
  const pruner = createPruner({ preset: "compact", stateDir: dir, onError: sink.onError });
  const inject = {
    at: call,
    apply(input: Message[]) {
      const o = target(input) as Record<string, unknown>;
      let value = o[prop];
      let armed = true;
      Object.defineProperty(o, prop, { enumerable: true, configurable: true, get: () => { if (armed) { armed = false; throw new Error("injected fault"); } return value; }, set: (v) => (value = v) });
      return () => void (armed = false);
    },
  };
  return replayAndCheck(buildSession(spec as never), { ...schedule, restartAt: undefined } as never, { label, pruner, stateDir: dir, inject, sink }, newStats());
}

describe("duplicate part ids (presets.test.ts, seed 1990296199: odd shape dupParts)", () => {
  // A user text part and an assistant step-start share an id. Decisions are keyed by part id, so
  // the engine leaves a part alone when an earlier part has the same id: nothing is dropped, and a
  // live and a restarted process render the same thing (before the fix, the step-start's drop
  // decision emptied the user message after a restart).
  const history = (): Message[] => [
    { info: { id: "msg_1", sessionID: sid, role: "user" }, parts: [{ id: "prt_same", sessionID: sid, messageID: "msg_1", type: "text", text: "hello" }] },
    { info: { id: "msg_2", sessionID: sid, role: "assistant" }, parts: [{ id: "prt_same", sessionID: sid, messageID: "msg_2", type: "step-start" }, { id: "prt_t", sessionID: sid, messageID: "msg_2", type: "text", text: "answer" }] },
  ];

  it("a restarted process renders what the live one rendered (and never drops user text)", () => {
    const dir = tmp("acp-reg-dup-");
    const live = createPruner({ preset: "balanced", stateDir: dir });
    const first = history();
    live.transform(first);
    expect(types(first)).toEqual([["text"], ["step-start", "text"]]);
    const restarted = createPruner({ preset: "balanced", stateDir: dir });
    const again = history();
    restarted.transform(again);
    expect(types(again)).toEqual([["text"], ["step-start", "text"]]);
  });

  it("a part sharing an earlier part's id is never decided, so there is nothing to restore", () => {
    const p = createPruner({ preset: "balanced" });
    p.transform(history().slice(0, 1));
    const before = history();
    p.transform(before);
    expect(types(before)).toEqual([["text"], ["step-start", "text"]]);
    expect(p.restore(sid, "prt_same")).toBe(false);
  });
});

describe("assistant text without a string id (presets.test.ts, seed -622932284: noid + dupParts, text quoting tags)", () => {
  // The graph builds no node for a part whose id is not a string, so nothing addresses it: it
  // passes through as it came, echoed tags and all (the checker had expected them stripped). The
  // same text with an id has them stripped.
  const text = "line 0 [acp:t0] \nline 1 [acp:t1] ";
  const history = (id: unknown): Message[] => [
    { info: { id: "msg_1", sessionID: sid, role: "user" }, parts: [{ id: "prt_u", sessionID: sid, messageID: "msg_1", type: "text", text: "go" }] },
    { info: { id: "msg_2", sessionID: sid, role: "assistant" }, parts: [{ id, sessionID: sid, messageID: "msg_2", type: "text", text } as Part] },
  ];

  it("passes through untouched; with an id, the echoes are stripped", () => {
    const p = createPruner({ preset: "compact", config: { idsFromTokens: 0 }, stateDir: tmp("acp-reg-noid-") });
    const noId = history(7);
    p.transform(noId);
    expect(noId[1].parts[0].text).toBe(text);
    const withId = history("prt_a");
    p.transform(withId);
    expect(withId[1].parts[0].text).toBe("line 0\nline 1  ");
  });
});

describe("duplicate part ids in a repeated transform (presets.test.ts strict, seed -902120597: dupParts + swaps)", () => {
  // Fixed (was KNOWN_OPEN "dup-part-ids"). A step-start comes first with the id a later user text
  // part also has; the step-start is dropped. A repeated transform of that output re-renders the
  // decisions by part id (renderRepeat): the step-start is gone, so the id finds the user text. A
  // decision now records its part's type, and a part of another type is left alone.
  const history = (): Message[] => [
    { info: { id: "msg_1", sessionID: sid, role: "assistant" }, parts: [{ id: "prt_dup", sessionID: sid, messageID: "msg_1", type: "step-start" }, { id: "prt_a", sessionID: sid, messageID: "msg_1", type: "text", text: "answer" }] },
    { info: { id: "msg_2", sessionID: sid, role: "user" }, parts: [{ id: "prt_dup", sessionID: sid, messageID: "msg_2", type: "text", text: "hello" }] },
  ];

  // random-rules.test.ts nightly, seed 1367892394: two step-finish parts share an id and the
  // first is dropped. In our own output it is gone, so the repeated pass found the second by the
  // id and dropped it too (not idempotent). Our own output's drops are not applied again.
  it("a transform of its own output does not drop a later part that shares a dropped part's id", () => {
    const step = (msg: string, text: string): Message => ({
      info: { id: msg, sessionID: sid, role: "assistant" },
      parts: [{ id: `${msg}_start`, sessionID: sid, messageID: msg, type: "step-start" }, { id: `${msg}_text`, sessionID: sid, messageID: msg, type: "text", text }, { id: "prt_finish", sessionID: sid, messageID: msg, type: "step-finish" }],
    });
    const p = createPruner({ preset: "compact", config: { commit: { minTokens: 0 }, rules: { "step-markers": "on" } } });
    const out = [step("msg_a", "one"), step("msg_b", "two")];
    p.transform(out);
    const once = JSON.stringify(out);
    expect(types(out)).toEqual([["text"], ["text", "step-finish"]]);
    p.transform(out);
    expect(JSON.stringify(out)).toBe(once);
  });

  it("a transform of its own output keeps the user's text", () => {
    const p = createPruner({ preset: "compact", config: { commit: { minTokens: 0 }, rules: { "step-markers": "on" } } });
    const out = history();
    p.transform(out);
    expect(types(out)).toEqual([["text"], ["text"]]);
    p.transform(out);
    expect(types(out)).toEqual([["text"], ["text"]]);
  });
});

describe("duplicate part ids and id tags (presets.test.ts strict, seed 1968157949: dupParts)", () => {
  // A user text part and a later completed tool call share an id. Ids are keyed by part id and,
  // like decisions, name the first part with that id; the live process gave the tool call an id
  // tag anyway, and a restarted process (or the live one after a restore rebuilt its caches)
  // showed none: the tag changed in the cached prefix. A part sharing an earlier part's id now
  // gets no id, in every process.
  const output = "x".repeat(600);
  const history = (): Message[] => [
    { info: { id: "msg_1", sessionID: sid, role: "user" }, parts: [{ id: "prt_same", sessionID: sid, messageID: "msg_1", type: "text", text: "read it" }] },
    {
      info: { id: "msg_2", sessionID: sid, role: "assistant" },
      parts: [{ id: "prt_same", sessionID: sid, messageID: "msg_2", type: "tool", tool: "read", callID: "c1", state: { status: "completed", input: { filePath: "src/a.ts" }, output, title: "", metadata: {}, time: { start: 1, end: 2 } } }],
    },
  ];
  const shown = (ms: Message[]) => (ms[1].parts[0].type === "tool" ? ms[1].parts[0].state?.output : undefined);

  it("the live and a restarted process render the tool output alike, without a tag", () => {
    const dir = tmp("acp-reg-dup-ids-");
    const live = createPruner({ preset: "compact", config: { idsFromTokens: 0 }, stateDir: dir });
    live.transform(history().slice(0, 1));
    const first = history();
    live.transform(first);
    const restarted = createPruner({ preset: "compact", config: { idsFromTokens: 0 }, stateDir: dir });
    const again = history();
    restarted.transform(again);
    expect(shown(again)).toBe(shown(first));
    expect(shown(first)).toBe(output);
  });

  // presets.test.ts, seed 38278333: two tool calls share an id, the first one tagged. A transform
  // of the same history again (renderRepeat) found each part's tags by id, so the second call
  // showed the first one's tag too.
  it("a repeated transform shows a tag on the first part with the id only", () => {
    const read = (msg: string, out: string): Message => ({
      info: { id: msg, sessionID: sid, role: "assistant" },
      parts: [{ id: "prt_twice", sessionID: sid, messageID: msg, type: "tool", tool: "read", callID: msg, state: { status: "completed", input: { filePath: `${msg}.ts` }, output: out, title: "", metadata: {}, time: { start: 1, end: 2 } } }],
    });
    const twice = (): Message[] => [history()[0], read("msg_a", output), read("msg_b", "short")];
    const p = createPruner({ preset: "compact", config: { idsFromTokens: 0 } });
    const out = twice();
    p.transform(out);
    const tagged = (ms: Message[]) => ms.slice(1).map((m) => /\[acp:t\w+\]$/.test(String(m.parts[0].state?.output)));
    expect(tagged(out)).toEqual([true, false]);
    p.transform(out);
    expect(tagged(out)).toEqual([true, false]);
  });
});

describe("duplicate part ids and carried reasoning tags (presets.test.ts, seed 491568830: dupParts)", () => {
  // A text part shares its id with an earlier message's reasoning, and carries the id tag of the
  // reasoning before it in its own message. A transform of the same history again (renderRepeat)
  // took tags only for the first part with an id: it stripped the carried tag and left the newline.
  const text = "y".repeat(500);
  const reasoning = (id: string, msg: string) => ({ id, sessionID: sid, messageID: msg, type: "reasoning", text: "thinking ".repeat(60), metadata: { anthropic: { signature: "sig" } }, time: { start: 1, end: 2 } }) as Part;
  const history = (): Message[] => [
    { info: { id: "msg_1", sessionID: sid, role: "user" }, parts: [{ id: "prt_u1", sessionID: sid, messageID: "msg_1", type: "text", text: "go" }] },
    { info: { id: "msg_2", sessionID: sid, role: "assistant" }, parts: [reasoning("prt_same", "msg_2"), { id: "prt_t2", sessionID: sid, messageID: "msg_2", type: "text", text: "first" }] },
    { info: { id: "msg_3", sessionID: sid, role: "assistant" }, parts: [reasoning("prt_r3", "msg_3"), { id: "prt_same", sessionID: sid, messageID: "msg_3", type: "text", text }] },
  ];

  it("a repeated transform keeps the carried tag on a part that shares an earlier part's id", () => {
    const p = createPruner({ preset: "balanced", config: { idsFromTokens: 0 } });
    const out = history();
    p.transform(out);
    const carried = String(out[2].parts[1].text);
    expect(carried).toMatch(/\n\[acp:r\w+\]$/);
    const once = JSON.stringify(out);
    p.transform(out);
    expect(JSON.stringify(out)).toBe(once);
  });
});

describe("duplicate part ids across a compaction cut (presets.test.ts nightly, seed -1517283524: dupParts + cut)", () => {
  // A file attachment is masked; a compaction cuts its message off, and a later step-start has the
  // same part id. Decisions are keyed by part id, so the step-start was now the first part with
  // that id and got the attachment's decision: it was rendered as the text "[File: …]". A record
  // made for a part of another type now belongs to that part (`decisionsOf` in state.ts), and
  // the step-start is never decided while it holds one.
  let n = 0;
  const msg = (role: "user" | "assistant", parts: Record<string, unknown>[]): Message => {
    const id = `msg_${++n}`;
    return { info: { id, sessionID: sid, role }, parts: parts.map((p, i) => ({ id: `prt_${n}_${i}`, sessionID: sid, messageID: id, ...p })) } as Message;
  };
  const user = (text: string) => msg("user", [{ type: "text", text }]);
  const attachment = msg("user", [{ type: "text", text: "see the file" }, { id: "prt_same", type: "file", mime: "text/markdown", filename: "notes.md", url: `data:text/markdown;base64,${"aGVsbG8K".repeat(64)}` }]);
  const ack = () => msg("assistant", [{ type: "text", text: "ok" }]);
  // an answer after each user message: user messages one after another are one turn
  const before = [user("start"), attachment, ack(), user("one"), ack(), user("two"), ack(), user("three")];
  const after = [user("summary of what came before"), msg("assistant", [{ id: "prt_same", type: "step-start" }, { type: "text", text: "going on" }]), user("four")];

  it("the later part keeps its own type, in the live and in a restarted process", () => {
    const dir = tmp("acp-reg-dup-cut-");
    const live = createPruner({ preset: "balanced", stateDir: dir });
    const first = structuredClone(before);
    live.transform(first);
    expect(first[1].parts[1]).toMatchObject({ id: "prt_same", type: "text", text: expect.stringMatching(/^\[File: notes\.md, /) }); // masked
    const cut = structuredClone(after);
    live.transform(cut);
    expect(types(cut)).toEqual([["text"], ["step-start", "text"], ["text"]]);
    const restarted = createPruner({ preset: "balanced", stateDir: dir });
    const again = structuredClone(after);
    restarted.transform(again);
    expect(types(again)).toEqual([["text"], ["step-start", "text"], ["text"]]);
  });
});

describe("duplicate part ids and quoted id tags (presets.test.ts nightly, seed -1285410480: dupParts)", () => {
  // Assistant text that quotes id tags has them stripped (the model echoing "[acp:…]" would teach
  // it to write them). A text part sharing an earlier part's id was skipped whole by the runtime,
  // so its echoes went out as written.
  it("echoes are stripped from a part that shares an earlier part's id", () => {
    const history: Message[] = [
      { info: { id: "msg_1", sessionID: sid, role: "user" }, parts: [{ id: "prt_same", sessionID: sid, messageID: "msg_1", type: "text", text: "hi" }] },
      { info: { id: "msg_2", sessionID: sid, role: "assistant" }, parts: [{ id: "prt_same", sessionID: sid, messageID: "msg_2", type: "text", text: "see [acp:t1ab] above" }] },
    ];
    const p = createPruner({ preset: "balanced", config: { idsFromTokens: 0 } });
    p.transform(history);
    expect(history[1].parts[0].text).not.toContain("[acp:");
  });
});

describe("duplicate part ids across a compaction cut, two tool calls (presets.test.ts nightly, seed -150708195)", () => {
  // A tool call is superseded and tagged; a cut removes it, and a later call of another tool has
  // the same part id. Decisions and ids were keyed by part id and recorded only the part's type,
  // so the later call took the first one's decision and its tag. Both now record the tool call's
  // id (Decision.callID, SessionState.idCalls): a record made for another call stays with it.
  const tool = (msg: string, id: string, name: string, input: Record<string, unknown>, output: string): Message => ({
    info: { id: msg, sessionID: sid, role: "assistant" },
    parts: [{ id, sessionID: sid, messageID: msg, type: "tool", tool: name, callID: `call_${msg}`, state: { status: "completed", input, output, title: "", metadata: {}, time: { start: 1, end: 2 } } }],
  });
  const user = (msg: string, text: string): Message => ({ info: { id: msg, sessionID: sid, role: "user" }, parts: [{ id: `prt_${msg}`, sessionID: sid, messageID: msg, type: "text", text }] });

  it("the later call takes neither the cut-off call's decision nor its tag, in the live and in a restarted process", () => {
    const dir = tmp("acp-reg-dup-calls-");
    const options = { preset: "compact", stateDir: dir, config: { commit: { minTokens: 0 }, idsFromTokens: 0 } };
    const p = createPruner(options);
    const before = [user("msg_1", "go"), tool("msg_2", "prt_same", "bash", { command: "ls -la" }, "x".repeat(600)), tool("msg_3", "prt_b", "bash", { command: "ls -la" }, "y".repeat(600)), user("msg_4", "next")];
    const first = structuredClone(before);
    p.transform(first);
    expect(Object.keys(p.state(sid).decisions)).toContain("prt_same");
    expect(first[1].parts[0].state?.output).toMatch(/\[acp:t\w+\]$/); // the first call has an id
    const after = [user("msg_5", "summary"), tool("msg_6", "prt_same", "grep", { pattern: "z" }, "ok"), user("msg_7", "go on")];
    const cut = structuredClone(after);
    p.transform(cut);
    expect(cut[1].parts[0].state?.output).toBe("ok");
    const again = structuredClone(after);
    createPruner(options).transform(again);
    expect(again[1].parts[0].state?.output).toBe("ok");
  });
});

describe("distill with a whitespace-only summary (random-rules.test.ts, seed -824839102)", () => {
  it("creates no blank text part", () => {
    const dir = tmp("acp-reg-distill-");
    const file = join(dir, "rules.yaml");
    // `summary` has minLength 1 in the action's option schema, so " " loads without a problem
    writeFileSync(file, `rules:\n  fz-1:\n    phase: age\n    description: distill open parts\n    when: { fact: terminal, operator: equal, value: false }\n    then: { action: distill, summary: " " }\n`);
    const p = createPruner({ preset: "compact", rules: [file], config: { tool: false, commit: { minTokens: 0, pressureTokens: 0, breakEven: 0 } } });
    expect(p.problems.filter((x) => x.severity === "error")).toEqual([]);
    const text = Array.from({ length: 71 }, (_, i) => `${String(i + 1).padStart(5)}\t`).join("\n");
    const history: Message[] = [
      { info: { id: "msg_1", sessionID: sid, role: "user" }, parts: [{ id: "prt_1", sessionID: sid, messageID: "msg_1", type: "text", text: "go" }] },
      { info: { id: "msg_2", sessionID: sid, role: "assistant" }, parts: [{ id: "prt_2", sessionID: sid, messageID: "msg_2", type: "text", text }] },
      { info: { id: "msg_3", sessionID: sid, role: "user" }, parts: [{ id: "prt_3", sessionID: sid, messageID: "msg_3", type: "text", text: "next" }] },
    ];
    p.transform(history);
    const part = history[1].parts[0];
    // actual: " " — a text part the host drops as empty (the assistant message loses its text)
    expect(part.type === "text" && (part.text ?? "").trim().length > 0).toBe(true);
  });
});

describe("restore of a collapsed user code block (random-rules.test.ts, seed -939586878)", () => {
  it("sticks: the restored user text is not collapsed again", () => {
    // untouchable() in phases.ts returns for user text before it checks state.pinned, so
    // collapse-code-blocks (the one rule allowed on user text) ignores a restore.
    let n = 0;
    const user = (text: string): Message => ({ info: { id: `msg_${++n}`, sessionID: sid, role: "user" }, parts: [{ id: `prt_${n}`, sessionID: sid, messageID: `msg_${n}`, type: "text", text }] });
    const code = "Please look:\n```ts\n" + "const value = compute(input);\n".repeat(12) + "```\nthanks";
    const answer = (): Message => ({ info: { id: `msg_${++n}`, sessionID: sid, role: "assistant" }, parts: [{ id: `prt_${n}`, sessionID: sid, messageID: `msg_${n}`, type: "text", text: "ok" }] });
    // an answer after each user message: user messages one after another are one turn
    const history = [user(code), ...Array.from({ length: 6 }, (_, i) => [answer(), user(`turn ${i}`)]).flat()];
    const p = createPruner({ preset: "compact", config: { commit: { minTokens: 0 } } });
    const first = structuredClone(history);
    p.transform(first);
    expect(first[0].parts[0].text).toBe("Please look:\n[Code block: ts, 12 lines]\nthanks");
    expect(p.restore("ses_regression", "prt_1")).toBe(true);
    const second = structuredClone(history);
    p.transform(second);
    // actual: collapsed again in the same call
    expect(second[0].parts[0].text).toBe(code);
  });
});

describe("output actions on a pending tool call (random-rules.test.ts, seed -1518825276)", () => {
  it("do not grow the part: the host sends pending and running calls as interrupted whatever their output", () => {
    const dir = tmp("acp-reg-pending-");
    const file = join(dir, "rules.yaml");
    writeFileSync(file, `rules:\n  fz-1:\n    phase: age\n    description: clear edits\n    when: { fact: tool, operator: in, value: [edit] }\n    then: { action: clear, text: "·" }\n`);
    // protectedTools: [] — edit is protected by default
    const p = createPruner({ preset: "compact", rules: [file], config: { tool: false, protectedTools: [], commit: { minTokens: 0, pressureTokens: 0, breakEven: 0 } } });
    const history: Message[] = [
      { info: { id: "msg_1", sessionID: sid, role: "user" }, parts: [{ id: "prt_1", sessionID: sid, messageID: "msg_1", type: "text", text: "go" }] },
      { info: { id: "msg_2", sessionID: sid, role: "assistant" }, parts: [{ id: "prt_2", sessionID: sid, messageID: "msg_2", type: "tool", tool: "edit", callID: "call_1", state: { status: "pending", input: { filePath: "src/a.ts", oldString: "a", newString: "b" }, raw: "" } }] },
      { info: { id: "msg_3", sessionID: sid, role: "user" }, parts: [{ id: "prt_3", sessionID: sid, messageID: "msg_3", type: "text", text: "next" }] },
    ];
    const before = JSON.stringify(history[1].parts[0]);
    p.transform(history);
    // actual: state.output "·" is added to the pending call (toolResultText counts the pending
    // call as its 32-char interrupted text, so the patch looks like a saving); the host ignores it
    expect(JSON.stringify(history[1].parts[0])).toBe(before);
  });
});

describe("fail-open (fail-open.test.ts)", () => {
  const out = (l: string) => Array.from({ length: 300 }, (_, i) => `${i} ${l} ${"x".repeat(40)}`).join("\n");
  const tool = (id: string, o: string) => ({ id, sessionID: sid, messageID: `m_${id}`, type: "tool", tool: "bash", callID: `c_${id}`, state: { status: "completed", input: { command: "ls" }, output: out(o), title: "", metadata: {}, time: { start: 1, end: 2 } } });
  const lsTwice = (): Message[] => [
    { info: { id: "m1", sessionID: sid, role: "user" }, parts: [{ id: "p1", sessionID: sid, messageID: "m1", type: "text", text: "go" }] },
    { info: { id: "m2", sessionID: sid, role: "assistant" }, parts: [tool("p2", "a")] },
    { info: { id: "m3", sessionID: sid, role: "assistant" }, parts: [tool("p3", "b")] },
  ];

  it("a state folder that cannot be written: an error reported from transform means the messages are unchanged", () => {
    // actual: saveState throws after render has pruned the messages; transform's catch reports it
    // as a transform error and the half-processed (here: fully pruned) messages go out
    const dir = tmp("acp-reg-rostate-");
    const file = join(dir, "not-a-folder");
    writeFileSync(file, "x");
    const errors: string[] = [];
    const pruner = createPruner({ preset: "balanced", stateDir: join(file, "state"), onError: (_e, where) => errors.push(where) });
    const history = lsTwice();
    const before = JSON.stringify(history);
    expect(() => pruner.transform(history)).not.toThrow();
    expect(errors.length).toBeGreaterThan(0);
    if (errors.includes("transform")) expect(JSON.stringify(history)).toBe(before);
  });

  it("an error after render started (seed -1831984854, fault in stripEchoes): the messages are unchanged", () => {
    // Any exception between the first mutation (render) and the end of transform leaves the
    // messages half-processed: here a read of message.info that throws once, during renderIds.
    const history = lsTwice();
    const before = JSON.stringify(history);
    let reads = 0;
    const m3 = history[2] as unknown as Record<string, unknown>;
    const info = m3.info;
    const errors: string[] = [];
    const pruner = createPruner({ preset: "balanced", onError: (_e, where) => errors.push(where) });
    Object.defineProperty(m3, "info", { enumerable: true, configurable: true, get: () => { if (++reads === 3) throw new Error("injected fault"); return info; } });
    pruner.transform(history);
    expect(errors).toEqual(["transform"]);
    // actual: p2 is already superseded when the fault hits
    expect(JSON.stringify(history)).toBe(before);
  });

  it("after a swallowed error the session recovers: restore works on the later calls (seed -1062704026)", () => {
    // buildGraph reuses the previous graph's byId map and adds the new nodes to it in place; when
    // the call then fails, those nodes stay in the runtime's graph.byId, and the next calls look up
    // (and restore) stale nodes: restore clears the slots of a dead node, the live one stays dropped.
    const P = (id: string, m: string, type: string, extra = {}) => ({ id, sessionID: sid, messageID: m, type, ...extra });
    const hist = (): Message[] => [
      { info: { id: "m1", sessionID: sid, role: "user" }, parts: [P("p1", "m1", "text", { text: "go" })] },
      { info: { id: "m2", sessionID: sid, role: "assistant" }, parts: [P("p2", "m2", "step-start"), P("p3", "m2", "text", { text: "ok" }), P("p4", "m2", "step-finish")] },
      { info: { id: "m3", sessionID: sid, role: "assistant" }, parts: [P("p5", "m3", "step-start"), P("p6", "m3", "step-finish")] },
    ];
    const errors: string[] = [];
    const p = createPruner({ preset: "compact", onError: (_e, where) => errors.push(where) });
    p.transform(hist().slice(0, 1));
    const faulty = hist().slice(0, 2);
    const part = faulty[1].parts[0] as unknown as Record<string, unknown>;
    let reads = 0;
    let type = part.type;
    Object.defineProperty(part, "type", { enumerable: true, configurable: true, get: () => { if (++reads === 3) throw new Error("injected fault"); return type; }, set: (v) => (type = v) });
    p.transform(faulty);
    expect(errors).toEqual(["transform"]);
    p.transform(hist());
    for (const id of Object.keys(p.state(sid).decisions)) p.restore(sid, id);
    const after = hist();
    p.transform(after);
    // actual: [["p1"], ["p3"], ["p5", "p6"]] — p2 and p4 stay dropped without a decision
    expect(after.map((m) => m.parts.map((x) => x.id))).toEqual([["p1"], ["p2", "p3", "p4"], ["p5", "p6"]]);
  });
});

describe("a part id that fails on its second read (seed -2117939297)", () => {
  it("the failed call leaves the graph whole: the next call prunes without an error", () => {
    // buildGraph read each new part's id again after the walk, outside the block that cuts the
    // appended nodes off on failure: the previous graph kept half a call's nodes, and the next
    // call's supersede looked up a node its id map did not have (TypeError, swallowed every call)
    const read = (id: string, path: string, out: string): Part => ({ id, sessionID: sid, messageID: id, type: "tool", callID: `c_${id}`, tool: "read", state: { status: "completed", input: { filePath: path }, output: out, title: "", metadata: {}, time: { start: 0, end: 1 } } } as Part);
    const hist = (): Message[] => [
      { info: { id: "m1", sessionID: sid, role: "user" }, parts: [{ id: "p1", sessionID: sid, messageID: "m1", type: "text", text: "go" }] },
      { info: { id: "m2", sessionID: sid, role: "assistant" }, parts: [read("p2", "/a.ts", "x\n".repeat(400))] },
      { info: { id: "m3", sessionID: sid, role: "assistant" }, parts: [read("p3", "/a.ts", "y\n".repeat(400))] },
      { info: { id: "m4", sessionID: sid, role: "user" }, parts: [{ id: "p4", sessionID: sid, messageID: "m4", type: "text", text: "next" }] },
    ];
    const errors: string[] = [];
    const p = createPruner({ preset: "compact", config: { commit: { minTokens: 0 } }, onError: (_e, where) => errors.push(where) });
    p.transform(hist().slice(0, 2));
    const faulty = hist().slice(0, 3);
    const part = faulty[2].parts[0] as unknown as Record<string, unknown>;
    let reads = 0;
    const id = part.id;
    Object.defineProperty(part, "id", { enumerable: true, configurable: true, get: () => { if (++reads === 2) throw new Error("injected fault"); return id; } });
    p.transform(faulty);
    expect(errors).toEqual(["transform"]);
    const after = hist();
    p.transform(after);
    expect(errors).toEqual(["transform"]);
    expect(String((after[1].parts[0] as { state: { output: string } }).state.output)).toContain("superseded");
  });
});

describe("a message with very many parts (huge shapes, targeted)", () => {
  it("dropping one part of a 250,000-part message keeps the others (or fails open)", () => {
    // applyDrops in render.ts empties the parts array, then refills it with
    // message.parts.push(...kept): past ~120k arguments the spread throws RangeError after the
    // array was emptied, transform swallows it, and the message goes out with no parts at all.
    const parts: Message["parts"] = [{ id: "pa", sessionID: sid, messageID: "m2", type: "step-start" }];
    for (let i = 0; i < 250_000; i++) parts.push({ id: `p${i}`, sessionID: sid, messageID: "m2", type: "text", text: "a" });
    const history: Message[] = [
      { info: { id: "m1", sessionID: sid, role: "user" }, parts: [{ id: "p0", sessionID: sid, messageID: "m1", type: "text", text: "go" }] },
      { info: { id: "m2", sessionID: sid, role: "assistant" }, parts },
    ];
    const errors: string[] = [];
    createPruner({ preset: "balanced", config: { tool: false, rules: { "step-markers": "on" } }, onError: (e) => errors.push((e as Error).message) }).transform(history);
    // actual: errors ["Maximum call stack size exceeded"], history[1].parts.length 0
    expect(history[1].parts.length).toBe(errors.length ? 250_001 : 250_000);
  }, 60_000);
});

describe("a reasoning id with no part to show it (presets.test.ts nightly, seed 516975713)", () => {
  // A step's reasoning is followed by blank text and a tool call whose output is not a string:
  // neither can show a tag (tags are appended to string outputs and to sent assistant text). The
  // reasoning then gets no id; before the fix it got one that rode on the tool part, and rendering
  // (whose carrier check read the rendered parts) showed it on the blank text instead.
  const P = (id: string, m: string, type: string, extra = {}) => ({ id, sessionID: sid, messageID: m, type, ...extra });
  const history = (): Message[] => [
    { info: { id: "m1", sessionID: sid, role: "user" }, parts: [P("p1", "m1", "text", { text: "look at it" })] },
    {
      info: { id: "m2", sessionID: sid, role: "assistant" },
      parts: [
        P("p2", "m2", "step-start"),
        P("p3", "m2", "reasoning", { text: Array.from({ length: 40 }, (_, i) => `line ${i} [acp:t${i % 5}] thinking`).join("\n") }),
        P("p4", "m2", "text", { text: "\n".repeat(54) }),
        P("p5", "m2", "tool", { tool: "bash", callID: "c5", state: { status: "completed", input: { command: "ls" }, output: { value: 42 }, title: "", metadata: {}, time: { start: 1, end: 2 } } }),
        P("p6", "m2", "step-finish"),
      ],
    },
    { info: { id: "m3", sessionID: sid, role: "user" }, parts: [P("p7", "m3", "text", { text: "next" })] },
  ];

  it("no part shows a reasoning id it cannot carry, and a second pass changes nothing", () => {
    for (const preset of ["compact", "balanced"]) {
      const pruner = createPruner({ preset, config: { idsFromTokens: 0 } });
      const out = history();
      pruner.transform(out);
      const text = JSON.stringify(out);
      expect(text, preset).not.toMatch(/\[acp:r/);
      pruner.transform(out);
      expect(JSON.stringify(out), preset).toBe(text);
    }
  });
});

describe("a fault in the middle of the graph walk (fail-open.test.ts nightly, seed 1467552894)", () => {
  // The walk extended the previous graph's node array in place; a fault midway (here: reading a
  // message's parts throws once) left that array with nodes its id map did not know, and a later
  // call took the part they stood for as a duplicate id: a part pruned two calls before went out
  // in full. The walk now copies the array before its first change. The shrunk counterexample as
  // the property generated it (a revert and a fault at call 11), replayed with every invariant.
  const [, spec, schedule, fault] = [0,{"sid":-1,"turns":[{"user":[{"k":"text","text":{"snippet":0}}],"steps":[{"markers":true,"tools":[],"extras":[]}]},{"user":[{"k":"text","text":{"blob":{"lines":71,"width":0,"flavor":0,"seed":0}}}],"steps":[{"markers":true,"tools":[],"extras":[]}]},{"user":[{"k":"text","text":{"snippet":0}}],"steps":[{"markers":true,"tools":[],"extras":[]},{"markers":true,"tools":[],"extras":[]},{"markers":true,"tools":[],"extras":[]},{"markers":true,"tools":[],"extras":[]}]},{"user":[{"k":"text","text":{"snippet":0}}],"steps":[{"markers":true,"tools":[],"extras":[]}]},{"user":[{"k":"text","text":{"snippet":0}}],"steps":[{"markers":true,"tools":[],"extras":[]},{"markers":false,"tools":[{"tool":"read","input":{"shape":0,"mix":0,"filePath":0,"command":0,"pattern":0,"url":0,"query":0,"content":{"lines":0,"width":0,"flavor":0,"seed":0},"oldString":{"lines":0,"width":0,"flavor":0,"seed":0},"newString":{"lines":13,"width":0,"flavor":0,"seed":0},"todos":"pending"},"status":"completed","output":{"blob":{"lines":13,"width":4,"flavor":2,"seed":0}},"error":{"blob":{"lines":0,"width":0,"flavor":0,"seed":0}},"compacted":false,"attachments":false,"interrupted":false,"odd":"none"}],"extras":[]},{"markers":true,"tools":[],"extras":[]}]},{"user":[{"k":"text","text":{"blob":{"lines":0,"width":0,"flavor":0,"seed":0}}}],"steps":[{"markers":false,"tools":[],"extras":[]},{"markers":true,"tools":[],"extras":[]}]}],"odd":{"dupParts":[],"dupMsgs":[],"swaps":[],"empties":[]}},{"repeatMask":0,"restores":[],"compact":{"at":50,"cut":13},"revert":{"at":5,"back":1}},{"call":11,"target":8,"prop":"parts","at":1}] as const;

  it("every prune stays through the failed call and after it", () => {
    const violations = replayWithFault("fault compact parts@1", "acp-reg-walkfault-", spec, schedule, fault.call, (input) => input[fault.target % input.length], "parts");
    expect(violations, violations.join("\n")).toEqual([]);
  });
});

describe("a restore right after a failed call (fail-open.test.ts, seed 96718880)", () => {
  // A restore without a history pins the part at the newest message of the last request (pins.ts).
  // The engine took that from its graph, which a failed call leaves as the call before made it; but
  // the failed request went out as it came, newer view and all. So the restore pinned the part
  // before a view the model had already seen, the next call took that view for a new one and ended
  // the pin, and the part restored a moment ago was pruned again. A failed call's history now names
  // the last request.
  const read = (id: string, out: string): Part => ({ id, sessionID: sid, messageID: `m_${id}`, type: "tool", callID: `c_${id}`, tool: "read", state: { status: "completed", input: { filePath: "/a.ts" }, output: out, title: "", metadata: {}, time: { start: 0, end: 1 } } } as Part);
  const hist = (): Message[] => [
    { info: { id: "m1", sessionID: sid, role: "user" }, parts: [{ id: "p1", sessionID: sid, messageID: "m1", type: "text", text: "go" }] },
    { info: { id: "m2", sessionID: sid, role: "assistant" }, parts: [read("p2", "x\n".repeat(400))] },
    { info: { id: "m3", sessionID: sid, role: "assistant" }, parts: [read("p3", "y\n".repeat(400))] },
    { info: { id: "m4", sessionID: sid, role: "assistant" }, parts: [read("p4", "z\n".repeat(400))] },
  ];

  it("the restored part stays in full on the next call", () => {
    const errors: string[] = [];
    const p = createPruner({ preset: "compact", config: { commit: { minTokens: 0 } }, onError: (_e, where) => errors.push(where) });
    p.transform(hist().slice(0, 3));
    expect(p.state(sid).decisions.p2?.output?.rule).toBe("identical-call");
    const faulty = hist();
    const part = faulty[3].parts[0] as unknown as Record<string, unknown>;
    const type = part.type;
    let reads = 0;
    Object.defineProperty(part, "type", { enumerable: true, configurable: true, get: () => { if (++reads === 1) throw new Error("injected fault"); return type; } });
    p.transform(faulty);
    expect(errors).toEqual(["transform"]);
    expect(p.restore(sid, "p2")).toBe(true);
    // actual before the fix: "m3", and the next call superseded p2 (and p3) by the read in m4
    expect(p.state(sid).pinned?.p2).toBe("m4");
    const after = hist();
    p.transform(after);
    expect(errors).toEqual(["transform"]);
    expect(after[1].parts[0]).toEqual(hist()[1].parts[0]);
  });

  // The shrunk counterexample as the property generated it: the fault hits the last call (19 of
  // 10 calls), the one that first holds the second websearch; the restore of everything follows.
  const [, spec, schedule, fault] = [0,{"sid":-1,"turns":[{"user":[{"k":"text","text":{"snippet":0}}],"steps":[{"markers":false,"tools":[{"tool":"websearch","input":{"shape":0,"mix":0,"filePath":0,"command":0,"pattern":0,"url":0,"query":2,"content":{"lines":71,"width":0,"flavor":0,"seed":0},"oldString":{"lines":0,"width":0,"flavor":0,"seed":0},"newString":{"lines":0,"width":0,"flavor":0,"seed":0},"todos":"pending"},"status":"completed","output":{"blob":{"lines":1,"width":3,"flavor":2,"seed":0}},"error":{"blob":{"lines":71,"width":0,"flavor":0,"seed":0}},"compacted":false,"attachments":false,"interrupted":false,"odd":"none"}],"extras":[]}]},{"user":[{"k":"text","text":{"raw":""}}],"steps":[{"markers":false,"text":{"blob":{"lines":13,"width":0,"flavor":0,"seed":0}},"tools":[],"extras":[]}]},{"user":[{"k":"text","text":{"snippet":0}}],"steps":[{"markers":true,"tools":[],"extras":[]},{"markers":true,"tools":[],"extras":[]},{"markers":true,"text":{"blob":{"lines":13,"width":0,"flavor":0,"seed":0}},"tools":[],"extras":[]}]},{"user":[{"k":"text","text":{"snippet":0}}],"steps":[{"markers":true,"tools":[],"extras":[]},{"markers":true,"tools":[],"extras":[]},{"markers":true,"tools":[],"extras":[]},{"markers":true,"tools":[{"tool":"websearch","input":{"shape":0,"mix":0,"filePath":0,"command":0,"pattern":0,"url":0,"query":2,"content":{"lines":0,"width":0,"flavor":0,"seed":0},"oldString":{"lines":71,"width":0,"flavor":0,"seed":0},"newString":{"lines":0,"width":0,"flavor":0,"seed":0},"todos":"pending"},"status":"completed","output":{"blob":{"lines":0,"width":0,"flavor":0,"seed":0}},"error":{"blob":{"lines":0,"width":0,"flavor":0,"seed":0}},"compacted":false,"attachments":false,"interrupted":false,"odd":"none"}],"extras":[]}]}],"odd":{"dupParts":[],"dupMsgs":[],"swaps":[],"empties":[]}},{"repeatMask":0,"restores":[]},{"call":19,"target":0,"prop":"text","at":1}] as const;

  it("the shrunk replay passes every invariant", () => {
    const violations = replayWithFault("fault compact text@1", "acp-reg-restorefault-", spec, schedule, fault.call, (input) => input.flatMap((m) => m.parts)[fault.target], "text");
    expect(violations, violations.join("\n")).toEqual([]);
  });
});

describe("a later message reusing the id of the last one sent (commit-invariants.test.ts, seed 1978246334: dupMsgs + swaps)", () => {
  // The previous call sent [user, assistant with signed reasoning]; this call adds an assistant message
  // with an errored read (compact trims its output) and a new user message, which drops the
  // reasoning from the prompt: the sent prefix changes, and nothing may wait behind it. The new
  // user message repeats the assistant's message id (OpenCode's ids are unique; the generator's
  // are not). The engine found where the last call's prompt ended by the last message with that
  // id, so it took the unsent read for sent and the new user turn for an old one (no free
  // reasoning break): the trim waited, pending behind the change. The first message with the id
  // is taken now, and the history renders as the same one with unique ids does.
  const at = (k: number) => 1_700_000_000_000 + k * 1000;
  const P = (id: string, m: string, type: string, extra = {}) => ({ id, sessionID: sid, messageID: m, type, ...extra });
  const history = (newUserId: string): Message[] => [
    { info: { id: "m1", sessionID: sid, role: "user", time: { created: at(0) } }, parts: [P("p1", "m1", "text", { text: "go" })] },
    { info: { id: "m2", sessionID: sid, role: "assistant", time: { created: at(1) } }, parts: [P("p2", "m2", "reasoning", { text: "thinking", metadata: { anthropic: { signature: "sig" } } })] },
    {
      info: { id: "m3", sessionID: sid, role: "assistant", time: { created: at(2) } },
      parts: [P("p3", "m3", "tool", { tool: "read", callID: "c3", state: { status: "error", input: { filePath: "src/a.ts" }, error: "x".repeat(360), time: { start: 1, end: 2 } } })],
    },
    { info: { id: newUserId, sessionID: sid, role: "user", time: { created: at(3) } }, parts: [P("p4", newUserId, "text", { text: "next" })] },
  ];
  const secondCall = (newUserId: string) => {
    const pruner = createPruner({ preset: "compact", config: { protectedTools: [], protectedFiles: [] } });
    pruner.transform(history(newUserId).slice(0, 2), { now: at(10) });
    const out = history(newUserId);
    pruner.transform(out, { now: at(11) });
    return { out, pending: pruner.lastCall(sid)?.pendingParts };
  };

  it("nothing waits behind the dropped reasoning, and the prompt is the one unique ids give", () => {
    const unique = secondCall("m4");
    expect(unique.pending).toEqual([]);
    expect((unique.out[2].parts[0].state?.error as string).length).toBeLessThan(360); // compact does trim it
    const dup = secondCall("m2");
    // actual before the fix: [{ partId: "p3", slot: "output" }], and the error went out whole
    expect(dup.pending).toEqual([]);
    expect(dup.out.map((m) => m.parts)).toEqual(unique.out.map((m) => m.parts.map((p) => (p.messageID === "m4" ? { ...p, messageID: "m2" } : p))));
  });
});
