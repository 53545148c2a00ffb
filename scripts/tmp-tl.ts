import { loadSessions } from "../src/sim/load.js";
import { replaySession, callTime } from "../src/sim/replay.js";
import { createPruner } from "../src/engine/pruner.js";
import { promptTokens } from "../src/graph/prompt.js";
const [file, preset] = process.argv.slice(2);
for (const s of loadSessions(file)) {
  let prevT: number | undefined; let prevDec = 0; let users = 0;
  for (const m of s.messages) if (m.info.role === "user") users++;
  console.log("messages", s.messages.length, "users", users);
  for (const call of replaySession(s, { pruner: () => createPruner({ preset, rules: process.env.RULES ? [process.env.RULES] : [] } as any) })) {
    const t = callTime(call.message); const gap = t && prevT ? Math.round((t - prevT) / 1000) : 0; prevT = t;
    const dec = call.explain.length;
    const prevMsg = call.context[call.context.length - 1];
    console.log(call.index, "tok", promptTokens(call.units), "gap", gap + "s", "decisions", dec, dec !== prevDec ? "<-- +" + (dec - prevDec) : "", prevMsg.info.role === "user" ? "USER" : "");
    prevDec = dec;
  }
}
