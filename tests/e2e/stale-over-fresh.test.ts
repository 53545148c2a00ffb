// The live defect of the savings issue, in the real host with the defaults a new user gets and a
// model that sends no reasoning: the agent runs the tests (FAIL), fixes, runs them again (PASS);
// at the next user message no request may show the old FAIL in full while the newer PASS is
// cleared (before the fix, `stale-shell-output` cleared the PASS at once while the FAIL's
// supersede waited for its batch).
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResult, type ScriptedToolCall } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, pluginLoadErrors, type Workspace } from "./harness.js";

const PASS_LINES = Array.from({ length: 40 }, (_, i) => `ok ${i + 1} - test case number ${i + 1} passed`).join("\n");
const SCRIPT = `#!/bin/sh\nif [ -f fixed ]; then\ncat <<'EOF'\n${PASS_LINES}\nPASS: 40 of 40\nEOF\nelse\necho "FAIL: test_add expected 3, got 4"\nfi\n`;

describe("opencode-acp in the real host: never stale over fresh (default config, no reasoning)", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace({ files: { "run-tests.sh": SCRIPT }, plugins: [ACP_PLUGIN] });
  });
  afterAll(async () => ws?.dispose());

  it("at the next user message the newer test run is not hidden while the older one shows in full", async () => {
    const call = (id: string, args: Record<string, unknown>): ScriptedToolCall => ({ id, name: "bash", arguments: args });
    ws.model.enqueue(
      { toolCalls: [call("call_test_1", { command: "sh run-tests.sh", description: "Run the tests" })] },
      { toolCalls: [call("call_fix_2", { command: "touch fixed", description: "Fix" })] },
      { toolCalls: [call("call_test_3", { command: "sh run-tests.sh", description: "Run the tests" })] },
      { text: "Fixed: all 40 tests pass." },
    );
    const first = await ws.run("The tests fail, please fix them", { timeoutMs: 120_000 });
    expect(first.exitCode, first.stderr.slice(-2000)).toBe(0);
    expect(pluginLoadErrors(first.stderr)).toEqual([]);
    const fail = toolResult(first.requests[1], "call_test_1");
    const pass = toolResult(first.requests[3], "call_test_3");
    expect(fail).toContain("FAIL: test_add");
    expect(pass).toContain("PASS: 40 of 40");

    ws.model.enqueue({ text: "Summary: one failing test fixed." }, { text: "Nothing else to do." });
    const second = await ws.run("Thanks. Summarise what you changed.", { session: first.sessionID, timeoutMs: 120_000 });
    expect(second.exitCode, second.stderr.slice(-2000)).toBe(0);
    const third = await ws.run("Anything else?", { session: first.sessionID, timeoutMs: 120_000 });
    expect(third.exitCode, third.stderr.slice(-2000)).toBe(0);
    const later = [...second.requests, ...third.requests].filter((r) => toolResult(r, "call_test_3") !== undefined);
    expect(later.length).toBeGreaterThanOrEqual(2);
    for (const [i, req] of later.entries()) {
      const olderInFull = (toolResult(req, "call_test_1") ?? "").includes("FAIL: test_add");
      const newerShown = (toolResult(req, "call_test_3") ?? "").includes("PASS: 40 of 40");
      expect(!olderInFull || newerShown, `request ${i}: the old FAIL is shown in full while the newer PASS is hidden:\n${toolResult(req, "call_test_3")}`).toBe(true);
    }
    // The newer run is what the agent is working with: it stays in full.
    expect(toolResult(later[0], "call_test_3")).toContain("PASS: 40 of 40");
  }, 400_000);
});
