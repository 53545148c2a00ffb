// npm run golden: replays every call of the corpus and the generated sessions under the three
// presets, live and with restarts and prune requests, and compares each call's prompt and state
// hashes with tests/golden/golden.json. npm run golden:record writes that file instead (after a
// deliberate behaviour change). --only <text> keeps the sessions whose name contains it.
// --no-parking replays with parked wants off (every blocked want evaluated on every call): parking is
// a shortcut, so that replay must equal the recorded one too.
// tests/golden/golden.test.ts runs a small slice of the same in npm test.
import { readFileSync, writeFileSync } from "node:fs";
import { parking } from "../src/engine/parked.js";
import { corpusPresent, difference, entryKey, GOLDEN_FILE, goldenSessions, MODES, PRESETS, replayGolden, toEntry, type Golden } from "../tests/golden/replay.js";

const args = process.argv.slice(2);
const record = args.includes("--record");
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : undefined;
if (args.includes("--no-parking")) {
  if (record) {
    console.error("golden: --no-parking compares with the recorded replay; record without it");
    process.exit(2);
  }
  parking.on = false;
}
if (record && !corpusPresent()) {
  console.error("golden: ../shared/corpus is missing; recording needs both corpus folders (ACP_CORPUS, ACP_CORPUS_MULTITURN)");
  process.exit(2);
}
const old: Golden = (() => {
  try {
    return JSON.parse(readFileSync(GOLDEN_FILE, "utf8")) as Golden;
  } catch {
    return {};
  }
})();
const next: Golden = record && only ? { ...old } : {};
const problems: string[] = [];
let calls = 0;
let entries = 0;
const start = performance.now();
for (const s of goldenSessions()) {
  if (only && !s.name.includes(only)) continue;
  const messages = s.messages();
  for (const preset of PRESETS)
    for (const mode of MODES) {
      const key = entryKey(s.name, preset, mode);
      const r = replayGolden(messages, preset, mode);
      calls += r.calls.length;
      entries++;
      if (record) next[key] = toEntry(r);
      else {
        const d = difference(key, r, old[key]);
        if (d) problems.push(d);
      }
    }
}
const secs = ((performance.now() - start) / 1000).toFixed(1);
if (record) {
  const sorted = Object.fromEntries(Object.entries(next).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(GOLDEN_FILE, JSON.stringify(sorted, null, 0).replace(/^\{/, "{\n").replace(/\},"/g, '},\n"').replace(/\}$/, "\n}") + "\n");
  console.log(`golden: recorded ${entries} replays, ${calls} calls, in ${secs} s`);
} else {
  for (const p of problems) console.log(p);
  console.log(`golden: ${entries} replays, ${calls} calls, ${problems.length} differ (${secs} s)${corpusPresent() ? "" : "; corpus absent: generated sessions only"}`);
  process.exit(problems.length ? 1 : 0);
}
