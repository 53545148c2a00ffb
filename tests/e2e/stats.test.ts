// /acp stats across sessions and processes in the real host: the all-time figures (every
// session's prunes, per rule) and the regret signal (a pruned part restored by the user with
// /acp restore or by the agent with context_prune, a call re-run while its output was hidden).
// Session A (one `opencode run`) reads notes.txt three times: the two older reads are
// superseded; the user restores the second (restoring the first would bring the second back with
// it: an older view is never in full while a newer one is hidden). Session B (another process) reads other.txt twice
// (one prune), the agent discards the second read, reads the file again (a re-run of a hidden
// output) and restores the discarded read. `/acp stats` in a fourth process shows both sessions.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResult, type RecordedRequest } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, ignoredTexts, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const text = (tag: string) => `${Array.from({ length: 30 }, (_, i) => `${tag} line ${i + 1}: a fairly ordinary line of text in the file`).join("\n")}\n`;
/** The rule that supersedes an identical read (both are on in the default preset; the first listed wins). */
const READ_RULE = "(?:identical-call|read-supersedes-read)";

function idIn(req: RecordedRequest, callID: string): string {
  const m = /\[acp:(t[0-9a-z]+)\]\s*$/.exec(toolResult(req, callID) ?? "");
  if (!m) throw new Error(`request ${req.seq}: no [acp:…] id at the end of ${callID}'s result`);
  return m[1];
}

/** The rows of one section of a /acp stats reply ("acp stats …" or "all-time …"), by rule. */
function section(reply: string, head: RegExp): { head: string; rows: Record<string, string> } {
  const lines = reply.split("\n");
  const at = lines.findIndex((l) => head.test(l));
  if (at < 0) throw new Error(`no ${head} in:\n${reply}`);
  const rows: Record<string, string> = {};
  for (const l of lines.slice(at + 1)) {
    const m = /^  (\S+)\s+(\d+ parts.*)$/.exec(l);
    if (!m) break;
    rows[m[1]] = m[2];
  }
  return { head: lines[at], rows };
}

describe("/acp stats: all-time figures and regret, across sessions and processes", () => {
  let ws: Workspace;

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "notes.txt": text("notes"), "other.txt": text("other") },
      plugins: [ACP_PLUGIN],
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 0 }, idsFromTokens: 0 }) },
    });
  });
  afterAll(async () => ws?.dispose());

  it("shows both sessions' prunes and who regretted which rule's prunes", async () => {
    const notes = path.join(ws.projectDir, "notes.txt");
    const other = path.join(ws.projectDir, "other.txt");
    // session A: three identical reads, the older two superseded
    let secondRead = "";
    ws.model.enqueue(
      { toolCalls: [call("call_a1", "read", { filePath: notes })] },
      { toolCalls: [call("call_a2", "read", { filePath: notes })] },
      (req) => {
        secondRead = idIn(req, "call_a2");
        return { toolCalls: [call("call_a3", "read", { filePath: notes })] };
      },
      { text: "Read it three times." },
    );
    const a = await ws.run("Read notes.txt three times", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, a);
    expect(toolResult(a.requests[3], "call_a1")).toContain("superseded");
    expect(toolResult(a.requests[3], "call_a2")).toContain("superseded");

    // session B, another process: a prune by a rule, then the agent's discard, re-run and restore
    let discarded = "";
    ws.model.enqueue(
      { toolCalls: [call("call_b1", "read", { filePath: other })] },
      { toolCalls: [call("call_b2", "read", { filePath: other })] },
      (req) => {
        discarded = idIn(req, "call_b2");
        return { toolCalls: [call("call_b3", "context_prune", { action: "discard", targets: [discarded] })] };
      },
      (req) => {
        expect(toolResult(req, "call_b2")).toContain("discarded by the agent");
        return { toolCalls: [call("call_b4", "read", { filePath: other })] }; // the same call: a re-run of a hidden output
      },
      () => ({ toolCalls: [call("call_b5", "context_prune", { action: "restore", targets: [discarded] })] }),
      { text: "Done with other.txt." },
    );
    const b = await ws.run("Work on other.txt", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, b);
    expect(toolResult(b.requests[5], "call_b2")).toContain("other line 30");

    // the user restores one of A's prunes (a third process)
    await ws.run(`restore ${secondRead}`, { session: a.sessionID, command: "acp", timeoutMs: RUN_TIMEOUT });

    // and asks for the stats in session B (a fourth process)
    const requestsBefore = ws.model.requests.length;
    const stats = await ws.run("stats", { session: b.sessionID, command: "acp", timeoutMs: RUN_TIMEOUT });
    expect(ws.model.requests.length, "model requests during /acp stats").toBe(requestsBefore);
    const reply = ignoredTexts(await ws.exportSession(b.sessionID!)).find((t) => t.startsWith("acp stats"));
    expect(reply, stats.stdout).toBeDefined();
    expect(stats.stdout).toContain(reply!.split("\n")[0]); // what `opencode run` prints
    if (process.env.E2E_KEEP) console.log(`$ opencode run --session ${b.sessionID} --command acp stats\n${stats.stdout}`);

    // this session: the read superseded by a rule, and the agent's own discard it regretted twice
    const session = section(reply!, /^acp stats \(preset balanced\): 1 prune, /);
    expect(Object.keys(session.rows).sort()).toEqual([expect.stringMatching(new RegExp(`^${READ_RULE}$`)), "manual"].sort());
    expect(session.rows.manual).toMatch(/^0 parts\s+0 tokens  \(regret: 1 re-run, restored 1 by the agent\)$/);

    // all-time: both sessions, A's two prunes (one restored by the user) and B's
    const all = section(reply!, /^all-time \(2 sessions\): 2 prunes, /);
    const read = Object.entries(all.rows).find(([rule]) => new RegExp(`^${READ_RULE}$`).test(rule));
    expect(read?.[1]).toMatch(/^2 parts\s+[\d.K]+ tokens  \(regret: restored 1 by you\)$/);
    expect(all.rows.manual).toMatch(/^0 parts\s+0 tokens  \(regret: 1 re-run, restored 1 by the agent\)$/);
  }, 4 * RUN_TIMEOUT);
});
