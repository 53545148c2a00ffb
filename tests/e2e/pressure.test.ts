// A live-audit defect (session 24): with the defaults, a long turn ran into OpenCode's
// auto-compaction while the supersedes that would have kept it under the limit waited for the
// commit policy (minTokens, break-even): the host summarised the whole session away. The plugin
// knows the model's context limit (the host's model list, or contextLimit in acp.jsonc), so it
// applies what is pending before the prompt gets near the point where the host compacts.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isCompactionRequest, toolResult, type ScriptedToolCall } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, pluginLoadErrors, type Workspace } from "./harness.js";

const LOG = Array.from({ length: 260 }, (_, i) => `check ${i}: value ${i * 7} out of range in module_${i % 13}.ts`).join("\n");
const FILE = Array.from({ length: 300 }, (_, i) => `export const v${i} = ${i}; // line ${i} of the module under test`).join("\n") + "\n";

describe("opencode-acp in the real host: pending prunes go before the host compacts (default config)", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace({ files: { "src/mod.ts": FILE, "check.sh": `#!/bin/sh\ncat <<'EOF'\n${LOG}\nEOF\nexit 1\n` }, plugins: [ACP_PLUGIN], contextLimit: 40_000 });
  });
  afterAll(async () => ws?.dispose());

  it("a turn that re-reads one file and re-runs one check does not reach auto-compaction", async () => {
    const calls: ScriptedToolCall[] = [];
    for (let i = 1; i <= 5; i++) {
      calls.push({ id: `call_read_${i}`, name: "read", arguments: { filePath: path.join(ws.projectDir, "src/mod.ts") } });
      calls.push({ id: `call_check_${i}`, name: "bash", arguments: { command: "sh check.sh", description: "Run the check" } });
    }
    ws.model.enqueue(...calls.map((c) => ({ toolCalls: [c] })), { text: "The check still fails." });
    const run = await ws.run("Fix the failing check in src/mod.ts", { timeoutMs: 240_000 });
    expect(run.exitCode, run.stderr.slice(-2000)).toBe(0);
    expect(pluginLoadErrors(run.stderr)).toEqual([]);
    expect(ws.model.exhaustedCount).toBe(0);
    expect(run.allRequests.filter(isCompactionRequest).length, "the host compacted the session").toBe(0);
    const last = run.requests.at(-1)!;
    expect(toolResult(last, "call_check_5")).toContain("check 259");
    expect(toolResult(last, "call_read_5")).toContain("line 299 of the module");
    // the older views went (superseded), so the prompt stayed small
    expect(toolResult(last, "call_read_1")).not.toContain("line 299 of the module");
    expect(toolResult(last, "call_check_1")).not.toContain("check 259");
  }, 300_000);
});
