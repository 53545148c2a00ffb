// A revert (OpenCode's /undo) removes the trailing turns from the history, and the host restores
// the files they changed. A part superseded by a view in those turns is the newest view again: it
// must not keep a note naming a later view the agent no longer has (src/engine/reverted.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message } from "../../src/graph/types.js";
import { assistant, bigText, replay, SID, toolPart, user, workTurns } from "../helpers/session.js";

const HOUR = 3_600_000;
const FILE = "/w/src/calc.ts";
const read = (v: string, id: string) => assistant([{ tool: "read", input: { filePath: FILE }, output: bigText(v, 120), id }]);
const write = (v: string, id: string) => assistant([{ tool: "write", input: { filePath: FILE, content: bigText(v, 60) }, output: "Wrote file successfully.", id }]);
const output = (m: Message[], id: string) => String(toolPart(m, id)?.state?.output);
const input = (m: Message[], id: string) => (toolPart(m, id)?.state?.input as { content?: string } | undefined)?.content;

/** Turn 1 reads the file, turn 2 `second` (a view of it), turn 3 is asked: the turn that gets undone is turn 2. */
function session(second: Message) {
  const turn1 = [user("read calc.ts"), read("calc v1", "prt_r1"), assistant([], "done")];
  const full = [...turn1, user("change it"), second, assistant([], "done"), user("and now?")];
  // undo of turn 2: its messages are gone, and the next prompt follows turn 1
  const reverted = [...structuredClone(turn1), user("do it differently")];
  return { full, reverted };
}

