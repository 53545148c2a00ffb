import { loadSessions } from "../src/sim/load.js";
import { replaySession } from "../src/sim/replay.js";
import { createPruner } from "../src/engine/pruner.js";
import { indexedLine } from "../src/graph/quote-lines.js";
const [folder, preset] = process.argv.slice(2);
let total = 0; const by = new Map<string, number>();
for (const s of loadSessions(folder)) {
  const info = new Map<string, { tool: string; subj: string }>();
  for (const m of s.messages) for (const p of m.parts) if (p.type === "tool") info.set(p.id, { tool: p.tool, subj: String(p.state?.input?.filePath ?? p.state?.input?.command ?? p.state?.input?.url ?? "") });
  for (const call of replaySession(s, preset === "none" ? {} : { pruner: () => createPruner({ preset } as any) })) {
    const seen = new Map<string, string>(); // line -> "tool|subj" of newest later unit holding it
    for (let i = call.units.length - 1; i >= 0; i--) {
      const u = call.units[i];
      const lines = u.text.split("\n");
      const me = info.get(u.partId);
      const isOut = me && i + 1 < call.units.length && call.units[i + 1]?.partId !== u.partId; // result unit = second of the pair
      for (const raw of lines) {
        const l = indexedLine(raw).trim();
        const t = (raw.length + 1) / 4;
        total += t;
        if (me && l.length >= 8 && seen.has(l)) {
          const o = seen.get(l)!; const [ot, os] = o.split("|");
          const cls = ot === "text" ? "text" : ot === me.tool ? (os === me.subj ? "same-tool-same-subj" : "same-tool-other-subj") : "other-tool";
          const k = `${me.tool} <- ${cls}`;
          by.set(k, (by.get(k) ?? 0) + t);
        }
      }
      const tag = me ? `${me.tool}|${me.subj}` : "text|";
      for (const raw of lines) { const l = indexedLine(raw).trim(); if (l.length >= 8 && !seen.has(l)) seen.set(l, tag); }
    }
  }
}
console.log(folder, preset, "total", Math.round(total));
for (const [k, v] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(k.padEnd(40), Math.round(v), ((100 * v) / total).toFixed(2) + "%");
