// npx tsx scripts/bootstrap.ts N out.json [more.json...]: how much `acp simulate`'s totals move with
// the sessions. Draws N sessions with replacement from the --json files' sessions, 2,000 times
// (fixed seed), and prints per preset the 5th/50th/95th percentile of the Anthropic cost against no
// pruning and of quote-loss, and how often a draw misses the issue-13 targets. The confirmation
// sets the presets are also judged on hold 21 and 40 sessions (docs/tuning.md, session 12).
import { readFileSync } from "node:fs";

interface Figures { file: string; anthropicCost: number; quoteEvents: number; quoteLost: number }
interface Strategy { strategy: string; figures: { sessions: Figures[] } }

const TARGETS: Record<string, { cost: number; loss: number }> = { balanced: { cost: -30, loss: 1 }, compact: { cost: -45, loss: 5 }, verbose: { cost: 0, loss: 0 } };
const DRAWS = 2000;

const [n, ...files] = process.argv.slice(2);
const size = Number(n);
if (!(size > 0) || files.length === 0) {
  console.error("usage: npx tsx scripts/bootstrap.ts N out.json [more.json...]  (out.json from acp simulate --compare none,... --json)");
  process.exit(2);
}
const bySession = new Map<string, Record<string, Figures>>();
for (const f of files)
  for (const st of JSON.parse(readFileSync(f, "utf8")) as Strategy[])
    for (const s of st.figures.sessions) {
      const entry = bySession.get(s.file) ?? {};
      entry[st.strategy] = s;
      bySession.set(s.file, entry);
    }
const sessions = [...bySession.values()].filter((s) => s.none !== undefined);
if (sessions.length === 0) throw new Error("no session has a `none` replay: run acp simulate with --compare none,...");

let seed = 1; // a linear congruential generator: the same draws on every run
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pct = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))].toFixed(2);

console.log(`${sessions.length} sessions, ${DRAWS} draws of ${size}`);
for (const [preset, target] of Object.entries(TARGETS)) {
  if (sessions[0][preset] === undefined) continue;
  const cost: number[] = [];
  const loss: number[] = [];
  for (let d = 0; d < DRAWS; d++) {
    let none = 0, pruned = 0, events = 0, lost = 0;
    for (let i = 0; i < size; i++) {
      const s = sessions[Math.floor(random() * sessions.length)];
      none += s.none.anthropicCost;
      pruned += s[preset].anthropicCost;
      events += s[preset].quoteEvents;
      lost += s[preset].quoteLost;
    }
    cost.push((pruned / none - 1) * 100);
    loss.push(events ? (lost / events) * 100 : 0);
  }
  const missCost = cost.filter((c) => c > target.cost).length / DRAWS;
  const missLoss = loss.filter((l) => l > target.loss).length / DRAWS;
  console.log(`${preset.padEnd(9)} Δanthropic p5/p50/p95 ${pct(cost, 0.05)} / ${pct(cost, 0.5)} / ${pct(cost, 0.95)}  quote-loss p50/p90/p95 ${pct(loss, 0.5)} / ${pct(loss, 0.9)} / ${pct(loss, 0.95)}  misses cost ${(missCost * 100).toFixed(1)}%, loss ${(missLoss * 100).toFixed(1)}%`);
}
