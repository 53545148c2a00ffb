import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { idFor } from "../../src/engine/ids.js";
import { addRegret, newState } from "../../src/engine/state.js";
import { journalFile, loadState, readState, saveState, stateFile, stateJson } from "../../src/store/state-files.js";
import { JOURNAL_VERSION } from "../../src/store/journal.js";
import { mergeState } from "../../src/store/merge.js";
import { appendStep, deepCopy, generateSession } from "../engine/session-gen.js";
import type { Message } from "../../src/graph/types.js";
import { assistant, bigText, SID, toolPart, user } from "../helpers/session.js";

const history = (): Message[] => [
  user("go"),
  assistant([
    { tool: "bash", input: { command: "npm test" }, output: bigText("tests"), id: "prt_s1" },
    { tool: "grep", input: { pattern: "foo" }, output: bigText("grep"), id: "prt_s2" },
  ]),
  assistant([], "thinking"),
];
// The supersede-only preset: the default preset's turn-boundary rules would clear these outputs first.
const config = { preset: "verbose", tool: true, commit: { minTokens: 1_000_000, breakEven: 0 }, idsFromTokens: 0 };
/** A session's state files as c75b3a6 wrote them (snapshot + unversioned journal), and the state it read back. */
const FIXTURE = fileURLToPath(new URL("./fixtures/unversioned", import.meta.url));
const output = (ms: Message[], id: string) => String(toolPart(ms, id)?.state?.output);

