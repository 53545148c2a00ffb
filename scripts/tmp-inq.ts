// Lines of earlier task prompts (inputs) that a later assistant message writes again while the prompt is hidden.
import { loadSessions } from "../src/sim/load.js";
import { replaySession } from "../src/sim/replay.js";
import { createPruner } from "../src/engine/pruner.js";
import { loadRuleFiles } from "../src/rules/load.js";
import { writtenLines } from "../src/sim/quotes.js";
const [folder, preset, rules] = process.argv.slice(2);
let events = 0, hidden = 0;
for (const s of loadSessions(folder)) {
  const sources = new Map<string, string>();
  for (const call of replaySession(s, { pruner: () => createPruner({ preset, rules: rules ? [rules] : [] } as any) })) {
    const prompt = call.units.map((u) => u.text).join("\n");
    for (const l of writtenLines(call.message)) if (sources.has(l)) { events++; if (!prompt.includes(JSON.stringify(l).slice(1, -1))) { hidden++; if (hidden < 12) console.log("  hidden:", l.slice(0, 90)); } }
    for (const p of call.message.parts) if (p.type === "tool" && p.tool === "task") for (const raw of String(p.state?.input?.prompt ?? "").split("\n")) { const l = raw.trim(); if (l.length >= 40 && !sources.has(l)) sources.set(l, p.id); }
  }
}
console.log(folder, preset, "prompt-line reuses", events, "while hidden", hidden);
