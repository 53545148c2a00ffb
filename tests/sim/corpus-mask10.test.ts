// Acceptance over the real development corpus: observation masking (newest 10 tool outputs) against
// the published baseline table (docs/simulate.md, Baselines). Published: billed −42.0%, Anthropic +52.3%, OpenAI +37.0%,
// 1,014 prefix breaks, quote-loss 28.25%.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadSessions } from "../../src/sim/load.js";
import { measureSessions, relativeTo } from "../../src/sim/metrics.js";
import { CORPUS } from "./build.js";
import { mask } from "./reference-baselines.js";
import { OPENCODE } from "../../src/host/profile.js";

describe.skipIf(!existsSync(CORPUS))("corpus replay: mask10", () => {
  const sessions = loadSessions(CORPUS);
  // the published baseline figures (docs/simulate.md, Baselines) assume a cache that never expires
  const none = measureSessions(sessions, { host: OPENCODE, cacheTtlMinutes: 0 }).total;
  const mask10 = measureSessions(sessions, { host: OPENCODE, pruner: () => mask(10), cacheTtlMinutes: 0 }).total;
  const rel = relativeTo(mask10, none);

  it("matches the published savings and cache costs within 1 percentage point", () => {
    expect(rel.billedTokensPct).toBeCloseTo(-42.0, 0); // measured −42.03%
    expect(Math.abs(rel.anthropicCostPct - 52.3)).toBeLessThan(1); // measured +52.24%
    expect(Math.abs(rel.openaiCostPct - 37.0)).toBeLessThan(1); // measured +36.92%
  });

  it("breaks the cached prefix on exactly the published 1,014 calls", () => {
    expect(mask10.prefixBreaks).toBe(1014);
  });

  it("loses 84 of the 308 quote events (27.27%; published 28.25% = 87)", () => {
    expect(mask10.quoteEvents).toBe(308);
    expect(mask10.quoteLost).toBe(84);
    expect(Math.abs(100 * mask10.quoteLoss - 28.25)).toBeLessThan(1);
  });

  it("attributes every saved token and every lost quote to the masking rule", () => {
    expect(mask10.rules).toHaveLength(1);
    expect(mask10.rules[0]).toMatchObject({ rule: "mask10", tokensSaved: none.billedTokens - mask10.billedTokens, quoteLosses: 84 });
  });
});
