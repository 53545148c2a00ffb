// Edit-anchor diagnostic (docs/tuning.md, "What quote-loss cannot see"): lines (>=40 chars) of edit oldString / apply_patch context the
// unpruned prompt shows at that call, and whether the pruned prompt still does.
// Usage: npx tsx scripts/edit-anchors.ts <folder> <preset> (RULES=<file> adds a rule file)
import { loadSessions } from "../src/sim/load.js";
import { replaySession } from "../src/sim/replay.js";
import { createPruner } from "../src/engine/pruner.js";
import { OPENCODE } from "../src/host/profile.js";
import { PromptText } from "../src/sim/quotes.js";
const [folder, preset] = process.argv.slice(2);
let seen = 0, hidden = 0; const byS = new Map<string, number>();
function anchors(p: any): string[] {
  const out: string[] = []; const i = p.state?.input ?? {};
  const add = (s: unknown) => { if (typeof s === "string") for (const l of s.split("\n")) { const t = l.trim(); if (t.length >= 40) out.push(t); } };
  if (p.tool === "edit") add(i.oldString ?? i.old_string);
  if (p.tool === "multiedit") for (const e of i.edits ?? []) add(e.oldString ?? e.old_string);
  if (p.tool === "apply_patch") add(String(i.patchText ?? i.patch ?? "").split("\n").filter((l: string) => l.startsWith(" ") || l.startsWith("-")).map((l: string) => l.slice(1)).join("\n"));
  return out;
}
for (const s of loadSessions(folder)) {
  const a = replaySession(s, { host: OPENCODE });
  const b = replaySession(s, { host: OPENCODE, pruner: () => createPruner({ host: OPENCODE, preset, rules: process.env.RULES ? [process.env.RULES] : [] } as any) });
  for (;;) {
    const x = a.next(), y = b.next(); if (x.done || y.done) break;
    const lines = x.value.message.parts.filter((p: any) => p.type === "tool").flatMap(anchors);
    if (!lines.length) continue;
    const pa = new PromptText(x.value.units), pb = new PromptText(y.value.units);
    for (const l of lines) if (pa.contains(l)) { seen++; if (!pb.contains(l)) { hidden++; byS.set(s.id.slice(0, 8), (byS.get(s.id.slice(0, 8)) ?? 0) + 1); } }
  }
}
console.log(folder, preset, "anchors visible unpruned", seen, "hidden", hidden, (100 * hidden / seen).toFixed(2) + "%", JSON.stringify([...byS]));
