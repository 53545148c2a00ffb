// Proves the e2e harness itself: the real opencode binary runs scripted tool calls against the
// fake model, results come back in the next request, sessions continue, commands run, and a
// plugin's messages.transform edit is what the model receives.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_TITLE, toolResult, type RecordedRequest } from "./fake-model.js";
import { createWorkspace, pluginLoadErrors, type RunResult, type Workspace } from "./harness.js";

const SECRET = "secret token: 42";
const NOTES = `line one of notes\n${SECRET}\nline three\n`;
const RUN_TIMEOUT = 150_000;
const FIXTURE_PLUGIN = fileURLToPath(new URL("./fixtures/rewrite-plugin.ts", import.meta.url));

function userTexts(req: RecordedRequest): string[] {
  return req.body.messages
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

function readCall(ws: Workspace, id: string, file = "notes.txt") {
  return { id, name: "read", arguments: { filePath: path.join(ws.projectDir, file) } };
}

function expectCleanRun(run: RunResult): void {
  expect(run.timedOut, run.stderr.slice(-2000)).toBe(false);
  expect(run.exitCode, run.stderr.slice(-2000)).toBe(0);
}

describe("e2e harness without plugins", () => {
  let ws: Workspace;
  let first: RunResult;

  beforeAll(async () => {
    ws = await createWorkspace({
      files: { "notes.txt": NOTES },
      config: { command: { greet: { template: "Say hello to $ARGUMENTS", description: "test command" } } },
    });
  });
  afterAll(async () => ws?.dispose());

  it("sends the real output of a scripted read in the next request", async () => {
    ws.model.enqueue({ toolCalls: [readCall(ws, "call_read_1")] }, { text: "The token is 42." });
    first = await ws.run("Please read notes.txt");
    expectCleanRun(first);
    expect(first.sessionID).toMatch(/^ses_/);
    expect(first.requests).toHaveLength(2);
    expect(ws.model.pending).toBe(0);
    expect(ws.model.exhaustedCount).toBe(0);
    // the title request has no tools and did not consume the script
    expect(first.allRequests.some((r) => r.kind === "auxiliary")).toBe(true);
    expect(userTexts(first.requests[0]).join("\n")).toContain("Please read notes.txt");
    expect(JSON.stringify(first.requests[0].body.messages)).not.toContain(SECRET);
    expect(toolResult(first.requests[1], "call_read_1")).toContain(SECRET);
    const toolUse = first.events.find((e) => e.type === "tool_use");
    expect(toolUse?.part?.tool).toBe("read");
    expect(toolUse?.part?.state?.status).toBe("completed");
  }, RUN_TIMEOUT);

  it("exports the stored session", async () => {
    expect(first?.sessionID).toBeDefined();
    const exported = await ws.exportSession(first.sessionID!);
    expect(exported.info.id).toBe(first.sessionID);
    expect(exported.info.title).toBe(FAKE_TITLE); // answered by the fake's auxiliary reply
    const parts = exported.messages.flatMap((m) => m.parts);
    const read = parts.find((p) => p.type === "tool" && p.callID === "call_read_1");
    expect(read?.state?.output).toContain(SECRET);
  }, RUN_TIMEOUT);

  it("continues the session with --session", async () => {
    expect(first?.sessionID).toBeDefined();
    ws.model.enqueue({ text: "Still here." });
    const next = await ws.run("And now?", { session: first.sessionID });
    expectCleanRun(next);
    expect(next.sessionID).toBe(first.sessionID);
    expect(next.requests).toHaveLength(1);
    const req = next.requests[0];
    expect(toolResult(req, "call_read_1")).toContain(SECRET); // history came along
    expect(userTexts(req).at(-1)).toContain("And now?");
  }, RUN_TIMEOUT);

  it("runs a slash command with --command", async () => {
    expect(first?.sessionID).toBeDefined();
    ws.model.enqueue({ text: "Hello, world!" });
    const cmd = await ws.run("world", { session: first.sessionID, command: "greet" });
    expectCleanRun(cmd);
    expect(cmd.requests).toHaveLength(1);
    expect(userTexts(cmd.requests[0]).at(-1)).toContain("Say hello to world");
  }, RUN_TIMEOUT);
});

describe("e2e harness with a fixture plugin", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace({ files: { "notes.txt": NOTES }, plugins: [FIXTURE_PLUGIN] });
  });
  afterAll(async () => ws?.dispose());

  it("the model receives the tool output as the plugin's transform rewrote it", async () => {
    const log = path.join(ws.root, "fixture-plugin.jsonl");
    ws.model.enqueue({ toolCalls: [readCall(ws, "call_read_1")] }, { text: "ok" });
    const run = await ws.run("Please read notes.txt", { env: { FIXTURE_PLUGIN_LOG: log } });
    expectCleanRun(run);
    expect(pluginLoadErrors(run.stderr)).toEqual([]);
    expect(run.requests).toHaveLength(2);
    expect(toolResult(run.requests[1], "call_read_1")).toBe("[fixture-plugin] rewrote read call_read_1");
    expect(JSON.stringify(run.requests[1].body.messages)).not.toContain(SECRET);

    const calls = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(calls.filter((c) => c.hook === "init")).toHaveLength(1);
    const transforms = calls.filter((c) => c.hook === "messages.transform");
    expect(transforms.map((t) => t.rewritten)).toEqual([[], ["call_read_1"]]); // once per main request

    // the transform changes only the request, not the stored session
    const exported = await ws.exportSession(run.sessionID!);
    const read = exported.messages.flatMap((m) => m.parts).find((p) => p.callID === "call_read_1");
    expect(read?.state?.output).toContain(SECRET);
  }, RUN_TIMEOUT);
});