describe("durable state", () => {
  it("two processes on one session keep each other's prunes (lock + merge, no lost update)", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-two-"));
    const h = history();
    const a = createPruner({ config, stateDir: dir });
    const b = createPruner({ config, stateDir: dir });
    a.transform(structuredClone(h));
    b.transform(structuredClone(h)); // b loaded the state before a's discard below
    const [s1, s2] = [idFor("prt_s1", {}), idFor("prt_s2", {})];
    expect(a.manual(SID, { action: "discard", targets: [s1] }, h).ok).toBe(true);
    expect(b.manual(SID, { action: "discard", targets: [s2] }, h).ok).toBe(true);
    const fresh = createPruner({ config, stateDir: dir });
    const out = structuredClone(h);
    fresh.transform(out);
    expect(output(out, "prt_s1")).toContain("discarded by the agent");
    expect(output(out, "prt_s2")).toContain("discarded by the agent");
    // and the stale process itself picks up the other's decision on its next call
    const later = structuredClone([...h, user("next")]);
    b.transform(later);
    expect(output(later, "prt_s1")).toContain("discarded by the agent");
  });

  // Two-process fuzz, seed 589466114 (nightly run): a repeated discard of a part the other process
  // had already pruned deleted the committed decision until this process's next transform, so the
  // other process rendered the part in full for a call (a prune re-appearing, and a cache break).
  it("discarding again what the other process already pruned keeps the decision on disk", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-again-"));
    const h = history();
    const [a, b] = [createPruner({ config, stateDir: dir }), createPruner({ config, stateDir: dir })];
    a.transform(structuredClone(h));
    const s1 = idFor("prt_s1", {});
    expect(a.manual(SID, { action: "discard", targets: [s1] }, h).ok).toBe(true);
    a.transform(structuredClone(h)); // committed and written
    b.transform(structuredClone([...h, user("next")])); // b sees it
    expect(b.manual(SID, { action: "discard", targets: [s1] }, h).ok).toBe(true);
    const onDisk = JSON.parse(readFileSync(stateFile(dir, SID)!, "utf8"));
    expect(onDisk.decisions.prt_s1?.output?.rule).toBe("manual");
    const next = structuredClone([...h, user("next")]);
    a.transform(next);
    expect(output(next, "prt_s1")).toContain("discarded by the agent");
  });

  // Regressions of the two-process fuzz (tests/property/two-processes.test.ts): the merge used to
  // add whatever the disk had and we lacked, so it could not tell a restore elsewhere from a
  // decision we had not seen yet.
  describe("a restore in one process and a stale view in the other", () => {
    function two() {
      const dir = mkdtempSync(join(tmpdir(), "acp-restore-"));
      const h = history();
      const [a, b] = [createPruner({ config, stateDir: dir }), createPruner({ config, stateDir: dir })];
      a.transform(structuredClone(h));
      b.transform(structuredClone(h));
      return { dir, h, a, b, s1: idFor("prt_s1", {}) };
    }

    it("a model's discard restored elsewhere does not come back from the other process's memory", () => {
      const { dir, h, a, b, s1 } = two();
      expect(a.manual(SID, { action: "discard", targets: [s1] }, h).ok).toBe(true);
      b.transform(structuredClone([...h, user("1")])); // b now holds the discard and its decision
      expect(a.restore(SID, "prt_s1")).toBe(true);
      const next = structuredClone([...h, user("1"), user("2")]);
      b.transform(next); // b's save merges a's restore
      expect(output(next, "prt_s1")).toBe(`${bigText("tests")}\n[acp:${s1}]`);
      const fresh = createPruner({ config, stateDir: dir });
      expect(fresh.state(SID).manual?.prt_s1).toBeUndefined();
      expect(fresh.state(SID).decisions.prt_s1).toBeUndefined();
    });

    it("the other process renders the restored part in full on its very next call", () => {
      const { h, a, b, s1 } = two();
      expect(b.manual(SID, { action: "discard", targets: [s1] }, h).ok).toBe(true);
      a.transform(structuredClone([...h, user("0")])); // a's save merges b's discard (it shows from the next call)
      const pruned = structuredClone([...h, user("0"), user("1")]);
      a.transform(pruned);
      expect(output(pruned, "prt_s1")).toContain("discarded by the agent");
      expect(b.restore(SID, "prt_s1")).toBe(true);
      const next = structuredClone([...h, user("0"), user("1"), user("2")]);
      a.transform(next);
      expect(output(next, "prt_s1")).toBe(`${bigText("tests")}\n[acp:${s1}]`);
    });

    it("a discard after a restore elsewhere holds, even when this process had discarded the part before", () => {
      const { dir, h, a, b, s1 } = two();
      expect(a.manual(SID, { action: "discard", targets: [s1] }, h).ok).toBe(true);
      b.transform(structuredClone([...h, user("1")]));
      expect(b.restore(SID, "prt_s1")).toBe(true);
      expect(a.manual(SID, { action: "discard", targets: [s1] }, h).ok).toBe(true); // a never saw the restore
      const fresh = createPruner({ config, stateDir: dir });
      expect(fresh.state(SID).manual?.prt_s1).toEqual({ action: "discard" });
      expect(fresh.state(SID).pinned?.prt_s1).toBeUndefined();
    });
  });

  it("a corrupt state file is moved aside and the model's prunes are rebuilt from its tool calls", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-corrupt-"));
    const h = history();
    const s1 = idFor("prt_s1", {});
    h.push(assistant([{ tool: "context_prune", input: { action: "distill", targets: [{ id: s1, summary: "tests pass" }] }, output: `${s1}: distilled` }]));
    h.push(assistant([], "ok"));
    writeFileSync(stateFile(dir, SID)!, "{ not json");
    const errors: unknown[] = [];
    const p = createPruner({ config, stateDir: dir, manualTool: "context_prune", onError: (e) => errors.push(e) });
    const out = structuredClone(h);
    p.transform(out);
    expect(output(out, "prt_s1")).toBe(`bash({command: "npm test"}) → distilled by the agent: tests pass\n[acp:${s1}]`);
    expect(readdirSync(dir).some((f) => f.includes(".bad-"))).toBe(true);
    expect(String(errors[0])).toContain("unreadable");
  });

  it("a state from a newer version is left as it is and never misread: the session runs in memory, with a message", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-newer-"));
    const file = stateFile(dir, SID)!;
    const newer = JSON.stringify({ ...newState(SID), version: 99, decisions: { prt_x: "a newer shape" } });
    writeFileSync(file, newer);
    const errors: unknown[] = [];
    const p = createPruner({ config, stateDir: dir, onError: (e) => errors.push(e) });
    expect(p.state(SID).decisions).toEqual({});
    expect(String(errors[0])).toContain("newer version of opencode-acp (format 99)");
    p.transform(structuredClone(history()));
    expect(errors).toHaveLength(1);
    expect(readdirSync(dir).filter((f) => f.includes(".bad-"))).toHaveLength(0);
    expect(readFileSync(file, "utf8")).toBe(newer); // not written over
  });

  it("a journal whose head names a newer format is left as it is, and so is its snapshot", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-newer-journal-"));
    const a = createPruner({ config, stateDir: dir });
    a.transform(structuredClone(history()));
    const journal = journalFile(dir, SID)!;
    const head = JSON.parse(readFileSync(journal, "utf8").split("\n")[0]);
    expect(head).toEqual({ journal: expect.any(String), version: JOURNAL_VERSION });
    const newer = `${JSON.stringify({ ...head, version: JOURNAL_VERSION + 1 })}\n{"s":{"calls":7},"something":"new"}\n`;
    writeFileSync(journal, newer);
    const snapshot = readFileSync(stateFile(dir, SID)!, "utf8");
    const errors: unknown[] = [];
    const b = createPruner({ config, stateDir: dir, onError: (e) => errors.push(e) });
    b.transform(structuredClone(history()));
    expect(String(errors[0])).toContain(`newer version of opencode-acp (format ${JOURNAL_VERSION + 1})`);
    expect(b.state(SID).calls).toBe(1); // a fresh state, in memory
    expect(readFileSync(journal, "utf8")).toBe(newer);
    expect(readFileSync(stateFile(dir, SID)!, "utf8")).toBe(snapshot);
    expect(readState(dir, SID)).toBeUndefined(); // nor read by the merge of a save
  });

  it("reads a state written before journals had a version (fixture written by c75b3a6) as that code read it", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-unversioned-"));
    cpSync(FIXTURE, dir, { recursive: true });
    const expected = JSON.parse(readFileSync(join(dir, "expected-state.json"), "utf8"));
    expect(readFileSync(journalFile(dir, "ses_gen5")!, "utf8").split("\n")[0]).not.toContain("version");
    expect(readState(dir, "ses_gen5")).toEqual(expected);
    const errors: unknown[] = [];
    expect(loadState(dir, "ses_gen5", (m) => errors.push(m))).toEqual(expected);
    expect(errors).toEqual([]);
    // and carries on from it: the next save writes a versioned journal
    const p = createPruner({ preset: "compact", stateDir: dir, config: { idsFromTokens: 0 } });
    expect(p.state("ses_gen5").decisions).toEqual(expected.decisions);
    expect(saveState(dir, p.state("ses_gen5"))).toBe(false);
    expect(JSON.parse(readFileSync(journalFile(dir, "ses_gen5")!, "utf8").split("\n")[0]).version).toBe(JOURNAL_VERSION);
    expect(readState(dir, "ses_gen5")).toEqual({ ...expected, rev: expected.rev + 1, journal: expect.any(String) });
  });

  it("session ids never become paths outside the state folder", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-ids-"));
    for (const bad of ["../escape", "a/b", ".hidden", "", "x".repeat(300)]) {
      expect(stateFile(dir, bad)).toBeUndefined();
      expect(saveState(dir, newState(bad))).toBe(false);
    }
    expect(existsSync(join(dir, "..", "escape.json"))).toBe(false);
  });

  it("ids derive from part ids, so every process computes the same ones", () => {
    const taken: Record<string, string> = {};
    const a = idFor("prt_abc", taken);
    taken[a] = "prt_abc";
    expect(idFor("prt_abc", taken)).toBe(a);
    expect(a).toMatch(/^t[0-9a-z]{3}$/);
    taken[idFor("prt_other", {})] = "prt_x"; // force a collision on the short form
    expect(idFor("prt_other", taken)).toMatch(/^t[0-9a-z]{4,}$/);
    const p = createPruner({ config });
    const out = structuredClone(history());
    p.transform(out);
    expect(output(out, "prt_s2").endsWith(`[acp:${idFor("prt_s2", {})}]`)).toBe(true);
  });
});

