// `/acp` in the real host (`opencode run --session S --command acp …`): the plugin answers in
// command.execute.before, so no model request is made; the reply is stored in the session as an
// ignored user message (visible in `opencode export`, never sent to the model) and printed by
// `opencode run`, which then ends with the plugin's readable error (exit 1: OpenCode 1.18.33 has
// no other way for a plugin to skip the model call). The session first gets one prune (a read
// superseded by a second read of the same file). Also: explain and restore by the ids users see,
// explain of a part no rule pruned (why not),
// sweep counts, and configuration problems printed by `opencode run`.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResult, type ScriptedToolCall } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, ignoredTexts, pluginLoadErrors, type RunResult, type Workspace } from "./harness.js";
import type { RecordedRequest } from "./fake-model.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const NOTES = Array.from({ length: 30 }, (_, i) => `notes line ${i + 1}: a fairly ordinary line of text in the notes file`).join("\n");
/** The stats row of the rule that superseded the first read (identical call or same-file read). */
const SUPERSEDED_ROW = /(identical-call|read-supersedes-read)\s+1 parts\s+[1-9]/;
/** What `opencode run` prints after the answer (src/host/handled.ts). */
const HANDLED = (sub: string) => `acp: /acp ${sub} answered (the reply is above and in the session).`;

/** The id tag at the end of a tool result in a request the model received. */
function idIn(req: RecordedRequest, callID: string): string {
  const m = /\[acp:(t[0-9a-z]+)\]\s*$/.exec(toolResult(req, callID) ?? "");
  if (!m) throw new Error(`request ${req.seq}: no [acp:…] id at the end of ${callID}'s result`);
  return m[1];
}

/** The /acp replies stored in a session (ignored user texts starting with `prefix`). */
async function replies(ws: Workspace, sessionID: string, prefix: string): Promise<string[]> {
  return ignoredTexts(await ws.exportSession(sessionID)).filter((t) => t.startsWith(prefix));
}


