import { loadSessions } from "../src/sim/load.js";
import { measureSession, relativeTo } from "../src/sim/metrics.js";
import { createPruner } from "../src/engine/pruner.js";
const [folder, preset, cfg] = process.argv.slice(2);
const config = cfg ? JSON.parse(cfg) : undefined;
let over = 0, worst = -Infinity, n = 0;
for (const s of loadSessions(folder)) {
  const none = measureSession(s, {});
  const v = measureSession(s, { pruner: () => createPruner({ preset, config } as any) });
  const r = relativeTo(v, none); n++;
  const w = Math.max(r.anthropicCostWithRecoveryPct, r.openaiCostWithRecoveryPct);
  if (w > 0) { over++; console.log(s.id.slice(0, 8), w.toFixed(2)); }
  worst = Math.max(worst, w);
}
console.log(folder, preset, cfg ?? "", "sessions above none:", over, "/", n, "worst", worst.toFixed(2));
