// npm run bench:profile [-- --calls N] [--from K] [--dir DIR] [--profile out.cpuprofile]: the
// generated session of `npm run bench` after a cold pass, then N incremental calls (+5 parts, same
// turn and new turn alternating), timed per call from the K-th (default 10: a warm-up); with
// --profile, a CPU profile of those calls only (0.1 ms sampling; open it in Chrome's DevTools or
// read it with any .cpuprofile viewer). idle-large-output backs off at call 30 on this session
// (docs/bench.md, speed4): --from 30 leaves out the calls with its blocked chains.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { pathToFileURL } from "node:url";
import { join, resolve } from "node:path";
import { appendStep, deepCopy, generateSession } from "../tests/engine/session-gen.js";
import type { Message } from "../src/graph/types.js";

const args = process.argv.slice(2);
const opt = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const CALLS = Number(opt("--calls") ?? 200);
/** Calls before the profile starts (warm-up; the generated session's idle-large-output backs off after call 30). */
const FROM = Number(opt("--from") ?? 10);
const dir = resolve(opt("--dir") ?? ".");
const api = (await import(pathToFileURL(join(dir, "dist", "index.js")).href)) as typeof import("../src/index.js");
const p = api.createPruner({ preset: "balanced", onError: (e) => { throw e; } });
let history: Message[] = generateSession({ seed: 1, turns: 1000, stepsPerTurn: 1, toolsPerStep: 10 });
p.transform(deepCopy(history));
const out = opt("--profile");
const inspector = new Session();
if (out) {
  inspector.connect();
  await inspector.post("Profiler.enable");
  await inspector.post("Profiler.setSamplingInterval", { interval: 100 });
}
const times: number[] = [];
for (let k = 0; k < CALLS; k++) {
  const newTurn = k % 2 === 1;
  history = appendStep(history, 1000 + k, newTurn ? 4 : 5, newTurn);
  const copy = deepCopy(history);
  const t = performance.now();
  p.transform(copy);
  times.push(performance.now() - t);
  if (k === FROM - 1 && out) await inspector.post("Profiler.start"); // after a warm-up
}
if (out) {
  const { profile } = await inspector.post("Profiler.stop");
  writeFileSync(out, JSON.stringify(profile));
}
const tail = times.slice(FROM).sort((a, b) => a - b);
console.log(`${CALLS} calls: median ${tail[tail.length >> 1].toFixed(3)} ms, p10 ${tail[Math.floor(tail.length * 0.1)].toFixed(3)} ms`);
