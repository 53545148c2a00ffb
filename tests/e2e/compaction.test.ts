// Auto-compaction by the host with the plugin loaded. The fake model has a 20K context and reports
// 19K prompt tokens after the second step, so OpenCode compacts before the next call: it sends the
// hidden compaction agent's summary request (no tools), stores the summary, adds the synthetic
// "Continue if you have next steps…" message and resumes. The run must complete; the summary
// request must not carry the plugin's system-prompt addition; every main request before and after
// must be well-formed (each tool call answered, no orphan results); the summarised copy is pruned
// but carries no id tags; and pruning goes on after it.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  contentText,
  isCompactionRequest,
  isTitleRequest,
  pairingProblems,
  systemText,
  toolResult,
  type ScriptedToolCall,
} from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, pluginLoadErrors, type RunResult, type Workspace } from "./harness.js";
import { call } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const SYSTEM_MARK = "Context pruning (opencode-acp)";
const SUMMARY = "SUMMARY: the user asked to read big.txt; it was read twice (20 numbered lines).";
const BIG = Array.from({ length: 20 }, (_, i) => `big line ${i + 1}: content the model reads again and again`).join("\n");

describe("host auto-compaction with the plugin loaded", () => {
  let ws: Workspace;
  let run: RunResult;

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "big.txt": `${BIG}\n` },
      plugins: [ACP_PLUGIN],
      contextLimit: 20_000, // usable = 20000 - 4096 output tokens
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 0 }, idsFromTokens: 0 }) },
    });
    ws.model.auxiliary = (req) => (isCompactionRequest(req) ? { text: SUMMARY } : undefined);
  });
  afterAll(async () => ws?.dispose());

  it("the run completes through the compaction", async () => {
    const big = path.join(ws.projectDir, "big.txt");
    ws.model.enqueue(
      { toolCalls: [call("call_read_1", "read", { filePath: big })] },
      // reports a nearly full context: the host compacts before the next call
      { toolCalls: [call("call_read_2", "read", { filePath: big })], promptTokens: 19_000 },
      // after "Continue if you have next steps…"
      { toolCalls: [call("call_read_3", "read", { filePath: big })] },
      { toolCalls: [call("call_read_4", "read", { filePath: big })] },
      { text: "Resumed after compaction; done." },
    );
    run = await ws.run("Read big.txt a few times", { timeoutMs: RUN_TIMEOUT });
    expect(run.timedOut, run.stderr.slice(-3000)).toBe(false);
    expect(run.exitCode, run.stderr.slice(-3000)).toBe(0);
    expect(pluginLoadErrors(run.stderr)).toEqual([]);
    expect(ws.model.scriptErrors).toEqual([]);
    expect(ws.model.exhaustedCount).toBe(0);
    expect(ws.model.pending).toBe(0);
    expect(run.requests).toHaveLength(5);
    expect(run.events.some((e) => e.type === "text" && String(e.part?.text).includes("Resumed after compaction"))).toBe(true);
  }, RUN_TIMEOUT);

  it("one compaction request, without the plugin's system prompt, after the overflowing step", () => {
    expect(run).toBeDefined();
    const compactions = run.allRequests.filter(isCompactionRequest);
    expect(compactions, run.allRequests.map((r) => `${r.seq} ${r.kind} ${systemText(r).slice(0, 60)}`).join("\n")).toHaveLength(1);
    const c = compactions[0];
    expect(systemText(c)).not.toContain(SYSTEM_MARK);
    expect(c.body.tools ?? []).toEqual([]);
    // it comes right after the step that reported 19K tokens (main request 1) and before the resume
    expect(c.seq).toBeGreaterThan(run.requests[1].seq);
    expect(c.seq).toBeLessThan(run.requests[2].seq);
    // the flattened history it summarises holds the tool calls and results
    const prompt = c.body.messages.map((m) => contentText(m.content)).join("\n");
    expect(prompt).toContain("[Tool result]");
    expect(prompt).toContain("big line 20");
    // the host runs the transform on the copy it summarises, so the pruned view is summarised:
    // the first read is the breadcrumb, the second read is there in full, once
    expect(prompt).toContain("superseded by a later read");
    expect(prompt.split("big line 20").length - 1).toBe(1);
    // no id tags: the summary would only carry ids of parts the model no longer has
    expect(prompt).not.toMatch(/\[acp:/);
    expect(toolResult(run.requests[1], "call_read_1")).toMatch(/\[acp:t[0-9a-z]+\]\s*$/); // while the main requests have them
    // the title request never gets the addition either
    for (const t of run.allRequests.filter(isTitleRequest)) expect(systemText(t)).not.toContain(SYSTEM_MARK);
  });

  it("every main request is well-formed and carries the addition; the resume starts from the summary", () => {
    expect(run).toBeDefined();
    for (const [i, req] of run.requests.entries()) {
      expect(pairingProblems(req), `main request ${i}`).toEqual([]);
      expect(systemText(req), `main request ${i}`).toContain(SYSTEM_MARK);
    }
    const resume = run.requests[2];
    const sent = JSON.stringify(resume.body.messages);
    expect(sent).toContain("What did we do so far?");
    expect(sent).toContain(SUMMARY);
    expect(sent).toContain("Continue if you have next steps");
    // the compacted head is gone: no call or result of the first two reads
    expect(sent).not.toContain("call_read_1");
    expect(sent).not.toContain("call_read_2");
  });

  it("pruning goes on after the compaction", () => {
    expect(run).toBeDefined();
    const last = run.requests[4];
    expect(toolResult(last, "call_read_3")).toContain("superseded");
    expect(toolResult(last, "call_read_3")).not.toContain("big line 20");
    expect(toolResult(last, "call_read_4")).toContain("big line 20");
    expect(toolResult(last, "call_read_4")).toMatch(/\[acp:t[0-9a-z]+\]\s*$/);
  });
});
