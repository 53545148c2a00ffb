import { loadSessions } from "../src/sim/load.js";
import { replaySession } from "../src/sim/replay.js";
import { createPruner } from "../src/engine/pruner.js";
import { indexedLine } from "../src/graph/quote-lines.js";
const [folder, preset] = process.argv.slice(2);
const pairs = new Map<string, number>();
for (const s of loadSessions(folder)) {
  const info = new Map<string, { tool: string; subj: string }>();
  for (const m of s.messages) for (const p of m.parts) if (p.type === "tool") info.set(p.id, { tool: p.tool, subj: String(p.state?.input?.filePath ?? "") });
  for (const call of replaySession(s, { pruner: () => createPruner({ preset } as any) })) {
    const seen = new Map<string, string>();
    for (let i = call.units.length - 1; i >= 0; i--) {
      const u = call.units[i]; const me = info.get(u.partId);
      for (const raw of u.text.split("\n")) { const l = indexedLine(raw).trim(); const t = (raw.length + 1) / 4;
        if (me?.tool === "read" && l.length >= 8 && seen.has(l)) { const o = seen.get(l)!; if (o.startsWith("read|") && o !== `read|${me.subj}`) { const k = `${me.subj} <- ${o.slice(5)}`; pairs.set(k, (pairs.get(k) ?? 0) + t); } } }
      const tag = me ? `${me.tool}|${me.subj}` : "text|";
      for (const raw of u.text.split("\n")) { const l = indexedLine(raw).trim(); if (l.length >= 8 && !seen.has(l)) seen.set(l, tag); }
    }
  }
}
for (const [k, v] of [...pairs].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(Math.round(v), k);
