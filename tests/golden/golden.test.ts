// The golden replay's slice for npm test: a few corpus sessions (both folders) and the generated
// ones, under the three presets, live and with restarts and prune requests, must hash call by
// call as recorded in golden.json. The whole corpus: `npm run golden` (docs/architecture.md).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { corpusPresent, difference, entryKey, GOLDEN_FILE, goldenSessions, MODES, PRESETS, replayGolden, SMALL, toEntry, type Golden } from "./replay.js";

const golden = JSON.parse(readFileSync(GOLDEN_FILE, "utf8")) as Golden;
const sessions = goldenSessions();
const slice = sessions.filter((s) => SMALL.includes(s.name));
const totals = { calls: 0, decisions: 0, restarts: 0, requests: 0 };

describe("golden replay (slice; npm run golden for all of it)", () => {
  it.each(slice.map((s) => [s.name, s] as const))("%s: every call's prompt and state as recorded", (_name, s) => {
    const messages = s.messages();
    const differences: string[] = [];
    for (const preset of PRESETS)
      for (const mode of MODES) {
        const key = entryKey(s.name, preset, mode);
        const r = replayGolden(messages, preset, mode);
        totals.calls += r.calls.length;
        totals.decisions += r.stats.decisions;
        totals.restarts += r.stats.restarts;
        totals.requests += r.stats.requests;
        const d = difference(key, r, golden[key]);
        if (d) differences.push(d);
      }
    expect(differences, "behaviour changed: if on purpose, npm run golden:record").toEqual([]);
  });

  it("the slice is what it says: both corpus folders where present, calls, decisions, restarts, prune requests", () => {
    expect(slice.map((s) => s.name).sort()).toEqual(corpusPresent() ? [...SMALL].sort() : SMALL.filter((n) => n.startsWith("gen/")).sort());
    console.log(`golden slice: ${JSON.stringify(totals)}`);
    expect(totals.calls).toBeGreaterThan(500);
    expect(totals.decisions).toBeGreaterThan(100);
    expect(totals.restarts).toBeGreaterThan(25);
    expect(totals.requests).toBeGreaterThan(40);
  });

  it.skipIf(!corpusPresent())("the golden has an entry for every session, preset and mode, and no other", () => {
    const want = sessions.flatMap((s) => PRESETS.flatMap((p) => MODES.map((m) => entryKey(s.name, p, m)))).sort();
    expect(Object.keys(golden).sort()).toEqual(want);
  });

  it("a changed call is found: the first differing call is named, prompt or state", () => {
    const s = slice.find((x) => x.name === "gen/mix1")!;
    const verbose = replayGolden(s.messages(), "verbose", "live");
    const compact = toEntry(replayGolden(s.messages(), "compact", "live"));
    const d = difference("k", verbose, compact);
    expect(d).toMatch(/^k: call \d+ of \d+ differs first \((prompt and state|prompt|state)\)$/);
    const calls = verbose.calls.slice();
    calls[2] = calls[2].slice(0, 5) + "00000";
    expect(difference("k", verbose, { digest: "0", calls: calls.join(" ") })).toBe("k: call 3 of 48 differs first (state)");
    expect(difference("k", verbose, toEntry(verbose))).toBeUndefined();
    expect(difference("k", verbose, undefined)).toMatch(/not in the golden/);
  });
});
