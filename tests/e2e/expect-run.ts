// Shared checks of the e2e scenarios: a scripted tool call, and "the run went through cleanly".
import { expect } from "vitest";
import type { ScriptedToolCall } from "./fake-model.js";
import { pluginLoadErrors, type RunResult, type Workspace } from "./harness.js";

export const call = (id: string, name: string, args: Record<string, unknown>): ScriptedToolCall => ({ id, name, arguments: args });

/** The run finished in time with exit 0, the plugin loaded, and the fake model's script fit exactly. */
export function expectCleanRun(ws: Workspace, run: RunResult): void {
  expect(run.timedOut, run.stderr.slice(-3000)).toBe(false);
  expect(run.exitCode, run.stderr.slice(-3000)).toBe(0);
  expect(pluginLoadErrors(run.stderr)).toEqual([]);
  expect(ws.model.scriptErrors).toEqual([]);
  expect(ws.model.exhaustedCount).toBe(0);
}
