// npm run bench:memory [-- --json out.json]: the heap the pruner itself retains after a transform
// call, on the generated sessions of `npm run bench -- --scale` (1,000 / 5,000 / 10,000 messages).
// Each case runs in its own process with --expose-gc:
//   session   heap with the session held and no pruner, minus the empty process's heap
//   fixed     createPruner alone (rules compiled, presets loaded): what any session pays once
//   retained  heap after the call (its copy dropped) minus the heap with the session and no pruner:
//             the pruner's fixed part plus what it keeps for the session (graph, caches, state)
// measured after the first (cold) call and after a second call on a new copy of the same history,
// with the copies made as the bench makes them: sharing the session's strings, or (`fresh`) a
// JSON round trip, as the host parses each step's history anew. Goal (issue 15): retained ≤ 1.5 ×
// the session's JSON size. docs/bench.md has the figures.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createPruner } from "../src/index.js";
import type { Message } from "../src/graph/types.js";
import { deepCopy, generateSession } from "../tests/engine/session-gen.js";

const PRESET = "balanced";
const SIZES = [1000, 5000, 10000];
const COPIES = ["shared", "fresh"] as const;
type Copy = (typeof COPIES)[number];
const MB = 1024 * 1024;

interface CaseResult {
  messages: number;
  copy: Copy;
  jsonMB: number;
  sessionHeapMB: number;
  fixedMB: number;
  retainedMB: number[];
  ratio: number[];
  decisions: number;
}

function heap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with node --expose-gc");
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

/**
 * The bench's generated session at this length (scripts/bench.ts caseHistory), parsed from JSON as
 * the host holds it: flat strings (generated ones are concatenation trees, which reading flattens,
 * and that would change the heap under the measure). The JSON text is garbage on return.
 */
function sessionOf(messages: number): { session: Message[]; jsonBytes: number } {
  const json = JSON.stringify(generateSession({ seed: 1, turns: messages / 2, stepsPerTurn: 1, toolsPerStep: 10 }));
  return { session: JSON.parse(json) as Message[], jsonBytes: Buffer.byteLength(json) };
}

const round = (x: number) => Math.round(x * 10) / 10;

function runCase(messages: number, copy: Copy): CaseResult {
  const copyOf = (v: Message[]): Message[] => (copy === "fresh" ? (JSON.parse(JSON.stringify(v)) as Message[]) : deepCopy(v));
  const empty = heap();
  const { session, jsonBytes } = sessionOf(messages);
  const held = heap();
  const pruner = createPruner({ preset: PRESET });
  const fixed = heap() - held;
  const retained: number[] = [];
  for (let call = 0; call < 2; call++) {
    let c: Message[] | undefined = copyOf(session);
    pruner.transform(c, { now: 0 });
    c = undefined;
    retained.push(heap() - held);
  }
  const sid = session[0].info.sessionID;
  return {
    messages: session.length,
    copy,
    jsonMB: round(jsonBytes / MB),
    sessionHeapMB: round((held - empty) / MB),
    fixedMB: round(fixed / MB),
    retainedMB: retained.map((b) => round(b / MB)),
    ratio: retained.map((b) => Math.round((b / jsonBytes) * 100) / 100),
    decisions: Object.keys(pruner.state(sid).decisions).length,
  };
}

const args = process.argv.slice(2);
if (args[0] === "--case") {
  process.stdout.write(JSON.stringify(runCase(Number(args[1]), args[2] as Copy)));
} else {
  const results: CaseResult[] = [];
  for (const n of SIZES)
    for (const copy of COPIES) {
      const r = spawnSync(process.execPath, ["--expose-gc", "--max-old-space-size=8192", "--import", "tsx", fileURLToPath(import.meta.url), "--case", String(n), copy], { encoding: "utf8", maxBuffer: 16 * MB });
      if (r.status !== 0) throw new Error(`case ${n} ${copy} failed: ${r.stderr}`);
      results.push(JSON.parse(r.stdout) as CaseResult);
    }
  const pad = (s: unknown, n = 10) => String(s).padStart(n);
  console.log(`retained heap (${PRESET}, node ${process.version}); MB; ratio = retained / session JSON; goal ≤ 1.5`);
  console.log(`${"messages".padEnd(9)} ${"copies".padEnd(7)} ${pad("JSON")} ${pad("session")} ${pad("fixed")} ${pad("call 1")} ${pad("call 2")} ${pad("ratio 1")} ${pad("ratio 2")} ${pad("decided")}`);
  for (const r of results) console.log(`${String(r.messages).padEnd(9)} ${r.copy.padEnd(7)} ${pad(r.jsonMB)} ${pad(r.sessionHeapMB)} ${pad(r.fixedMB)} ${pad(r.retainedMB[0])} ${pad(r.retainedMB[1])} ${pad(r.ratio[0])} ${pad(r.ratio[1])} ${pad(r.decisions)}`);
  const json = args.indexOf("--json");
  if (json >= 0) writeFileSync(args[json + 1], JSON.stringify({ node: process.version, preset: PRESET, results }, null, 2));
}