describe("/acp commands in the real host", () => {
  let ws: Workspace;
  let sessionID: string;
  /** The id the first (superseded) read shows the model. */
  let readId: string;
  /** The id of the second read, which no rule prunes. */
  let freshId: string;
  /** What `opencode run --command acp …` did; filled by the tests in order. */
  const cmd: Record<string, { run: RunResult; requestsBefore: number; requestsAfter: number }> = {};

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "notes.txt": `${NOTES}\n` },
      plugins: [ACP_PLUGIN],
      // idle-large-output with its default tools (read too; balanced leaves reads to stale-read, which
      // passes over a short .txt unseen): explain of the fresh read then shows a rule whose facts
      // (idle calls, the user naming the file) a new process works out from the history
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 0 }, idsFromTokens: 0, rules: { "idle-large-output": { with: { tools: ["bash", "read", "grep", "webfetch", "websearch", "codesearch"] } } } }) },
    });
  });
  afterAll(async () => ws?.dispose());

  async function acp(args: string): Promise<RunResult> {
    const requestsBefore = ws.model.requests.length;
    const run = await ws.run(args, { session: sessionID, command: "acp", timeoutMs: RUN_TIMEOUT });
    cmd[args] = { run, requestsBefore, requestsAfter: ws.model.requests.length };
    return run;
  }

  it("setup: a session in which one read was superseded", async () => {
    const notes = path.join(ws.projectDir, "notes.txt");
    ws.model.enqueue(
      { toolCalls: [call("call_read_1", "read", { filePath: notes })] },
      { toolCalls: [call("call_read_2", "read", { filePath: notes })] },
      { text: "Read it twice." },
    );
    const run = await ws.run("Read notes.txt twice", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    expect(run.requests).toHaveLength(3);
    expect(toolResult(run.requests[2], "call_read_1")).toContain("superseded");
    sessionID = run.sessionID!;
    expect(sessionID).toMatch(/^ses_/);
    readId = idIn(run.requests[1], "call_read_1");
    freshId = idIn(run.requests[2], "call_read_2");
  }, RUN_TIMEOUT);

  it("/acp explain takes the id the model and the user see ([acp:t…] or t…); an unknown id says so", async () => {
    expect(readId).toBeDefined();
    await acp(`explain ${readId}`);
    await acp(`explain [acp:${readId}]`);
    await acp("explain tzzz");
    await acp(`explain ${freshId}`);
    const texts = await replies(ws, sessionID, "acp explain");
    expect(texts).toHaveLength(4);
    const explained = new RegExp(`^acp explain ${readId} \\(prt_\\w+, read notes\\.txt\\): supersede by rule "(identical-call|read-supersedes-read)" \\(\\d+ tokens saved\\)`);
    expect(texts[0]).toMatch(explained);
    expect(texts[1]).toBe(texts[0]);
    expect(texts[2]).toBe('acp explain: unknown id "tzzz". Ids are the ones in [acp:…] tags, such as t1bz, or part ids (prt_…).');
    // a part no rule pruned, asked in a new process: the rules that consider it and where each stands
    expect(texts[3]).toMatch(new RegExp(`^acp explain ${freshId} \\(prt_\\w+, read notes\\.txt\\): not pruned\\. Rules that consider it:\\n`));
    expect(texts[3]).toMatch(/\n {2}- read-supersedes-read: no newer part with the same key \("file:\/\S*notes\.txt"\)\n/);
    expect(texts[3]).toMatch(/\n {2}- idle-large-output: does not match: idleCalls = 0 \(greaterThanInclusive 20\); idleWorkCalls = 0 \(greaterThanInclusive 17\); userNamedTurns = 0 \(greaterThanInclusive 4\)$/);
  }, RUN_TIMEOUT);

  it("/acp stats makes no model request and stores its reply as an ignored message", async () => {
    expect(sessionID).toBeDefined();
    const run = await acp("stats");
    expect(run.timedOut, run.stderr.slice(-3000)).toBe(false);
    expect(pluginLoadErrors(run.stderr)).toEqual([]);
    expect(cmd.stats.requestsAfter - cmd.stats.requestsBefore, "model requests during /acp stats").toBe(0);

    const exported = await ws.exportSession(sessionID);
    const replies = ignoredTexts(exported).filter((t) => t.startsWith("acp stats"));
    expect(replies, JSON.stringify(ignoredTexts(exported))).toHaveLength(1);
    // The session has one committed prune of an output (the first read, superseded by the
    // identical second read). The reply comes from a new opencode process, so the plugin must
    // report the decisions it stored on disk.
    expect(replies[0]).not.toContain("nothing pruned yet");
    expect(replies[0]).toMatch(SUPERSEDED_ROW);
  }, RUN_TIMEOUT);

  it("/acp context makes no model request and stores its token breakdown as an ignored message", async () => {
    expect(sessionID).toBeDefined();
    const run = await acp("context");
    expect(run.timedOut, run.stderr.slice(-3000)).toBe(false);
    expect(cmd.context.requestsAfter - cmd.context.requestsBefore, "model requests during /acp context").toBe(0);

    const exported = await ws.exportSession(sessionID);
    const replies = ignoredTexts(exported).filter((t) => t.startsWith("acp context"));
    expect(replies, JSON.stringify(ignoredTexts(exported))).toHaveLength(1);
    expect(replies[0]).toMatch(/tool output\s+\S+/);
    // ~240 tokens of the superseded read are not sent any more
    expect(replies[0]).not.toMatch(/, 0 pruned from each request/);
  }, RUN_TIMEOUT);

  it("the command replies never reach the model, and the session goes on", async () => {
    expect(sessionID).toBeDefined();
    ws.model.enqueue({ text: "Continuing." });
    const run = await ws.run("Go on", { session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    expect(run.requests).toHaveLength(1);
    const sent = JSON.stringify(run.requests[0].body.messages);
    expect(sent).not.toContain("acp stats");
    expect(sent).not.toContain("acp context");
    expect(sent).toContain("Go on");
    expect(toolResult(run.requests[0], "call_read_1")).toContain("superseded");
  }, RUN_TIMEOUT);

  it("/acp restore takes the id users see: the read is sent in full again, until the file is read again", async () => {
    expect(readId).toBeDefined();
    await acp(`restore ${readId}`);
    expect((await replies(ws, sessionID, `acp: ${readId}`))[0]).toMatch(new RegExp(`^acp: ${readId} \\(prt_\\w+, read notes\\.txt\\) restored; it is sent in full from the next request\\.$`));
    ws.model.enqueue({ toolCalls: [call("call_read_3", "read", { filePath: path.join(ws.projectDir, "notes.txt") })] }, { text: "Continuing again." });
    const run = await ws.run("Go on again", { session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    expect(toolResult(run.requests[0], "call_read_1")).toMatch(new RegExp(`notes line 30: [^\\n]*\\n[\\s\\S]*\\[acp:${readId}\\]$`));
    expect(toolResult(run.requests[0], "call_read_1")).toContain("notes line 30");
    expect(toolResult(run.requests[0], "call_read_1")).not.toContain("superseded");
    // read again after the restore: the pin ends, and both older reads are stale beside the new one
    for (const old of ["call_read_1", "call_read_2"]) expect(toolResult(run.requests[1], old)).toContain("superseded");
    expect(toolResult(run.requests[1], "call_read_3")).toContain("notes line 30");
  }, RUN_TIMEOUT);

  it("`opencode run` prints the answer, then ends with the plugin's readable error (exit 1), no stack trace in the log", () => {
    // OpenCode 1.18.33 lets a plugin skip a command's model call only by failing the command
    // (docs/plugin.md); the failure names the command instead of "Unexpected server error".
    expect(Object.keys(cmd).length).toBeGreaterThanOrEqual(5);
    for (const [args, c] of Object.entries(cmd)) {
      const sub = args.split(" ")[0];
      expect(c.run.exitCode, `/acp ${args}: exit code`).toBe(1);
      const answer = c.run.events.filter((e) => e.type === "text").map((e) => String(e.part?.text));
      expect(answer, `/acp ${args}: the answer as a text event`).toHaveLength(1);
      expect(answer[0]).toMatch(sub === "restore" ? /^acp: / : new RegExp(`^acp ${sub}`));
      const errors = c.run.events.filter((e) => e.type === "error");
      expect(errors, `/acp ${args}: error events`).toHaveLength(1);
      expect(String(errors[0].error?.data?.message)).toContain(HANDLED(sub));
      expect(c.run.stdout + c.run.stderr).not.toContain("Unexpected server error");
      expect(c.run.stderr).not.toContain("__ACP_COMMAND_HANDLED__");
      expect(c.run.stderr.split("\n").filter((l) => /level=ERROR/.test(l) && /message=failed/.test(l)), `/acp ${args}: the host logged a failure`).toEqual([]);
      expect(c.run.stderr).not.toMatch(/\n\s+at .*(plugin|handled)\.js/);
    }
  });

  it("without --format json the user reads the answer on stdout and one line of error", async () => {
    const proc = await ws.exec(["run", "--session", sessionID, "--command", "acp", "stats"], RUN_TIMEOUT);
    expect(proc.exitCode).toBe(1);
    expect(proc.stdout).toMatch(/^acp stats\b.*\n/); // the answer, as stored
    expect(proc.stderr.replace(/\x1b\[[0-9;]*m/g, "").trim()).toBe(`Error: ${HANDLED("stats")} OpenCode ends a plugin's command this way: it has no other means to skip the model call.`);
  }, RUN_TIMEOUT);
});

// /acp sweep in the real host: the newest two outputs, then the rest of the turn's; each output is
// counted once, the breadcrumb and /acp explain name the user, and the notification after the
// next turn shows the sum of the figures the sweeps reported.
describe("/acp sweep in the real host", () => {
  let ws: Workspace;
  const FILE = (i: number) => Array.from({ length: 8 }, (_, k) => `file ${i} line ${k + 1}: a short line of ordinary text`).join("\n");

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: Object.fromEntries([1, 2, 3, 4].map((i) => [`f${i}.txt`, `${FILE(i)}\n`])),
      plugins: [ACP_PLUGIN],
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 0 }, idsFromTokens: 0 }) },
    });
  }, RUN_TIMEOUT);
  afterAll(async () => ws?.dispose());

  it("two sweeps report 2 + 2 outputs, the second leaves the first's alone, and the next turn shows their sum", async () => {
    const reads = [1, 2, 3, 4].map((i) => call(`call_f${i}`, "read", { filePath: path.join(ws.projectDir, `f${i}.txt`) }));
    ws.model.enqueue({ toolCalls: reads }, { text: "Read all four." });
    const first = await ws.run("Read the four files", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, first);
    const sessionID = first.sessionID!;
    const id4 = idIn(first.requests[1], "call_f4");

    const before = ws.model.requests.length;
    const printed: string[] = [];
    for (const args of ["sweep 2", "sweep", "sweep"]) {
      const run = await ws.run(args, { session: sessionID, command: "acp", timeoutMs: RUN_TIMEOUT });
      printed.push(...run.events.filter((e) => e.type === "text").map((e) => String(e.part?.text)));
    }
    expect(ws.model.requests.length - before, "model requests during the sweeps").toBe(0);
    const [a, b, c] = await replies(ws, sessionID, "acp sweep");
    const figure = (t: string | undefined) => Number(/\((\d+) tokens\)/.exec(t ?? "")?.[1]);
    // the counts first: the second sweep must not count the first one's outputs again
    expect([a, b, c].map((t) => /^acp sweep: (\d+) outputs? discarded/.exec(t ?? "")?.[1] ?? "0")).toEqual(["2", "2", "0"]);
    expect(a).toMatch(/^acp sweep: 2 outputs discarded by you \(\d+ tokens\) from the next request\.$/);
    expect(b).toMatch(/^acp sweep: 2 outputs discarded by you \(\d+ tokens\) from the next request; left alone: 2 already pruned\.$/);
    expect(c).toBe("acp sweep: nothing to discard since your last message; left alone: 4 already pruned.");
    expect(printed).toEqual([a, b, c]);

    ws.model.enqueue({ text: "Noted." });
    const next = await ws.run("Go on", { session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, next);
    for (const i of [1, 2, 3, 4]) expect(toolResult(next.requests[0], `call_f${i}`)).toMatch(new RegExp(`^read\\(\\{filePath: ".*f${i}\\.txt"\\}\\) → discarded by the user\\n\\[acp:t[0-9a-z]+\\]$`));
    const notices = ignoredTexts(await ws.exportSession(sessionID)).filter((t) => t.includes("acp: pruned this turn"));
    expect(notices).toEqual([`「 ⚙️ 4(${figure(a) + figure(b)}) ▼ 」 acp: pruned this turn`]);

    await ws.run(`explain ${id4}`, { session: sessionID, command: "acp", timeoutMs: RUN_TIMEOUT });
    const explained = (await replies(ws, sessionID, "acp explain"))[0];
    expect(explained).toMatch(new RegExp(`^acp explain ${id4} \\(prt_\\w+, read f4\\.txt\\): discarded by the user with /acp sweep \\(\\d+ tokens saved\\)$`));
  }, RUN_TIMEOUT * 2);
});

