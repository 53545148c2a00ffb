// The context_prune tool in the real host. The scripted model reads three files, takes the
// [acp:tN] ids the plugin appended to their outputs from the request it received, and then calls
// context_prune discard, distill, replace and restore. Every later request must show exactly the
// effect, and a new opencode process continuing the session (state on disk) must show it too.
// Also: the system-prompt addition is in every main request and not in the title request, and
// context_prune is offered as a tool.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isTitleRequest, systemText, toolNames, toolResult, type RecordedRequest, type ScriptedToolCall } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, pluginLoadErrors, type RunResult, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const PLUGIN = ACP_PLUGIN;
const RUN_TIMEOUT = 150_000;
/** First line of the plugin's system-prompt addition (src/engine/intro.ts systemPrompt). */
const SYSTEM_MARK = "Context pruning (opencode-acp)";

// Three files large enough for an id (outputs of 400+ characters), each with a unique marker.
const lines = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag} line ${i + 1}: some content that the model read once`).join("\n");
const ALPHA = `${lines("ALPHA-DISCARD", 12)}\n`;
const BETA = `${lines("BETA-DISTILL", 12)}\n`;
const GAMMA = [
  lines("GAMMA-KEEP-HEAD", 4),
  "CUT-START-MARKER-1234",
  lines("GAMMA-CUT-ME", 8),
  "CUT-END-MARKER-98765",
  lines("GAMMA-KEEP-TAIL", 4),
  "",
].join("\n");
const SUMMARY = "DISTILLED: beta.txt holds 12 numbered BETA lines, nothing else matters";
const CUT_NOTE = "[span cut by the agent: GAMMA middle]";


/** The acp id appended to a tool result (`…\n[acp:t3]`), or a thrown error naming the request. */
function idIn(req: RecordedRequest, callID: string): string {
  const out = toolResult(req, callID) ?? "";
  const m = /\[acp:(t[0-9a-z]+)\]\s*$/.exec(out);
  if (!m) throw new Error(`request ${req.seq}: no [acp:…] id at the end of ${callID}'s result: ${JSON.stringify(out.slice(-200))}`);
  return m[1];
}


