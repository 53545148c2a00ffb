// Billed tokens of tool-output lines that a newer part of the same prompt also shows: what a
// line-level supersede could elide with no quote lost (docs/tuning.md, session 7).
// Usage: npx tsx scripts/duplicate-lines.ts <folder> <preset|none>
import { loadSessions } from "../src/sim/load.js";
import { replaySession } from "../src/sim/replay.js";
import { createPruner, OPENCODE } from "../src/index.js";
import { indexedLine } from "../src/graph/quote-lines.js";
const [folder, preset] = process.argv.slice(2);
let total = 0, dup = 0; const byTool = new Map<string, number>();
for (const s of loadSessions(folder)) {
  const toolOf = new Map<string, string>();
  for (const m of s.messages) for (const p of m.parts) if (p.type === "tool") toolOf.set(p.id, p.tool ?? "");
  for (const call of replaySession(s, preset === "none" ? { host: OPENCODE } : { host: OPENCODE, pruner: () => createPruner({ preset } as any) })) {
    const seen = new Set<string>();
    for (let i = call.units.length - 1; i >= 0; i--) {
      const u = call.units[i];
      const lines = u.text.split("\n");
      const tool = toolOf.get(u.partId);
      for (const raw of lines) {
        const l = indexedLine(raw).trim();
        const t = (raw.length + 1) / 4;
        total += t;
        if (tool && l.length >= 8 && seen.has(l)) { dup += t; byTool.set(tool, (byTool.get(tool) ?? 0) + t); }
      }
      for (const raw of lines) { const l = indexedLine(raw).trim(); if (l.length >= 8) seen.add(l); }
    }
  }
}
console.log(folder, preset, "total", Math.round(total), "dup-in-tool-outputs", Math.round(dup), ((100 * dup) / total).toFixed(1) + "%");
console.log([...byTool].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k}:${Math.round(v)}`).join(" "));
