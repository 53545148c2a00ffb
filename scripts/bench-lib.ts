// Timing pieces shared by scripts/bench.ts and scripts/bench-ab.ts: wall and CPU time per call,
// the garbage collection that fell inside it, medians, and the least exact incremental call.
import { loadavg } from "node:os";
import { performance, PerformanceObserver } from "node:perf_hooks";
import type { Message } from "../src/graph/types.js";
import { deepCopy } from "../tests/engine/session-gen.js";

export const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
export const round = (x: number) => Math.round(x * 1000) / 1000;
export const loadAverage = () => loadavg().map((x) => Math.round(x * 100) / 100);

/**
 * The copy OpenCode would hand the hook: `fresh` is a JSON round trip, so its strings are new too,
 * as in the host (which parses each step's history from its database); otherwise the copy shares
 * the strings with the original (cheaper to make, and cheaper to read: see docs/bench.md).
 */
export const copier =
  (fresh: boolean) =>
  <T>(v: T): T =>
    fresh ? (JSON.parse(JSON.stringify(v)) as T) : deepCopy(v);

export interface Sample {
  wall: number;
  cpu: number;
  /** Garbage collection pauses that started inside the call. */
  gc: number;
}
export interface Stats {
  n: number;
  median: number;
  p95: number;
  max: number;
  cpuMedian: number;
  gcMedian: number;
}

// Garbage collection inside the timed windows: V8 reports each pause as a "gc" entry, delivered
// asynchronously, so the windows are matched with the entries at the end (settleGc).
const gcPauses: { start: number; duration: number }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push({ start: e.startTime, duration: e.duration });
}).observe({ entryTypes: ["gc"] });
const windows: { start: number; end: number; sample: Sample }[] = [];

/** Fills in the garbage collection of every sample measured so far. */
export async function settleGc(): Promise<void> {
  await new Promise((r) => setTimeout(r, 50));
  for (const w of windows) w.sample.gc = gcPauses.filter((p) => p.start >= w.start && p.start < w.end).reduce((s, p) => s + p.duration, 0);
  windows.length = 0;
}

/** Forgets the samples not yet settled (untimed warm-up runs). */
export function dropPendingSamples(): void {
  windows.length = 0;
}

export function stats(xs: Sample[]): Stats {
  const q = (vs: number[], p: number) => {
    const s = [...vs].sort((a, b) => a - b);
    return round(s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]);
  };
  const wall = xs.map((x) => x.wall);
  return { n: xs.length, median: q(wall, 0.5), p95: q(wall, 0.95), max: q(wall, 1), cpuMedian: q(xs.map((x) => x.cpu), 0.5), gcMedian: q(xs.map((x) => x.gc), 0.5) };
}

/** Times `fn` (wall and CPU); the garbage collection inside it is filled in by settleGc. */
export function measure(fn: () => void): Sample {
  const c = process.cpuUsage();
  const start = performance.now();
  fn();
  const end = performance.now();
  const used = process.cpuUsage(c);
  const sample = { wall: end - start, cpu: (used.user + used.system) / 1000, gc: 0 };
  windows.push({ start, end, sample });
  return sample;
}

/** Status and compaction mark of a part as one number (0: no state). */
const statusCode = (part: Message["parts"][number]) => {
  const st = part.state;
  return st ? (st.status === "completed" ? 1 : st.status === "error" ? 2 : 3) + (st.time?.compacted ? 4 : 0) : 0;
};

/**
 * leastCheck(history, decided)(copy): the least an exact incremental call can do. It checks every
 * part of the copy against what the last call kept (id, status and compaction mark, text length;
 * here in flat arrays) and writes the decided parts' outputs, with no rules, phases, ids or state.
 */
export function leastCheck(history: Message[], decided: Set<string>): (copy: Message[]) => void {
  const ids: string[] = [];
  const codes: number[] = [];
  const texts: number[] = [];
  const writes: (string | undefined)[] = [];
  for (const m of history)
    for (const part of m.parts) {
      ids.push(part.id);
      codes.push(statusCode(part));
      texts.push(typeof part.text === "string" ? part.text.length : -1);
      writes.push(decided.has(part.id) ? "[pruned]" : undefined);
    }
  return (copy) => {
    let i = 0;
    for (const m of copy)
      for (const part of m.parts) {
        const t = part.text;
        if (part.id !== ids[i] || statusCode(part) !== codes[i] || (typeof t === "string" ? t.length : -1) !== texts[i]) throw new Error("the copy differs");
        const w = writes[i++];
        if (w !== undefined) {
          if (part.state) part.state.output = w;
          else part.text = w;
        }
      }
  };
}

export const countParts = (ms: Message[]) => ms.reduce((s, m) => s + m.parts.length, 0);
export const countTools = (ms: Message[]) => ms.reduce((s, m) => s + m.parts.filter((p) => p.type === "tool").length, 0);
