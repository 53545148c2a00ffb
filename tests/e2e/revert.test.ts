// A revert in the real host, as the TUI's /undo makes it: POST /session/{id}/revert with the last
// user message. Turn 1 reads notes.txt; turn 2 edits it and reads it again, which supersedes the
// first read, and the plugin posts its prune notice, an ignored user message, after the turn.
//   - The TUI's /undo picks that notice; the plugin moves the revert on to turn 2's own message.
//   - The host removes turn 2 from the history (and restores the file): the first read is the
//     agent's only view of the file again, so the next request sends it in full, not a note naming
//     a later read the agent no longer has.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResult, type RecordedRequest } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, type ServeHandle, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const SECRET = "secret token: 42";
const NOTES = `line one of notes\n${SECRET}\nline three\n`;

describe("a revert (/undo) in the real host", () => {
  let ws: Workspace;
  let server: ServeHandle;
  let sessionID: string;
  let firstRead: string | undefined;

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "notes.txt": NOTES },
      plugins: [ACP_PLUGIN],
      // a few-line file never fills a batch: commit every prune at once, so the supersede is sent before the undo
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 0 } }) },
    });
    server = await ws.serve(); // the revert goes to the same host process the runs attach to
  }, RUN_TIMEOUT);
  afterAll(async () => {
    await server?.stop();
    await ws?.dispose();
  });

  it("turns 1-2: the second read supersedes the first", async () => {
    const notes = path.join(ws.projectDir, "notes.txt");
    ws.model.enqueue({ toolCalls: [call("call_r1", "read", { filePath: notes })] }, { text: "Read it." });
    const first = await ws.run("Read notes.txt", { attach: server.url, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, first);
    sessionID = first.sessionID!;
    firstRead = toolResult(first.requests[1], "call_r1");
    expect(firstRead).toContain(SECRET);

    ws.model.enqueue(
      { toolCalls: [call("call_e2", "edit", { filePath: notes, oldString: SECRET, newString: "changed line" })] },
      { toolCalls: [call("call_r2", "read", { filePath: notes })] },
      { text: "Changed it." },
    );
    const second = await ws.run("Change line two and show me the file", { attach: server.url, session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, second);
    const last = second.requests.at(-1)!;
    expect(toolResult(last, "call_r2")).toContain("changed line");
    expect(toolResult(last, "call_r1")).toMatch(/superseded/);
    expect(toolResult(last, "call_r1")).not.toContain(SECRET);
  }, RUN_TIMEOUT * 2);

  it("the TUI's /undo (the last user message) lands on turn 2, not the plugin's notice, and the first read is sent in full", async () => {
    expect(sessionID).toBeDefined();
    const res = await fetch(`${server.url}/session/${sessionID}/message`);
    expect(res.ok).toBe(true);
    const messages = (await res.json()) as { info: { id: string; role: string }; parts: { type: string; text?: string; ignored?: boolean }[] }[];
    const turn2 = messages.find((m) => m.info.role === "user" && m.parts.some((p) => p.type === "text" && p.text?.startsWith("Change line two")));
    expect(turn2).toBeDefined();
    // what the TUI's /undo picks: the last user message, which is the plugin's prune notice
    const last = messages.filter((m) => m.info.role === "user").at(-1)!;
    expect(last.parts.every((p) => p.type === "text" && p.ignored)).toBe(true);
    const undo = await fetch(`${server.url}/session/${sessionID}/revert`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messageID: last.info.id }),
    });
    expect(undo.ok, await undo.clone().text()).toBe(true);
    // the plugin moves the revert on to the user's own message (src/host/undo.ts), as a second /undo would
    let revertedTo: string | undefined;
    for (let i = 0; i < 50 && revertedTo !== turn2!.info.id; i++) {
      await new Promise((r) => setTimeout(r, 200));
      revertedTo = ((await (await fetch(`${server.url}/session/${sessionID}`)).json()) as { revert?: { messageID?: string } }).revert?.messageID;
    }
    expect(revertedTo).toBe(turn2!.info.id);
    expect(fs.readFileSync(path.join(ws.projectDir, "notes.txt"), "utf8")).toBe(NOTES); // the host restored the file

    let seen: RecordedRequest | undefined;
    ws.model.enqueue((req) => {
      seen = req;
      return { text: "It says what it said." };
    });
    const third = await ws.run("What does notes.txt say now?", { attach: server.url, session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, third);
    const req = seen!;
    expect(toolResult(req, "call_r2")).toBeUndefined(); // the host removed turn 2
    expect(toolResult(req, "call_e2")).toBeUndefined();
    expect(toolResult(req, "call_r1")).toBe(firstRead); // byte for byte as turn 1 sent it
  }, RUN_TIMEOUT);
});
