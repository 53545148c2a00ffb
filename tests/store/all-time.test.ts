// All-time stats (engine/all-time.ts): one entry per session in a small JSON file, replaced under
// a lock and written atomically; concurrent processes keep each other's sessions; a broken or huge
// file is set aside, never fatal.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { sessionTotals, type RuleTotals } from "../../src/engine/totals.js";
import { allTimeTotals, MAX_BYTES, MAX_SESSIONS, readAllTime, recordSession } from "../../src/store/all-time.js";
import type { Message } from "../../src/graph/types.js";
import { assistant, bigText, replay, SID, user } from "../helpers/session.js";

const run = promisify(execFile);
const tick = () => new Promise((resolve) => setImmediate(resolve));
const totals = (parts: number, tokens: number, more: Partial<RuleTotals> = {}): RuleTotals => ({ parts, tokens, agent: 0, user: 0, rerun: 0, ...more });
const fileIn = () => join(mkdtempSync(join(tmpdir(), "acp-alltime-")), "all-time", "stats.json");

/** A session in which the second `git status` supersedes the first (identical-call). */
function history(sid: string): Message[] {
  const h = [user("go"), assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st1"), id: `${sid}_a` }]), assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st2"), id: `${sid}_b` }]), assistant([], "done")];
  for (const m of h) {
    m.info.sessionID = sid;
    for (const p of m.parts) p.sessionID = sid;
  }
  return h;
}

describe("all-time stats file", () => {
  it("keeps one entry per session: a session recorded again replaces its entry, others stay", () => {
    const file = fileIn();
    recordSession(file, "ses_a", { "identical-call": totals(1, 100) }, 1);
    recordSession(file, "ses_b", { "stale-read": totals(2, 50, { user: 1 }) }, 2);
    recordSession(file, "ses_a", { "identical-call": totals(2, 300) }, 3);
    const all = allTimeTotals(readAllTime(file).data);
    expect(all).toEqual({ sessions: 2, rules: { "identical-call": totals(2, 300), "stale-read": totals(2, 50, { user: 1 }) } });
  });

  it("folds the oldest sessions into one past total beyond MAX_SESSIONS; the totals stay", () => {
    const file = fileIn();
    for (let i = 0; i < MAX_SESSIONS + 3; i++) recordSession(file, `ses_${i}`, { r: totals(1, 10) }, i);
    const { data } = readAllTime(file);
    expect(Object.keys(data.sessions)).toHaveLength(MAX_SESSIONS);
    expect(data.sessions.ses_0).toBeUndefined();
    expect(data.past.sessions).toBe(3);
    expect(allTimeTotals(data)).toEqual({ sessions: MAX_SESSIONS + 3, rules: { r: totals(MAX_SESSIONS + 3, 10 * (MAX_SESSIONS + 3)) } });
  });

  it("a broken, foreign or huge file is reported and set aside, and a new one begins", () => {
    for (const bad of ["{not json", JSON.stringify({ version: 0, sessions: {} }), JSON.stringify({ version: 1, sessions: {}, pad: "x".repeat(MAX_BYTES) })]) {
      const file = fileIn();
      recordSession(file, "ses_x", {}, 0); // creates the folder
      writeFileSync(file, bad);
      expect(readAllTime(file).problem).toMatch(/unreadable/);
      const problems: string[] = [];
      recordSession(file, "ses_a", { r: totals(1, 7) }, 5, (m) => problems.push(m));
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain("moved to");
      expect(readdirSync(join(file, "..")).some((f) => f.startsWith("stats.json.bad-"))).toBe(true);
      expect(allTimeTotals(readAllTime(file).data)).toEqual({ sessions: 1, rules: { r: totals(1, 7) } });
    }
  });

  it("a file of a newer format is left as it is: nothing recorded, the problem reported", () => {
    const file = fileIn();
    recordSession(file, "ses_x", {}, 0);
    const newer = JSON.stringify({ version: 2, sessions: { ses_a: { at: 1, rules: { r: { parts: 1, tokens: 7 } } } }, past: { sessions: 0, rules: {} } });
    writeFileSync(file, newer);
    const problems: string[] = [];
    recordSession(file, "ses_b", { r: totals(1, 3) }, 5, (m) => problems.push(m));
    expect(problems).toEqual([expect.stringContaining("newer version of opencode-acp (format 2); left as it is")]);
    expect(readFileSync(file, "utf8")).toBe(newer);
    expect(readdirSync(join(file, "..")).some((f) => f.includes(".bad-"))).toBe(false);
    expect(readAllTime(file).problem).toContain("newer version");
  });

  it("values that are not counts are left out, never trusted", () => {
    const file = fileIn();
    recordSession(file, "ses_x", {}, 0);
    writeFileSync(file, JSON.stringify({ version: 1, sessions: { ses_a: { at: 1, rules: { r: { parts: "9", tokens: -5, user: 2.7, rerun: 1e400 } }, __proto__: {} } }, past: { sessions: -1 } }));
    expect(allTimeTotals(readAllTime(file).data)).toEqual({ sessions: 1, rules: { r: totals(0, 0, { user: 2 }) } });
  });

  it("two processes recording different sessions at the same time lose none of them (lock + atomic write)", async () => {
    const file = fileIn();
    const module = fileURLToPath(new URL("../../src/store/all-time.ts", import.meta.url));
    const script = `import { recordSession } from ${JSON.stringify(module)};
      const [file, who] = process.argv.slice(-2);
      for (let i = 0; i < 40; i++) recordSession(file, "ses_" + who + i, { r: { parts: 1, tokens: 1, agent: 0, user: 0, rerun: 0 } }, Date.now());`;
    const worker = join(file, "..", "..", "worker.mts");
    recordSession(file, "ses_first", {}, 0);
    writeFileSync(worker, script);
    await Promise.all(["p", "q"].map((who) => run(process.execPath, ["--import", "tsx", worker, file, who], { cwd: fileURLToPath(new URL("../..", import.meta.url)) })));
    const { data, problem } = readAllTime(file);
    expect(problem).toBeUndefined();
    expect(Object.keys(data.sessions)).toHaveLength(80);
    expect(existsSync(`${file}.lock`)).toBe(false);
  }, 60_000);
});

