// Huge outputs: the generators keep sizes small so the property runs stay fast; here a few
// sessions carry several MB of tool output (one output of 5 MB, unicode, errors) and go through
// every preset with the full invariant replay (restart, repeated transforms, restores).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message, Part } from "../../src/graph/types.js";
import { ErrorSink, newStats, replayAndCheck, TMP } from "./invariants.js";

const MB = 1024 * 1024;
const root = mkdtempSync(join(TMP, "acp-prop-huge-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `bytes` of text in lines (ASCII, or 4-byte emoji and 2-byte letters). */
function blob(bytes: number, label: string, unicode = false): string {
  const line = unicode ? `${label} 😀é中 ${"ü".repeat(30)} 𝄞\n` : `${label} ${"x".repeat(70)}\n`;
  return line.repeat(Math.ceil(bytes / Buffer.byteLength(line)));
}

function hugeSession(sid: string): Message[] {
  let n = 0;
  const id = (p: string) => `${p}_${String(++n).padStart(5, "0")}`;
  const msgs: Message[] = [];
  const msg = (role: string, parts: Omit<Part, "id" | "sessionID" | "messageID">[]) => {
    const mid = id("msg");
    msgs.push({ info: { id: mid, sessionID: sid, role }, parts: parts.map((p) => ({ id: id("prt"), sessionID: sid, messageID: mid, ...p }) as Part) });
  };
  const tool = (tool: string, input: Record<string, unknown>, output: string, status = "completed") =>
    ({ type: "tool", tool, callID: id("call"), state: status === "error" ? { status, input, error: output, time: { start: 1, end: 2 } } : { status, input, output, title: tool, metadata: {}, time: { start: 1, end: 2 } } }) as Omit<Part, "id">;
  msg("user", [{ type: "text", text: "read the big files" }]);
  msg("assistant", [{ type: "step-start" }, tool("read", { filePath: "data/big.csv" }, blob(5 * MB, "row")), { type: "step-finish" }]);
  msg("assistant", [{ type: "step-start" }, tool("bash", { command: "cat log.txt" }, blob(2 * MB, "log", true)), tool("bash", { command: "make" }, blob(1 * MB, "error: build failed"), "error")]);
  msg("user", [{ type: "text", text: "again" }]);
  msg("assistant", [{ type: "reasoning", text: "Re-reading." }, tool("read", { filePath: "data/big.csv" }, blob(1 * MB, "row2")), tool("bash", { command: "cat log.txt" }, blob(0.5 * MB, "log2", true))]);
  msg("user", [{ type: "text", text: "and now?" }]);
  msg("assistant", [{ type: "text", text: "Done." }]);
  return msgs;
}

describe("multi-MB tool outputs", () => {
  for (const preset of ["compact", "balanced", "verbose"]) {
    it(`${preset}: every invariant holds on a session with 9.5 MB of tool output`, () => {
      const sink = new ErrorSink();
      const dir = join(root, preset);
      const bDir = join(root, `${preset}-restart`);
      mkdirSync(bDir, { recursive: true });
      const make = (stateDir: string) => () => createPruner({ preset, stateDir, onError: sink.onError, config: { commit: { minTokens: 0 } } });
      const stats = newStats();
      const messages = hugeSession(`ses_huge_${preset}`);
      const t = performance.now();
      const violations = replayAndCheck(messages, { restartAt: 1, repeatMask: -1 >>> 0, restores: [{ at: 2, pick: 0 }] }, { label: `huge ${preset}`, pruner: make(dir)(), stateDir: dir, restart: { make: make(bDir), dir: bDir }, sink }, stats);
      const ms = performance.now() - t;
      expect(violations, violations.join("\n")).toEqual([]);
      expect(stats.decided).toBeGreaterThan(0);
      expect(stats.bytesOut).toBeLessThan(stats.bytesIn);
      console.log(`huge ${preset}: ${stats.calls} calls, ${(stats.bytesIn / MB).toFixed(0)} MB in, ${(stats.bytesOut / MB).toFixed(0)} MB out, ${ms.toFixed(0)} ms with the checks`);
    }, 120_000);
  }

  it("one transform of the 9.5 MB session takes well under a second", () => {
    const pruner = createPruner({ preset: "balanced" });
    const messages = hugeSession("ses_huge_time");
    const t = performance.now();
    pruner.transform(messages);
    expect(performance.now() - t).toBeLessThan(2000);
  });
});
