// Subagents in the real host with `subagents: true`. A subagent (the task tool's child session)
// has no context_prune: the plugin offers it to primary agents only (experimental.primary_tools).
// So the child's requests are pruned (a superseded read) but carry no [acp:…] ids and no note
// about the tool, while the main agent's requests have both.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemText, toolNames, toolResult } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 200_000;
/** First line of the plugin's system-prompt addition (src/engine/intro.ts systemPrompt). */
const SYSTEM_MARK = "Context pruning (opencode-acp)";
const BIG = Array.from({ length: 20 }, (_, i) => `big line ${i + 1}: content a subagent reads twice`).join("\n");

describe("subagents (subagents: true) in the real host", () => {
  let ws: Workspace;

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      files: { "big.txt": `${BIG}\n` },
      plugins: [ACP_PLUGIN],
      globalFiles: { "acp.jsonc": JSON.stringify({ subagents: true, idsFromTokens: 0, commit: { minTokens: 0 } }) },
    });
  });
  afterAll(async () => ws?.dispose());

  it("a subagent's outputs are pruned but get no ids, and its requests no note, where the tool is absent", async () => {
    const big = path.join(ws.projectDir, "big.txt");
    ws.model.enqueue(
      // main agent: delegate
      { toolCalls: [call("call_task", "task", { description: "Read big", prompt: "Read big.txt twice and say how many lines it has", subagent_type: "general" })] },
      // the subagent: read twice, answer
      { toolCalls: [call("call_c1", "read", { filePath: big })] },
      { toolCalls: [call("call_c2", "read", { filePath: big })] },
      { text: "big.txt has 20 lines." },
      // main agent: read it too, answer
      { toolCalls: [call("call_m1", "read", { filePath: big })] },
      { text: "Done." },
    );
    const run = await ws.run("Have a subagent read big.txt", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    // the task tool runs the child session to its end before the main agent's next step
    expect(run.requests, `tools per request: ${JSON.stringify(run.requests.map(toolNames))}`).toHaveLength(6);
    const [m0, c0, c1, c2, m1, m2] = run.requests;
    const child = [c0, c1, c2];
    const main = [m0, m1, m2];
    for (const req of main) expect(toolNames(req)).toContain("context_prune");

    for (const req of child) {
      expect(toolNames(req)).not.toContain("context_prune");
      expect(systemText(req)).not.toContain(SYSTEM_MARK);
      expect(JSON.stringify(req.body.messages)).not.toMatch(/\[acp:/);
    }
    expect(toolResult(child[1], "call_c1")).toContain("big line 20");
    expect(toolResult(child[2], "call_c1")).toContain("superseded"); // pruned all the same
    expect(toolResult(child[2], "call_c2")).toContain("big line 20");

    // the main agent has the tool: ids and the note
    expect(toolNames(main[2])).toContain("context_prune");
    expect(systemText(main[2])).toContain(SYSTEM_MARK);
    expect(toolResult(main[2], "call_m1")).toMatch(/\[acp:t[0-9a-z]+\]$/);
  }, RUN_TIMEOUT);
});
