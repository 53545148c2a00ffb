import { loadSessions } from "../src/sim/load.js";
import { replaySession } from "../src/sim/replay.js";
import { createPruner } from "../src/engine/pruner.js";
const [folder, preset, tool] = process.argv.slice(2);
const by = new Map<string, number>(); let total = 0;
for (const s of loadSessions(folder)) {
  const turnOf = new Map<string, number>(); const toolOf = new Map<string, string>();
  let turn = 0, prevUser = false;
  for (const m of s.messages) { const u = m.info.role === "user"; if (u && !prevUser) turn++; prevUser = u; for (const p of m.parts) { turnOf.set(p.id, turn); if (p.type === "tool") toolOf.set(p.id, p.tool); } }
  for (const call of replaySession(s, preset === "none" ? {} : { pruner: () => createPruner({ preset } as any) })) {
    const ct = turnOf.get(call.message.parts[0]?.id) ?? turn;
    let prev = "";
    for (const u of call.units) {
      const isOut = u.partId === prev; prev = u.partId;
      if (!isOut || toolOf.get(u.partId) !== tool) continue;
      const t = Math.ceil(u.text.length / 4); total += t;
      const age = Math.min(ct - (turnOf.get(u.partId) ?? 0), 9);
      const size = u.text.length < 1000 ? "<1k" : u.text.length < 4000 ? "1-4k" : u.text.length < 16000 ? "4-16k" : ">16k";
      const k = `age${age} ${size}`; by.set(k, (by.get(k) ?? 0) + t);
    }
  }
}
console.log(folder, preset, tool, "total", total);
for (const [k, v] of [...by].sort()) console.log(k.padEnd(14), String(v).padStart(10), ((100 * v) / total).toFixed(1) + "%");