describe("state file writing", () => {
  it("the snapshot is exactly JSON.stringify(state); later saves go to the journal, and both read back as the state", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-statejson-"));
    const pruner = createPruner({ preset: "compact", stateDir: dir, config: { idsFromTokens: 0 } });
    let history = generateSession({ seed: 3, turns: 12, stepsPerTurn: 2, toolsPerStep: 4, odd: true });
    const sid = history[0].info.sessionID;
    pruner.transform(deepCopy(history));
    expect(readFileSync(stateFile(dir, sid)!, "utf8")).toBe(JSON.stringify(pruner.state(sid)));
    let checked = 0;
    for (let k = 0; k < 8; k++) {
      history = appendStep(history, 40 + k, 3, k % 2 === 0);
      pruner.transform(deepCopy(history));
      if (k === 3) pruner.restore(sid, Object.keys(pruner.state(sid).decisions)[0]);
      if (k === 5) expect(pruner.manual(sid, { action: "discard", targets: [Object.keys(pruner.state(sid).ids!)[0]] }, history).ok).toBe(true);
      const state = pruner.state(sid);
      expect(stateJson(state)).toBe(JSON.stringify(state));
      expect(readState(dir, sid)).toEqual(JSON.parse(JSON.stringify(state)));
      checked += Object.keys(state.decisions).length;
    }
    expect(checked).toBeGreaterThan(20);
    // one line per save after the snapshot: 8 transforms, a restore and a prune request
    expect(readFileSync(journalFile(dir, sid)!, "utf8").trim().split("\n")).toHaveLength(1 + 10);
  });

  it("a torn last journal line is ignored, and so is a journal left from an older snapshot", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-journal-"));
    const pruner = createPruner({ preset: "compact", stateDir: dir });
    let history = generateSession({ seed: 4, turns: 8, stepsPerTurn: 2, toolsPerStep: 4 });
    const sid = history[0].info.sessionID;
    pruner.transform(deepCopy(history));
    history = appendStep(history, 40, 3, true);
    pruner.transform(deepCopy(history));
    const whole = JSON.parse(JSON.stringify(pruner.state(sid)));
    const journal = journalFile(dir, sid)!;
    const text = readFileSync(journal, "utf8");
    writeFileSync(journal, `${text}{"s":{"calls":99`); // a save cut short by a crash
    expect(loadState(dir, sid)).toEqual(whole);
    // a crash after a new snapshot, before its journal: the old journal's lines must not apply
    const snapshot = JSON.parse(readFileSync(stateFile(dir, sid)!, "utf8"));
    writeFileSync(stateFile(dir, sid)!, JSON.stringify({ ...snapshot, journal: "newer" }));
    expect(loadState(dir, sid).calls).toBe(snapshot.calls);
    expect(whole.calls).toBeGreaterThan(snapshot.calls);
  });

  it("regret events go to the journal, and two processes' events are merged (neither is lost)", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-regretstate-"));
    const a = newState("ses_r");
    saveState(dir, a);
    const b = loadState(dir, "ses_r");
    addRegret(a, "user:prt_a:1:stale-read", { rule: "stale-read", kind: "user", part: "prt_a" });
    expect(saveState(dir, a)).toBe(false); // nobody else wrote: one journal line
    expect(readFileSync(journalFile(dir, "ses_r")!, "utf8")).toContain("user:prt_a:1:stale-read");
    expect(readState(dir, "ses_r")?.regret).toEqual(a.regret);
    addRegret(b, "rerun:prt_c", { rule: "stale-shell-output", kind: "rerun", part: "prt_b" });
    expect(addRegret(b, "rerun:prt_c", { rule: "stale-shell-output", kind: "rerun", part: "prt_b" })).toBe(false); // once per key
    saveState(dir, b); // merges a's event
    const keys = ["rerun:prt_c", "user:prt_a:1:stale-read"];
    expect(Object.keys(b.regret ?? {}).sort()).toEqual(keys);
    expect(Object.keys(loadState(dir, "ses_r").regret ?? {}).sort()).toEqual(keys);
    saveState(dir, a); // and a picks up b's
    expect(Object.keys(a.regret ?? {}).sort()).toEqual(keys);
  });

  it("a write by another process is still merged (the file changed since this process wrote it)", () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-statestat-"));
    const ours = newState("ses_stat");
    saveState(dir, ours);
    const file = stateFile(dir, "ses_stat")!;
    // another process: same file, one more decision, a newer revision
    const theirs = JSON.parse(readFileSync(file, "utf8"));
    theirs.decisions.prt_x = { output: { rule: "manual", action: "manual", patch: { output: "x" }, tokens: 5, call: 0 } };
    theirs.rev += 1;
    writeFileSync(file, JSON.stringify(theirs));
    expect(saveState(dir, ours)).toBe(true);
    expect(ours.decisions.prt_x?.output?.rule).toBe("manual");
  });
});

describe("merging the parts restored since the last call (restoredSent)", () => {
  const at = (lastCallAt: number, restoredSent?: string[]) => ({ ...newState(SID), lastCallAt, ...(restoredSent ? { restoredSent } : {}) });

  it("takes a restore made in the other process since our last sync: the next prompt breaks there too", () => {
    const ours = at(5, ["prt_a"]);
    mergeState(ours, at(5, ["prt_b"]), at(5));
    expect(ours.restoredSent).toEqual(["prt_a", "prt_b"]);
  });

  it("a newer call elsewhere used them: its value stands", () => {
    const ours = at(5, ["prt_a"]);
    mergeState(ours, at(6), at(5, ["prt_a"]));
    expect(ours.restoredSent).toBeUndefined();
  });
});
