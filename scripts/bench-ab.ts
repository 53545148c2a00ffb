// npm run bench:ab [-- --old DIR] [--new DIR] [--fresh] [--json out.json]: two builds of the
// pruner timed in one process, interleaved call by call, so machine noise falls on both alike
// (issue 15's speed targets are ratios measured this way). Each DIR is a checkout with `dist/`
// built (`npx tsc -p tsconfig.build.json`); --new is this checkout, --old defaults to
// $ACP_BENCH_OLD or /tmp/acp-c75b3a6 (main before the lang/store/HostProfile redesign):
//   git -C . worktree add --detach /tmp/acp-c75b3a6 c75b3a6
//   ln -s "$PWD/node_modules" /tmp/acp-c75b3a6/ && (cd /tmp/acp-c75b3a6 && npx tsc -p tsconfig.build.json)
// Both get the same sessions and copies (balanced preset): the corpus session of `npm run bench`
// replayed call by call, and its generated 2,000-message session (a cold pass with a new pruner,
// then calls adding 5 parts in the same turn or a new turn), alternating which build goes first.
// Beside them, `least exact check + writes` (bench-lib.ts leastCheck) with the new build's
// decisions, on the same copies' history. Prints the ratios the targets are stated in.
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Message } from "../src/graph/types.js";
import { appendStep, callIndexes, CORPUS_DIR, corpusSession, generateSession } from "../tests/engine/session-gen.js";
import { copier, countParts, countTools, dropPendingSamples, gc, leastCheck, loadAverage, measure, round, settleGc, stats, type Sample, type Stats } from "./bench-lib.js";

type Api = typeof import("../src/index.js");
type Pruner = ReturnType<Api["createPruner"]>;

const args = process.argv.slice(2);
const opt = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const REPO = fileURLToPath(new URL("..", import.meta.url));
const BUILDS = { old: resolve(opt("--old") ?? process.env.ACP_BENCH_OLD ?? "/tmp/acp-c75b3a6"), new: resolve(opt("--new") ?? REPO) };
type Build = keyof typeof BUILDS;
const PRESET = "balanced";
const FRESH = args.includes("--fresh");
const copyOf = copier(FRESH);
const CORPUS_FILE = join(CORPUS_DIR, "c7d2069e-c561-4759-8adf-b0745be78c29.json");
const CORPUS_REPLAYS = 3;
const COLD_RUNS = 10;
const REPEATS = 40;

async function load(dir: string): Promise<Api> {
  const entry = join(dir, "dist", "index.js");
  if (!existsSync(entry)) throw new Error(`${entry} is missing: build it (cd ${dir} && npx tsc -p tsconfig.build.json)`);
  return (await import(pathToFileURL(entry).href)) as Api;
}
const api = { old: await load(BUILDS.old), new: await load(BUILDS.new) };

function newPruner(b: Build): Pruner {
  return api[b].createPruner({
    preset: PRESET,
    onError: (e) => {
      throw e;
    },
  });
}
const timed = (p: Pruner, messages: Message[]): Sample => {
  const copy = copyOf(messages);
  return measure(() => p.transform(copy));
};
/** Both builds, the first one alternating with `k`. */
const both = (k: number): Build[] => (k % 2 === 0 ? ["old", "new"] : ["new", "old"]);
const empty = () => ({ old: [] as Sample[], new: [] as Sample[] });

function warmUp(): void {
  const small = generateSession({ seed: 3, turns: 200, stepsPerTurn: 1, toolsPerStep: 10 });
  for (const b of both(0)) {
    timed(newPruner(b), small);
    const p = newPruner(b);
    let h = small;
    for (let k = 0; k < 6; k++) timed(p, (h = appendStep(h, 5000 + k, 5, k % 2 === 1)));
  }
  dropPendingSamples();
}

/** Every call of the corpus session with a new pruner, per call after the first. */
function corpusBench() {
  const { messages } = corpusSession(CORPUS_FILE);
  const calls = callIndexes(messages);
  const perCall = empty();
  for (let r = 0; r < CORPUS_REPLAYS; r++)
    for (const b of both(r)) {
      const p = newPruner(b);
      calls.forEach((i, n) => {
        const s = timed(p, messages.slice(0, i));
        if (n > 0) perCall[b].push(s);
      });
    }
  return { session: `c7d2069e-c561-4759-8adf-b0745be78c29 (${messages.length} messages, ${calls.length} calls)`, perCall };
}

