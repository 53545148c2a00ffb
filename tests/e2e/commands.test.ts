// `/acp stats` and `/acp context` in the real host (`opencode run --session S --command acp …`):
// the plugin answers in command.execute.before, so no model request is made; the reply is stored
// in the session as an ignored user message (visible in `opencode export`, never sent to the
// model). The session first gets one prune (a read superseded by a second read of the same file).
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResult, type ScriptedToolCall } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, ignoredTexts, pluginLoadErrors, type RunResult, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const NOTES = Array.from({ length: 30 }, (_, i) => `notes line ${i + 1}: a fairly ordinary line of text in the notes file`).join("\n");
/** The stats row of the rule that superseded the first read (identical call or same-file read). */
const SUPERSEDED_ROW = /(identical-call|read-supersedes-read)\s+1 parts\s+[1-9]/;


describe("/acp commands in the real host", () => {
  let ws: Workspace;
  let sessionID: string;
  /** What `opencode run --command acp …` did; filled by the tests in order. */
  const cmd: Record<string, { run: RunResult; requestsBefore: number; requestsAfter: number }> = {};

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "notes.txt": `${NOTES}\n` },
      plugins: [ACP_PLUGIN],
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 0 }, idsFromTokens: 0 }) },
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

  it("how `opencode run` ends after a handled /acp command (exit code and error event)", () => {
    // The plugin stops the model call by throwing a sentinel from command.execute.before; the
    // host then reports an error to the client. Recorded here so a change in the host shows up.
    for (const [args, c] of Object.entries(cmd)) {
      const errors = c.run.events.filter((e) => e.type === "error");
      expect(c.run.exitCode, `/acp ${args}: exit code`).toBe(1);
      expect(errors.length, `/acp ${args}: error events`).toBeGreaterThan(0);
      expect(String(errors[0].error?.data?.message), `/acp ${args}: error text`).toContain("Unexpected server error");
    }
  });
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
