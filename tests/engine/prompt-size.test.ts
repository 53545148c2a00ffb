// The promptTokens fact counts the prompt exactly as acp simulate counts it (docs/simulate.md), so a
// rule that waits for a prompt size acts on the calls where the replay measures that size.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildGraph } from "../../src/graph/graph.js";
import type { Message } from "../../src/graph/types.js";
import { createPruner } from "../../src/index.js";
import { promptTokensOf } from "../../src/engine/prompt-size.js";
import { loadSessions } from "../../src/sim/load.js";
import { promptTokens, renderPrompt } from "../../src/graph/prompt.js";
import { CORPUS, erroredTool, msg, reasoning, text, tool } from "../sim/build.js";
import { OPENCODE } from "../../src/host/profile.js";

const session: Message[] = [
  msg("u1", "user", [text("t1", "fix the parser"), text("t2", "a notice", { ignored: true }), { id: "f1", type: "file", mime: "text/plain", filename: "a.ts" }]),
  msg("a1", "assistant", [reasoning("r1", "earlier turn: dropped ".repeat(20)), tool("p1", "read", { filePath: "a.ts" }, "x".repeat(401)), text("x1", "reading")]),
  msg("a2", "assistant", [text("x2", "never sent: the step failed ".repeat(9))], { error: { name: "APIError" } }),
  msg("u2", "user", [text("t3", "again")]),
  msg("a3", "assistant", [reasoning("r2", "this turn: sent ".repeat(7)), erroredTool("p2", "bash", { command: "make" }, "make: *** failed")]),
];

describe("promptTokens", () => {
  it("is the replay's prompt size: earlier reasoning, ignored text and failed steps left out", () => {
    for (let i = 1; i <= session.length; i++) {
      const context = session.slice(0, i);
      expect(promptTokensOf(buildGraph(context, undefined, { host: OPENCODE }))).toBe(promptTokens(renderPrompt(context, OPENCODE)));
    }
  });

  it("lets a rule wait for the prompt to reach a size", () => {
    // masking of all but the newest call once the prompt is over 150 tokens: the read (101 tokens of
    // output) stays while the prompt is smaller, and is cleared on the first call above that size
    const h = [
      msg("u1", "user", [text("t1", "go")]),
      msg("a1", "assistant", [tool("p1", "read", { filePath: "a.ts" }, "x".repeat(401))]),
      msg("a2", "assistant", [tool("p2", "bash", { command: "ls" }, "ok")]),
      msg("u2", "user", [text("t2", "y".repeat(400))]),
    ];
    const pruner = createPruner({ preset: "presets/baselines/mask10.yaml", config: { tool: false, rules: { "mask-old-outputs": { with: { keepCalls: 1, aboveTokens: 150, text: "[cleared]", allowGrowth: true } } } } });
    const before = structuredClone(h.slice(0, 3));
    pruner.transform(before);
    expect(promptTokens(renderPrompt(h.slice(0, 3), OPENCODE))).toBeLessThanOrEqual(150);
    expect(before[1].parts[0].state?.output).toBe("x".repeat(401));
    const after = structuredClone(h);
    pruner.transform(after);
    expect(promptTokens(renderPrompt(h, OPENCODE))).toBeGreaterThan(150);
    expect(after[1].parts[0].state?.output).toBe("[cleared]");
  });

  it.skipIf(!existsSync(CORPUS))("equals the replay's count on every call of the corpus", () => {
    const mismatches: string[] = [];
    for (const s of loadSessions(CORPUS).slice(0, 20))
      s.messages.forEach((m, i) => {
        if (m.info.role !== "assistant") return;
        const context = s.messages.slice(0, i);
        const ours = promptTokensOf(buildGraph(context, undefined, { host: OPENCODE }));
        const replay = promptTokens(renderPrompt(context, OPENCODE));
        if (ours !== replay) mismatches.push(`${s.id} call ${i}: ${ours} vs ${replay}`);
      });
    expect(mismatches).toEqual([]);
  });
});
