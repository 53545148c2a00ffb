// A file the user names stays visible (the `userNamedTurns` fact, docs/rules.md), in the real host
// with the defaults a new user gets and a thinking model whose provider drops earlier turns'
// reasoning, as Anthropic's does (the free cache break at the next user message, where the pending
// age prunes apply). The fake model speaks the OpenAI-compatible API, whose reasoning_content is
// sent back and cached, so acp.jsonc says `earlierReasoning: dropped` (reasoning-sent.test.ts has
// the default for that API). One more setting: idle-large-output clears reads too (`tools`, its own
// default; balanced leaves reads to stale-read, which waits 10 turns, ten runs more, and keeps a
// document under 8000 chars whoever named it, so it could not show the naming). The user asks to follow
// "docs/project-plan" (PROJECT_PLAN.md, named without its extension); the agent reads it and another
// large file, then makes 21 more calls, each printing a few lines (a call that prints a line or two
// is bookkeeping and does not count: idleWorkCalls). At the next user message idle-large-output
// clears the other read, idle for 21 calls, and keeps the plan in full. (Named "docs/plan", which names no such file,
// the plan is cleared the same way: this run's first version did that.)
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResult, type ScriptTurn } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const lines = (what: string) => Array.from({ length: 60 }, (_, i) => `${what} line ${i + 1}: text long enough to be worth clearing`).join("\n");
const think = (tag: string) => `${tag}: thinking about the next step. `.repeat(4).trim();

describe("opencode-acp in the real host: a file the user named stays (defaults with idle-large-output on reads, a thinking model whose earlier reasoning is dropped)", () => {
  let ws: Workspace;
  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({ files: { "docs/PROJECT_PLAN.md": `${lines("plan")}\n`, "src/notes.ts": `${lines("// notes")}\n` }, plugins: [ACP_PLUGIN], globalFiles: { "acp.jsonc": JSON.stringify({ earlierReasoning: "dropped", rules: { "idle-large-output": { with: { tools: ["bash", "read", "grep", "webfetch", "websearch", "codesearch"] } } } }) } });
  });
  afterAll(async () => ws?.dispose());

  it("at the next user message the read nobody named is cleared and the named one shows in full", async () => {
    const busy: ScriptTurn[] = Array.from({ length: 21 }, (_, i) => ({ reasoning: think(`step ${i}`), toolCalls: [call(`call_step_${i}`, "bash", { command: `seq ${100 * i + 100} ${100 * i + 140}`, description: "Step" })] }));
    ws.model.enqueue(
      { reasoning: think("plan"), toolCalls: [call("call_plan", "read", { filePath: path.join(ws.projectDir, "docs", "PROJECT_PLAN.md") })] },
      { reasoning: think("notes"), toolCalls: [call("call_notes", "read", { filePath: path.join(ws.projectDir, "src", "notes.ts") })] },
      ...busy,
      { reasoning: think("done"), text: "Done with the first steps." },
    );
    const first = await ws.run("Follow the steps in docs/project-plan, please", { timeoutMs: 300_000 });
    expectCleanRun(ws, first);
    expect(toolResult(first.requests[2], "call_notes")).toContain("// notes line 60");

    ws.model.enqueue({ reasoning: think("next"), text: "Nothing else for now." });
    const second = await ws.run("Thanks. What is next?", { session: first.sessionID, timeoutMs: 120_000 });
    expectCleanRun(ws, second);
    const req = second.requests[0];
    // the unnamed read, idle for 21 calls: cleared by idle-large-output
    expect(toolResult(req, "call_notes")).not.toContain("// notes line 60");
    expect(toolResult(req, "call_notes")).toMatch(/output cleared/);
    // the file the user named: in full
    expect(toolResult(req, "call_plan")).toContain("plan line 60");
  }, 500_000);
});