// Configuration problems reach `opencode run`: a notice after the turn would come after the run
// has exited, so they ride on the session's first message, which the run prints.
describe("configuration problems in `opencode run`", () => {
  it("are printed with the first message of the session", async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    const ws = await createWorkspace({ files: { ".opencode/acp.jsonc": '{\n  "protectedFile": ["**/secrets/**"]\n}\n' }, plugins: [ACP_PLUGIN] });
    try {
      ws.model.enqueue({ text: "Hello." });
      const run = await ws.run("Say hello", { timeoutMs: RUN_TIMEOUT });
      expectCleanRun(ws, run);
      const printed = run.events.filter((e) => e.type === "text").map((e) => String(e.part?.text));
      const notice = printed.find((t) => t.startsWith("acp: configuration problems"));
      expect(notice, JSON.stringify(printed)).toBeDefined();
      expect(notice).toContain(`${path.join(ws.projectDir, ".opencode", "acp.jsonc")}:2:3`);
      expect(JSON.stringify(run.requests[0].body.messages)).not.toContain("configuration problems");
      expect(run.stderr).not.toMatch(/invalid user part/);
    } finally {
      await ws.dispose();
    }
  }, RUN_TIMEOUT * 2);
});

// The same commands in one long-lived host (`opencode serve` + `opencode run --attach`), as in
// the TUI: the plugin instance that pruned is the one that answers.
describe("/acp commands in one long-lived host (serve + attach)", () => {
  let ws: Workspace;
  let server: Awaited<ReturnType<Workspace["serve"]>>;

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "notes.txt": `${NOTES}\n` },
      plugins: [ACP_PLUGIN],
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 0 }, idsFromTokens: 0 }) },
    });
    server = await ws.serve();
  }, RUN_TIMEOUT);
  afterAll(async () => {
    await server?.stop();
    await ws?.dispose();
  });

  it("/acp stats and /acp context report the prune without a model request", async () => {
    const notes = path.join(ws.projectDir, "notes.txt");
    ws.model.enqueue(
      { toolCalls: [call("call_read_1", "read", { filePath: notes })] },
      { toolCalls: [call("call_read_2", "read", { filePath: notes })] },
      { text: "Read it twice." },
    );
    const first = await ws.run("Read notes.txt twice", { attach: server.url, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, first);
    expect(first.requests).toHaveLength(3);
    expect(toolResult(first.requests[2], "call_read_1")).toContain("superseded");
    const sessionID = first.sessionID!;

    const before = ws.model.requests.length;
    const stats = await ws.run("stats", { attach: server.url, session: sessionID, command: "acp", timeoutMs: RUN_TIMEOUT });
    const context = await ws.run("context", { attach: server.url, session: sessionID, command: "acp", timeoutMs: RUN_TIMEOUT });
    expect(stats.timedOut || context.timedOut).toBe(false);
    expect(ws.model.requests.length - before, "model requests during the commands").toBe(0);

    const texts = ignoredTexts(await ws.exportSession(sessionID));
    const statsReply = texts.find((t) => t.startsWith("acp stats"));
    const contextReply = texts.find((t) => t.startsWith("acp context"));
    expect(statsReply, JSON.stringify(texts)).toBeDefined();
    expect(statsReply).toMatch(SUPERSEDED_ROW);
    expect(contextReply, JSON.stringify(texts)).toBeDefined();
    expect(contextReply).not.toMatch(/, 0 pruned from each request/);
  }, RUN_TIMEOUT);
});