function generatedBench(base: Message[]) {
  const cold = empty();
  for (let k = 0; k < COLD_RUNS; k++)
    for (const b of both(k)) {
      gc();
      cold[b].push(timed(newPruner(b), base));
    }
  const warm = { old: newPruner("old"), new: newPruner("new") };
  for (const b of both(0)) timed(warm[b], base);
  const same = empty();
  const turn = empty();
  const least: Sample[] = [];
  const sessionID = base[0].info.sessionID;
  let history = base;
  for (let k = 0; k < 2 * REPEATS; k++) {
    const newTurn = k % 2 === 1;
    history = appendStep(history, 1000 + k, newTurn ? 4 : 5, newTurn);
    const into = newTurn ? turn : same;
    for (const b of both(k >> 1)) into[b].push(timed(warm[b], history));
    // the floor of this call: the new build's decisions written into a copy of the same history
    const check = leastCheck(history, new Set(Object.keys(warm.new.state(sessionID).decisions)));
    const copy = copyOf(history);
    least.push(measure(() => check(copy)));
  }
  return { cold, same, turn, least, decisions: Object.keys(warm.new.state(sessionID).decisions).length };
}

async function main() {
  warmUp();
  const corpus = corpusBench();
  const base = generateSession({ seed: 1, turns: 1000, stepsPerTurn: 1, toolsPerStep: 10 });
  const gen = generatedBench(base);
  await settleGc();
  const pair = (x: { old: Sample[]; new: Sample[] }) => ({ old: stats(x.old), new: stats(x.new) });
  const rows = { corpusPerCall: pair(corpus.perCall), cold: pair(gen.cold), sameTurnPlus5: pair(gen.same), newTurnPlus5: pair(gen.turn) };
  const least = stats(gen.least);
  const ratio = (a: number, b: number) => round(a / b);
  const ratios = {
    "incremental same turn / least exact check": { value: ratio(rows.sameTurnPlus5.new.median, least.median), goal: 1.5 },
    "incremental new turn / least exact check": { value: ratio(rows.newTurnPlus5.new.median, least.median), goal: 1.5 },
    "incremental same turn, new / old": { value: ratio(rows.sameTurnPlus5.new.median, rows.sameTurnPlus5.old.median), goal: 1.25 },
    "incremental new turn, new / old": { value: ratio(rows.newTurnPlus5.new.median, rows.newTurnPlus5.old.median), goal: 1.25 },
    "cold full pass, new / old": { value: ratio(rows.cold.new.median, rows.cold.old.median), goal: 1.1 },
    "corpus median per call, new (ms)": { value: rows.corpusPerCall.new.median, goal: 1 },
  };
  const result = {
    node: process.version,
    preset: PRESET,
    copies: FRESH ? "json" : "shared-strings",
    loadavgStart: startLoad,
    loadavgEnd: loadAverage(),
    builds: BUILDS,
    corpus: corpus.session,
    generated: `generated (${base.length} messages, ${countTools(base)} tool parts, ${countParts(base)} parts, 1000 turns), ${gen.decisions} decisions`,
    rows,
    leastExactCheck: least,
    ratios,
  };

  const num = (x: number) => String(x).padStart(9);
  const row = (name: string, s: Stats) => `${name.padEnd(36)} ${num(s.median)} ${num(s.p95)} ${num(s.cpuMedian)} ${num(s.gcMedian)} ${String(s.n).padStart(4)}`;
  console.log(`A/B transform ms (${PRESET}, node ${process.version}, copies ${result.copies}, load average ${startLoad.join(" ")} → ${result.loadavgEnd.join(" ")})`);
  console.log(`  old: ${BUILDS.old}\n  new: ${BUILDS.new}`);
  console.log(`${"".padEnd(36)} ${"median".padStart(9)} ${"p95".padStart(9)} ${"cpu med".padStart(9)} ${"gc med".padStart(9)} ${"n".padStart(4)}`);
  console.log(`corpus: ${result.corpus}`);
  for (const b of ["old", "new"] as const) console.log(row(`  per call, ${b}`, rows.corpusPerCall[b]));
  console.log(`generated: ${result.generated}`);
  for (const [name, key] of [["cold full pass", "cold"], ["+5 parts, same turn", "sameTurnPlus5"], ["+5 parts, new turn", "newTurnPlus5"]] as const)
    for (const b of ["old", "new"] as const) console.log(row(`  ${name}, ${b}`, rows[key][b]));
  console.log(row("  least exact check + writes", least));
  for (const [name, r] of Object.entries(ratios)) console.log(`${r.value <= r.goal ? "PASS" : "MISS"}  ${name}: ${r.value} (goal ≤ ${r.goal})`);
  const out = opt("--json");
  if (out) {
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`wrote ${out}`);
  }
}

const startLoad = loadAverage();
await main();
