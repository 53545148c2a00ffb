import { loadSessions } from "../src/sim/load.js";
import { replaySession } from "../src/sim/replay.js";
import { createPruner } from "../src/engine/pruner.js";
const [folder, preset] = process.argv.slice(2);
let total = 0, bc = 0, n = 0; const ex: string[] = [];
for (const s of loadSessions(folder)) {
  for (const call of replaySession(s, { pruner: () => createPruner({ preset } as any) })) {
    let prev = "";
    for (const u of call.units) {
      const t = Math.ceil(u.text.length / 4); total += t;
      if (u.partId === prev && / → (output cleared|superseded by)/.test(u.text) && u.text.length < 2000) { bc += t; n++; if (ex.length < 5 && u.text.length > 150) ex.push(u.text.slice(0, 200)); }
      prev = u.partId;
    }
  }
}
console.log(folder, preset, "total", total, "breadcrumb tokens", bc, (100 * bc / total).toFixed(2) + "%", "count", n);
for (const e of ex) console.log("  ", e);
