// acp explain: for one call of a replay, which parts are pruned, by which rule, through which
// condition (evaluated with fact values), and the tokens saved.
import type { Command } from "commander";
import { formatExplained } from "../engine/explain.js";
import { describeStanding, type StandingRule } from "../engine/why-not.js";
import { loadSessions, sessionIdOf } from "../sim/index.js";
import type { Io } from "./io.js";
import { checkedPruner, strategyOptions, type ConfigPlace } from "./simulate.js";

export function explainCall(path: string, opts: { preset: string; call?: number; part?: string; rules?: string[]; place?: ConfigPlace }): string {
  const sessions = loadSessions(path);
  if (sessions.length !== 1) throw new Error(`${path} holds ${sessions.length} sessions; explain takes one (a session file)`);
  const [session] = sessions;
  const calls = session.messages.map((m, i) => (m.info.role === "assistant" ? i : -1)).filter((i) => i >= 0);
  const n = opts.call ?? calls.length;
  if (!Number.isInteger(n) || n < 1 || n > calls.length) throw new Error(`--call must be a whole number between 1 and ${calls.length}`);
  // The preset and rule files are checked as simulate checks them: an error stops here (exit 2).
  const options = strategyOptions(opts.preset, { rules: opts.rules, place: opts.place });
  if (!options) throw new Error(`--preset ${opts.preset}: no pruning to explain`);
  const pruner = checkedPruner(opts.preset, { ...options, config: { ...options.config, tool: false } });
  for (const i of calls.slice(0, n)) pruner.transform(structuredClone(session.messages.slice(0, i)));
  const sid = sessionIdOf(session);
  // the first line is the call's totals, with or without --part
  const all = pruner.explain(sid);
  const saving = all.filter((e) => e.tokensSaved > 0);
  const entries = opts.part ? all.filter((e) => e.partId === opts.part) : saving;
  const parts = new Set(saving.map((e) => e.partId)).size; // a part's output and input are two entries
  const out = [`${session.file}: call ${n} of ${calls.length}, preset ${opts.preset}: ${parts} part${parts === 1 ? "" : "s"} pruned, ${saving.reduce((s, e) => s + e.tokensSaved, 0)} tokens saved`];
  if (opts.part && entries.length === 0) out.push(...notPruned(pruner.why(sid, opts.part)?.standing, opts.part, n));
  for (const e of entries) {
    const why = pruner.why(sid, e.partId);
    out.push("", `${e.partId} (${e.tool ?? "part"}): ${e.action} by ${e.rule}, ${e.tokensSaved} tokens`);
    for (const r of why?.rules.filter((x) => x.id === e.rule) ?? []) {
      out.push(`  ${r.description}${r.source ? `  [${r.source}]` : ""}`);
      if (r.key !== undefined) out.push(`  key: ${r.key}`);
      out.push("  when:", ...formatExplained(r.when, "    "));
      const by = why!.decisions.find((d) => d.rule === r.id)?.by;
      if (r.by && by) out.push(`  superseded by ${by}:`, ...formatExplained(r.by, "    "));
    }
  }
  return out.join("\n");
}

/** A part no rule pruned: each rule that considers it, where it stands, and its condition evaluated. */
function notPruned(standing: StandingRule[] | undefined, partId: string, call: number): string[] {
  if (!standing) throw new Error(`--part ${partId}: no such part in the prompt of call ${call}`);
  const out = [`part ${partId} is not pruned at call ${call}${standing.length ? "" : ": no rule considers it"}`];
  for (const s of standing) out.push("", `  ${describeStanding(s)}`, ...(s.source ? [`    [${s.source}]`] : []), ...formatExplained(s.when, "    "));
  return out;
}

export function registerExplain(program: Command, io: Io, setCode: (c: number) => void): void {
  program
    .command("explain <session>")
    .description("for one call of a replay: which parts are pruned, by which rule and condition, and the tokens saved")
    .option("--preset <name>", "preset (compact | balanced | verbose | file), a baseline, or config (what the plugin would run in this folder)", "balanced")
    .option("--call <n>", "call number (1 = first model call; default: the last)", (v) => Number(v))
    .option("--part <id>", "only this part")
    .option("--rules <paths...>", "extra rule files or folders")
    .action((path: string, opts: { preset: string; call?: number; part?: string; rules?: string[] }) => {
      try {
        io.out(`${explainCall(path, opts)}\n`);
        setCode(0);
      } catch (e) {
        io.err(`error: ${(e as Error).message}\n`);
        setCode(2);
      }
    });
}
