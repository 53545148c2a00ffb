// The comparison strategies `native` and `mask10` of `acp simulate` are rule bundles run by the
// engine (presets/baselines/*.yaml). They must reproduce the independent reference pruners
// (reference-baselines.ts) figure for figure on the corpus.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { strategyPreset } from "../../src/cli/simulate.js";
import { loadSessions } from "../../src/sim/load.js";
import { measureSessions, type Figures } from "../../src/sim/metrics.js";
import { CORPUS } from "./build.js";
import { mask, native } from "./reference-baselines.js";

const figures = (f: Figures) => ({ billed: f.billedTokens, breaks: f.prefixBreaks, anthropic: Math.round(f.anthropicCost), openai: Math.round(f.openaiCost), lost: f.quoteLost, events: f.quoteEvents });

describe.skipIf(!existsSync(CORPUS))("baseline rule bundles", () => {
  const sessions = loadSessions(CORPUS);
  const bundle = (name: string) => () => createPruner({ preset: strategyPreset(name), config: { tool: false } });

  it("mask10 as rules equals the reference observation masking", () => {
    expect(figures(measureSessions(sessions, { pruner: bundle("mask10") }).total)).toEqual(figures(measureSessions(sessions, { pruner: () => mask(10) }).total));
  });

  it("native as rules equals the reference OpenCode prune", () => {
    expect(figures(measureSessions(sessions, { pruner: bundle("native") }).total)).toEqual(figures(measureSessions(sessions, { pruner: () => native() }).total));
  });
});