describe("e2e harness with a large session", () => {
  // 16 reads of 1000 lines each (a read returns at most 50 KB) store all of a 608 KB file: the
  // export is about 1.4 MB. Through a pipe, 8 of 10 such exports came back cut (at 219 KB to 1.1 MB).
  const LINES = 16_000;
  const CHUNK = 1000;
  const line = (n: number) => `line ${String(n).padStart(6, "0")} of big.txt, distinct`;
  const BIG = Array.from({ length: LINES }, (_, i) => `${line(i + 1)}\n`).join("");
  let ws: Workspace;
  beforeAll(async () => {
    // room for the whole file in one prompt, so no compaction
    ws = await createWorkspace({ files: { "big.txt": BIG }, contextLimit: 1_000_000 });
  });
  afterAll(async () => ws?.dispose());

  it("exports a large session whole", async () => {
    const file = path.join(ws.projectDir, "big.txt");
    const calls = Array.from({ length: LINES / CHUNK }, (_, k) => ({
      id: `call_big_${k}`,
      name: "read",
      arguments: { filePath: file, offset: k * CHUNK + 1, limit: CHUNK },
    }));
    ws.model.enqueue({ toolCalls: calls }, { text: "read it all" });
    const run = await ws.run("Please read big.txt", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(run);
    expect(ws.model.exhaustedCount).toBe(0);
    expect(toolResult(run.requests[1], calls.at(-1)!.id)).toContain(line(LINES));
    // the cut comes and goes: three exports, each must be whole
    for (let i = 0; i < 3; i++) {
      const exported = await ws.exportSession(run.sessionID!); // JSON.parse throws on a cut export
      const outputs = new Map(exported.messages.flatMap((m) => m.parts).filter((p) => p.type === "tool").map((p) => [p.callID, String(p.state?.output)]));
      expect(outputs.size).toBe(calls.length);
      expect(outputs.get(calls.at(-1)!.id)).toContain(line(LINES));
      expect(outputs.get(calls.at(-1)!.id)).toContain(line(LINES - CHUNK + 1));
      expect(JSON.stringify(exported).length).toBeGreaterThan(1_000_000);
    }
  }, RUN_TIMEOUT);
});