describe("the pruner records each session's totals", () => {
  it("prunes and regret of every session, from separate pruners (processes), in /acp stats' terms, once the call has returned", async () => {
    const file = fileIn();
    const config = { tool: false, commit: { minTokens: 0 } };
    const one = createPruner({ config, statsFile: file });
    replay(history("ses_one"), (m) => one.transform(m));
    expect(readAllTime(file).data.sessions).toEqual({}); // not during the call: the request does not wait for the file
    await tick();
    expect(Object.keys(readAllTime(file).data.sessions)).toEqual(["ses_one"]);
    const two = createPruner({ config, statsFile: file });
    replay(history("ses_two"), (m) => two.transform(m));
    expect(two.restore("ses_two", "ses_two_a", "user")).toBe(true);
    await tick();
    const all = createPruner({ config, statsFile: file }).allTime("ses_three");
    expect(all?.sessions).toBe(2);
    expect(all?.rules["identical-call"]).toMatchObject({ parts: 1, user: 1 });
    expect(all?.rules["identical-call"].tokens).toBe(sessionTotals(one.state("ses_one"))["identical-call"].tokens);
    expect(JSON.parse(readFileSync(file, "utf8")).sessions.ses_two.rules["identical-call"]).toEqual(totals(0, 0, { user: 1 }));
  });

  it("a stats file that cannot be written never fails a transform", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-alltime-"));
    writeFileSync(join(dir, "all-time"), "a file where the folder should be");
    const errors: string[] = [];
    const p = createPruner({ config: { tool: false, commit: { minTokens: 0 } }, statsFile: join(dir, "all-time", "stats.json"), onError: (_e, where) => errors.push(where) });
    const calls = replay(history(SID), (m) => p.transform(m));
    await tick();
    expect(JSON.stringify(calls[calls.length - 1])).toContain("superseded");
    expect(errors).toContain("stats");
    expect(errors).not.toContain("transform");
  });
});