/** The whole session, with every pending change committed (the cache expired), then the request after the undo. */
function afterUndo(second: Message, stateDir?: string) {
  const { full, reverted } = session(second);
  const config = { commit: { minTokens: 0 } };
  const p = createPruner({ config, stateDir });
  replay(full, (m) => p.transform(m, { now: Date.now() + 2 * HOUR }));
  const before = structuredClone(full);
  p.transform(before, { now: Date.now() + 2 * HOUR });
  const after = structuredClone(reverted);
  p.transform(after, { now: Date.now() + 2 * HOUR });
  return { p, before, after, reverted, config };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("a revert removes the view a supersede stands for", () => {
  it("the read a later read superseded is sent in full again, and its decision is gone", () => {
    const { p, before, after } = afterUndo(read("calc v2", "prt_r2"));
    expect(output(before, "prt_r1")).toMatch(/superseded by a later read/); // committed before the undo
    expect(output(after, "prt_r1")).toBe(bigText("calc v1", 120));
    expect(p.state(SID).decisions.prt_r1).toBeUndefined();
  });

  it("a write's content a later write superseded comes back", () => {
    const turn1 = [user("write calc.ts"), write("calc v1", "prt_w1"), assistant([], "done")];
    const full = [...turn1, user("rewrite it"), write("calc v2", "prt_w2"), assistant([], "done"), user("and now?")];
    const p = createPruner({ config: { commit: { minTokens: 0 } } });
    replay(full, (m) => p.transform(m, { now: Date.now() + 2 * HOUR }));
    const before = structuredClone(full);
    p.transform(before, { now: Date.now() + 2 * HOUR });
    expect(input(before, "prt_w1")).not.toBe(bigText("calc v1", 60)); // stripped: superseded by the second write
    const after = [...structuredClone(turn1), user("keep the first version")];
    p.transform(after, { now: Date.now() + 2 * HOUR });
    expect(input(after, "prt_w1")).toBe(bigText("calc v1", 60));
    expect(p.state(SID).decisions.prt_w1).toBeUndefined();
  });

  it("a process started from the state file after the undo sends the same request", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "acp-reverted-"));
    dirs.push(dir);
    const { after, reverted, config } = afterUndo(read("calc v2", "prt_r2"), dir);
    const fresh = structuredClone(reverted);
    createPruner({ config, stateDir: dir }).transform(fresh, { now: Date.now() + 2 * HOUR });
    expect(JSON.stringify(fresh)).toBe(JSON.stringify(after));
    // ...and so does one started before the lift was saved: the lift follows from the history
    const dir2 = fs.mkdtempSync(path.join(os.tmpdir(), "acp-reverted-"));
    dirs.push(dir2);
    const { full } = session(read("calc v2", "prt_r2"));
    const first = createPruner({ config, stateDir: dir2 });
    replay(full, (m) => first.transform(m, { now: Date.now() + 2 * HOUR }));
    const restarted = structuredClone(reverted);
    createPruner({ config, stateDir: dir2 }).transform(restarted, { now: Date.now() + 2 * HOUR });
    expect(output(restarted, "prt_r1")).toBe(bigText("calc v1", 120));
  });

  it("the lift breaks the cached prefix at the lifted part: what waits behind it goes in the same call", () => {
    // turn 1 reads a.ts and c.ts; turns 2-10 run checks; turn 11 reads a.ts again and names c.ts, and the
    // cache expires: the first read of a.ts is superseded (c.ts is in use). Turn 11 is undone: c.ts
    // is 10 turns idle, so stale-read wants it (and the lifted read), and nothing batches them
    const t0 = Date.now();
    const readOf = (file: string, v: string, id: string) => assistant([{ tool: "read", input: { filePath: file }, output: bigText(v, 120), id }]);
    const turn1 = [user("read a.ts and c.ts"), readOf("/w/src/a.ts", "a v1", "prt_a1"), readOf("/w/src/c.ts", "c v1", "prt_c1"), assistant([], "read both")];
    const chatter = workTurns(2, 9);
    const full = [...turn1, ...chatter, user("look at a.ts again"), readOf("/w/src/a.ts", "a v2", "prt_a2"), assistant([], "a.ts changed; c.ts looks fine"), user("thanks")];
    const p = createPruner({ config: { commit: { minTokens: 1e9, breakEven: 0 } } });
    replay(full.slice(0, -1), (m) => p.transform(m, { now: t0 }));
    const before = structuredClone(full);
    p.transform(before, { now: t0 + 2 * HOUR });
    expect(output(before, "prt_a1")).toMatch(/superseded by a later read/);
    expect(output(before, "prt_c1")).toBe(bigText("c v1", 120));
    const after = [...structuredClone([...turn1, ...chatter]), user("something else")];
    p.transform(after, { now: t0 + 2 * HOUR + 60_000 });
    // both are idle reads now, and the prompt changes at a.ts anyway: they go together, nothing waits
    expect(output(after, "prt_a1")).toMatch(/output cleared/);
    expect(output(after, "prt_c1")).toMatch(/output cleared/);
    expect(p.state(SID).waiting).toBeUndefined();
  });

  it("the copy the host's compaction summarises (the history's head) lifts nothing", () => {
    const { full } = session(read("calc v2", "prt_r2"));
    const p = createPruner({ config: { commit: { minTokens: 0 } } });
    replay(full, (m) => p.transform(m, { now: Date.now() + 2 * HOUR }));
    const head = structuredClone(full.slice(0, 3));
    p.transform(head, { compaction: true, now: Date.now() + 2 * HOUR });
    expect(p.state(SID).decisions.prt_r1?.output?.by).toBe("prt_r2");
    const next = structuredClone(full);
    p.transform(next, { now: Date.now() + 2 * HOUR });
    expect(output(next, "prt_r1")).toMatch(/superseded by a later read/);
  });

  it("a revert that leaves the newer view keeps the supersede (sticky)", () => {
    const { full } = session(read("calc v2", "prt_r2"));
    const p = createPruner({ config: { commit: { minTokens: 0 } } });
    const more = [...full, assistant([{ tool: "bash", input: { command: "ls" }, output: "a\nb" }]), assistant([], "done"), user("undo that")];
    replay(more, (m) => p.transform(m, { now: Date.now() + 2 * HOUR }));
    const reverted = [...structuredClone(full.slice(0, -1)), user("something else")]; // turn 3 undone
    p.transform(reverted, { now: Date.now() + 2 * HOUR });
    expect(output(reverted, "prt_r1")).toMatch(/superseded by a later read/);
    expect(output(reverted, "prt_r2")).toBe(bigText("calc v2", 120));
  });
});