describe("context_prune in the real host: discard, distill, replace, restore", () => {
  let ws: Workspace;
  let run: RunResult;
  const ids: Record<string, string> = {};
  let originals: Record<string, string> = {};

  beforeAll(async () => {
    if (!fs.existsSync(PLUGIN)) throw new Error(`${PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "alpha.txt": ALPHA, "beta.txt": BETA, "gamma.txt": GAMMA },
      plugins: [PLUGIN],
      // ids and instructions from the first call (the default waits for a 20K-token prompt)
      globalFiles: { "acp.jsonc": JSON.stringify({ idsFromTokens: 0 }) },
    });
  });
  afterAll(async () => ws?.dispose());

  it("each action shows in the next request, and only there where it should", async () => {
    const file = (f: string) => path.join(ws.projectDir, f);
    ws.model.enqueue(
      // 0: read the three files at once
      { toolCalls: [call("call_a", "read", { filePath: file("alpha.txt") }), call("call_b", "read", { filePath: file("beta.txt") }), call("call_c", "read", { filePath: file("gamma.txt") })] },
      // 1: the ids come from the request the model got
      (req) => {
        ids.a = idIn(req, "call_a");
        ids.b = idIn(req, "call_b");
        ids.c = idIn(req, "call_c");
        return { toolCalls: [call("call_p1", "context_prune", { action: "discard", targets: [ids.a] })] };
      },
      // 2
      () => ({ toolCalls: [call("call_p2", "context_prune", { action: "distill", targets: [{ id: ids.b, summary: SUMMARY }] })] }),
      // 3
      () => ({
        toolCalls: [
          call("call_p3", "context_prune", {
            action: "replace",
            targets: [{ id: ids.c, start: "CUT-START-MARKER-1234", end: "CUT-END-MARKER-98765", replacement: CUT_NOTE }],
          }),
        ],
      }),
      // 4
      () => ({ toolCalls: [call("call_p4", "context_prune", { action: "restore", targets: [`acp:${ids.a}`] })] }),
      // 5
      { text: "All pruned as asked." },
    );
    run = await ws.run("Read alpha beta and gamma then prune them", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    const r = run.requests;
    expect(r).toHaveLength(6);
    expect(new Set(Object.values(ids)).size, `ids ${JSON.stringify(ids)}`).toBe(3);

    // Request 1: the three outputs in full, each ending with its id.
    originals = { a: toolResult(r[1], "call_a")!, b: toolResult(r[1], "call_b")!, c: toolResult(r[1], "call_c")! };
    expect(originals.a).toContain("ALPHA-DISCARD line 12");
    expect(originals.b).toContain("BETA-DISTILL line 12");
    expect(originals.c).toContain("GAMMA-CUT-ME line 8");

    // Request 2 (after discard): alpha is a breadcrumb naming the call; beta and gamma unchanged.
    const a2 = toolResult(r[2], "call_a")!;
    expect(a2).toContain("discarded by the agent");
    expect(a2).toContain("alpha.txt");
    expect(a2).not.toContain("ALPHA-DISCARD");
    expect(toolResult(r[2], "call_b")).toBe(originals.b);
    expect(toolResult(r[2], "call_c")).toBe(originals.c);
    expect(toolResult(r[2], "call_p1")).toMatch(new RegExp(`${ids.a}: discarded`));

    // Request 3 (after distill): beta is the summary.
    const b3 = toolResult(r[3], "call_b")!;
    expect(b3).toContain(SUMMARY);
    expect(b3).not.toContain("BETA-DISTILL");
    expect(toolResult(r[3], "call_a")).toBe(a2);
    expect(toolResult(r[3], "call_c")).toBe(originals.c);
    expect(toolResult(r[3], "call_p2")).toMatch(new RegExp(`${ids.b}: distilled`));

    // Request 4 (after replace): the span from start marker to end marker is gone, the rest stays.
    const c4 = toolResult(r[4], "call_c")!;
    expect(c4).toContain(CUT_NOTE);
    expect(c4).not.toContain("GAMMA-CUT-ME");
    expect(c4).not.toContain("CUT-START-MARKER-1234");
    expect(c4).not.toContain("CUT-END-MARKER-98765");
    expect(c4).toContain("GAMMA-KEEP-HEAD line 4");
    expect(c4).toContain("GAMMA-KEEP-TAIL line 1");
    expect(c4).toBe(originals.c.replace(/CUT-START-MARKER-1234[\s\S]*CUT-END-MARKER-98765/, CUT_NOTE));
    expect(toolResult(r[4], "call_b")).toBe(b3);
    expect(toolResult(r[4], "call_p3")).toMatch(new RegExp(`${ids.c}: replaced`));

    // Request 5 (after restore): alpha is back byte for byte; the others keep their prune.
    expect(toolResult(r[5], "call_a")).toBe(originals.a);
    expect(toolResult(r[5], "call_b")).toBe(b3);
    expect(toolResult(r[5], "call_c")).toBe(c4);
    expect(toolResult(r[5], "call_p4")).toMatch(new RegExp(`${ids.a}: restored`));

    // State is on disk for the next process.
    expect(fs.existsSync(ws.acpStateFile(run.sessionID!))).toBe(true);
  }, RUN_TIMEOUT);

  it("the system prompt addition is in every main request but not in the title request; context_prune is a tool", () => {
    expect(run?.requests.length).toBeGreaterThan(0);
    for (const req of run.requests) {
      expect(systemText(req), `main request ${req.seq}`).toContain(SYSTEM_MARK);
      expect(toolNames(req), `main request ${req.seq}`).toContain("context_prune");
    }
    const title = run.allRequests.filter(isTitleRequest);
    expect(title).toHaveLength(1);
    expect(systemText(title[0])).not.toContain(SYSTEM_MARK);
    expect(JSON.stringify(title[0].body.messages)).not.toContain("context_prune");
  });

  it("a new opencode process continuing the session sends the same pruned view", async () => {
    expect(run?.sessionID).toBeDefined();
    ws.model.enqueue({ text: "Still pruned." });
    const next = await ws.run("Anything else?", { session: run.sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, next);
    expect(next.requests).toHaveLength(1);
    const req = next.requests[0];
    const last = run.requests[5];
    for (const c of ["call_a", "call_b", "call_c", "call_p1", "call_p2", "call_p3", "call_p4"]) {
      expect(toolResult(req, c), `${c} after restart`).toBe(toolResult(last, c));
    }
    expect(toolResult(req, "call_a")).toBe(originals.a); // restored stays restored
    expect(toolResult(req, "call_b")).toContain(SUMMARY);
    expect(toolResult(req, "call_c")).toContain(CUT_NOTE);
    expect(systemText(req)).toContain(SYSTEM_MARK);
  }, RUN_TIMEOUT);

  it("with the state file lost, a new process rebuilds the prunes from the context_prune calls in the history", async () => {
    expect(run?.sessionID).toBeDefined();
    const file = ws.acpStateFile(run.sessionID!);
    expect(fs.existsSync(file)).toBe(true);
    fs.rmSync(file);
    ws.model.enqueue({ text: "Still pruned without state." });
    const next = await ws.run("And now?", { session: run.sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, next);
    expect(next.requests).toHaveLength(1);
    const req = next.requests[0];
    expect(toolResult(req, "call_a"), "alpha: discarded, then restored").toBe(originals.a);
    expect(toolResult(req, "call_b"), "beta: distilled").toBe(toolResult(run.requests[5], "call_b"));
    expect(toolResult(req, "call_c"), "gamma: span replaced").toBe(toolResult(run.requests[5], "call_c"));
  }, RUN_TIMEOUT);
});

// The specification writes targets as tuples (`[["t0uf"]]`, `[["t0uf", "summary"]]`). A target
// named twice is answered once, and an unknown id's list of what is available leaves out what the
// same call discarded. After a restart (state lost) the tuples are replayed like the rest.
describe("context_prune in the real host: the specification's tuples and its replies", () => {
  let ws: Workspace;

  beforeAll(async () => {
    if (!fs.existsSync(PLUGIN)) throw new Error(`${PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({ files: { "alpha.txt": ALPHA, "beta.txt": BETA }, plugins: [PLUGIN], globalFiles: { "acp.jsonc": JSON.stringify({ idsFromTokens: 0 }) } });
  });
  afterAll(async () => ws?.dispose());

  it("[[id]] discards, [[id, summary]] distills, a repeated target is answered once, Available leaves out this call's discards", async () => {
    const file = (f: string) => path.join(ws.projectDir, f);
    const ids: Record<string, string> = {};
    ws.model.enqueue(
      { toolCalls: [call("call_a", "read", { filePath: file("alpha.txt") }), call("call_b", "read", { filePath: file("beta.txt") })] },
      (req) => {
        ids.a = idIn(req, "call_a");
        ids.b = idIn(req, "call_b");
        return { toolCalls: [call("call_p1", "context_prune", { action: "discard", targets: [[ids.a], [ids.a], `[acp:${ids.a}]`, ["t0zz"]] })] };
      },
      () => ({ toolCalls: [call("call_p2", "context_prune", { action: "distill", targets: [[ids.b, SUMMARY]] })] }),
      { text: "Pruned with tuples." },
    );
    const run = await ws.run("Read alpha and beta then prune them", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    const r = run.requests;
    expect(r).toHaveLength(4);
    const tokensB = /\((\d+) tokens\)/; // beta's size as the list gives it
    const reply1 = toolResult(r[2], "call_p1")!;
    expect(reply1.split("\n")[0]).toBe("Some targets were not pruned:");
    expect(reply1.split("\n").slice(1)).toEqual([`${ids.a}: discarded`, expect.stringMatching(new RegExp(`^t0zz: unknown id\\. Available: ${ids.b} \\(\\d+ tokens\\)$`))]);
    expect(reply1).toMatch(tokensB);
    expect(toolResult(r[2], "call_a")).toMatch(/^read\(\{filePath: ".*alpha\.txt"\}\) → discarded by the agent\n\[acp:t[0-9a-z]+\]$/);
    expect(toolResult(r[3], "call_p2")).toBe(`${ids.b}: distilled`);
    expect(toolResult(r[3], "call_b")).toContain(`distilled by the agent: ${SUMMARY}`);

    // a new process without the state file replays the tuples from the history
    fs.rmSync(ws.acpStateFile(run.sessionID!));
    ws.model.enqueue({ text: "Still pruned." });
    const next = await ws.run("And now?", { session: run.sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, next);
    expect(toolResult(next.requests[0], "call_a")).toBe(toolResult(r[3], "call_a"));
    expect(toolResult(next.requests[0], "call_b")).toBe(toolResult(r[3], "call_b"));
  }, RUN_TIMEOUT);
});
