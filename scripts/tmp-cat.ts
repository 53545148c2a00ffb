import { loadSessions } from "../src/sim/load.js";
import { replaySession } from "../src/sim/replay.js";
import { createPruner } from "../src/engine/pruner.js";
const [folder, preset] = process.argv.slice(2);
let total = 0; const by = new Map<string, number>();
const add = (k: string, t: number) => by.set(k, (by.get(k) ?? 0) + t);
for (const s of loadSessions(folder)) {
  const info = new Map<string, string>();
  for (const m of s.messages) for (const p of m.parts) info.set(p.id, p.type === "tool" ? `tool:${p.tool}` : `${m.info.role}:${p.type}`);
  for (const call of replaySession(s, preset === "none" ? {} : { pruner: () => createPruner({ preset, rules: process.env.RULES ? [process.env.RULES] : [] } as any) })) {
    let prev = "";
    for (const u of call.units) {
      const t = Math.ceil(u.text.length / 4); total += t;
      let k = info.get(u.partId) ?? "other";
      if (k.startsWith("tool:")) { k += u.partId === prev ? " out" : " in"; }
      prev = u.partId;
      add(k, t);
    }
  }
}
console.log(folder, preset, "total", total);
for (const [k, v] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 22)) console.log(k.padEnd(30), v, ((100 * v) / total).toFixed(2) + "%");
