// acp simulate: replay recorded sessions call by call through the same createPruner the plugin
// uses, and report billed tokens, cache-aware cost, prefix breaks, quote-loss and speed beside the
// no-pruning replay (definitions: docs/measurement.md).
import { writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Command } from "commander";
import { createPruner } from "../engine/pruner.js";
import { packagePath } from "../rules/paths.js";
import { loadSessions, measureSessions, relativeTo, type CorpusFigures, type Figures, type Session } from "../sim/index.js";
import { htmlReport } from "./html-report.js";
import type { Io } from "./main.js";

/** Comparison bundles that reproduce the published baselines (presets/baselines/*.yaml). */
const BASELINES = ["native", "mask10", "ctxedit", "batch10"];

export function strategyPreset(name: string): string | undefined {
  if (name === "none") return undefined;
  return BASELINES.includes(name) ? packagePath("presets", "baselines", `${name}.yaml`) : name;
}

export interface SimulateOptions {
  compare: string[];
  rules?: string[];
  restart?: boolean;
  progress?: (done: number, total: number) => void;
}

export interface StrategyResult {
  strategy: string;
  figures: CorpusFigures;
}

export function simulate(sessions: Session[], opts: SimulateOptions): StrategyResult[] {
  const out: StrategyResult[] = [];
  const steps = opts.compare.length * sessions.length;
  let done = 0;
  for (const strategy of opts.compare) {
    const preset = strategyPreset(strategy);
    const measured: CorpusFigures["sessions"] = [];
    for (const session of sessions) {
      let pruner;
      let stateDir: string | undefined;
      if (preset !== undefined) {
        if (opts.restart) stateDir = mkdtempSync(join(tmpdir(), "acp-sim-"));
        // Baselines reproduce other pruners: without this plugin's own additions (ids, system prompt).
        const config = BASELINES.includes(strategy) ? { tool: false } : undefined;
        const check = createPruner({ preset, rules: opts.rules, config });
        const errors = check.problems.filter((p) => p.severity === "error");
        if (errors.length) throw new Error(`strategy "${strategy}": ${errors[0].file}:${errors[0].line}:${errors[0].col} ${errors[0].message}`);
        pruner = () => createPruner({ preset, rules: opts.rules, config, stateDir });
      }
      measured.push(...measureSessions([session], { pruner, restart: opts.restart }).sessions);
      if (stateDir) rmSync(stateDir, { recursive: true, force: true });
      opts.progress?.(++done, steps);
    }
    out.push({ strategy, figures: { sessions: measured, total: totalOf(measured) } });
  }
  return out;
}

function totalOf(sessions: CorpusFigures["sessions"]): Figures {
  // measureSessions already knows how to total; re-use it on the measured figures.
  const sum = (f: (s: Figures) => number) => sessions.reduce((a, s) => a + f(s), 0);
  const quoteEvents = sum((s) => s.quoteEvents);
  const quoteLost = sum((s) => s.quoteLost);
  const ms = sessions.flatMap((s) => s.perCall.map((c) => c.transformMs)).filter((x) => x > 0);
  const sorted = ms.slice(1).sort((a, b) => a - b);
  const pick = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] : 0);
  const rules = new Map<string, Figures["rules"][number]>();
  for (const s of sessions)
    for (const r of s.rules) {
      const t = rules.get(r.rule) ?? { rule: r.rule, partsHit: 0, tokensSaved: 0, quoteLosses: 0 };
      t.partsHit += r.partsHit;
      t.tokensSaved += r.tokensSaved;
      t.quoteLosses += r.quoteLosses;
      rules.set(r.rule, t);
    }
  return {
    calls: sum((s) => s.calls),
    billedTokens: sum((s) => s.billedTokens),
    peakContext: Math.max(0, ...sessions.map((s) => s.peakContext)),
    reusableTokens: sum((s) => s.reusableTokens),
    prefixBreaks: sum((s) => s.prefixBreaks),
    anthropicCost: sum((s) => s.anthropicCost),
    openaiCost: sum((s) => s.openaiCost),
    quoteEvents,
    quoteLost,
    quoteLoss: quoteEvents ? quoteLost / quoteEvents : 0,
    transform: { firstMs: ms[0] ?? 0, medianMs: pick(0.5), p95Ms: pick(0.95), calls: ms.length },
    rules: [...rules.values()].sort((a, b) => b.tokensSaved - a.tokensSaved),
    quoteLosses: sessions.flatMap((s) => s.quoteLosses),
  };
}

const pct = (x: number) => `${x > 0 ? "+" : ""}${x.toFixed(1)}%`;
const int = (x: number) => x.toLocaleString("en-US");

function table(rows: string[][]): string {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ")).join("\n");
}

function rowOf(label: string, strategy: string, f: Figures, base: Figures | undefined): string[] {
  const rel = base ? relativeTo(f, base) : undefined;
  return [
    label,
    strategy,
    int(f.billedTokens),
    rel ? pct(rel.billedTokensPct) : "",
    int(f.peakContext),
    String(f.prefixBreaks),
    rel ? pct(rel.anthropicCostPct) : "",
    rel ? pct(rel.openaiCostPct) : "",
    `${(100 * f.quoteLoss).toFixed(2)}% (${f.quoteLost}/${f.quoteEvents})`,
    f.transform.calls ? `${f.transform.medianMs.toFixed(2)}/${f.transform.p95Ms.toFixed(2)}` : "-",
  ];
}

export function report(results: StrategyResult[], perSession: boolean): string {
  const head = ["session", "strategy", "billed", "Δbilled", "peak", "breaks", "Δanthropic", "Δopenai", "quote-loss", "ms med/p95"];
  const base = results.find((r) => r.strategy === "none")?.figures;
  const rows: string[][] = [head];
  if (perSession)
    results[0].figures.sessions.forEach((s, i) => {
      for (const r of results) rows.push(rowOf(s.sessionId.slice(0, 28), r.strategy, r.figures.sessions[i], base?.sessions[i]));
    });
  for (const r of results) rows.push(rowOf(`TOTAL (${r.figures.sessions.length} sessions)`, r.strategy, r.figures.total, base?.total));
  const out = [table(rows)];
  for (const r of results) {
    if (!r.figures.total.rules.length) continue;
    out.push("", `per rule — ${r.strategy}`, table([["rule", "parts", "tokens saved", "quote-loss events"], ...r.figures.total.rules.map((x) => [x.rule, int(x.partsHit), int(x.tokensSaved), String(x.quoteLosses)])]));
  }
  return out.join("\n");
}

export function registerSimulate(program: Command, io: Io, setCode: (c: number) => void): void {
  program
    .command("simulate <path>")
    .description("replay recorded sessions (an export, a corpus file or a folder) and report savings, cache cost and quote-loss")
    .option("--preset <name>", "preset to replay (compact | balanced | verbose | file)", "balanced")
    .option("--compare <list>", "comma-separated strategies: none, native, mask10, ctxedit, batch10, compact, balanced, verbose, or preset files")
    .option("--rules <paths...>", "extra rule files or folders")
    .option("--restart", "reload state from disk before every call (a new OpenCode process per prompt)")
    .option("--per-session", "one row per session and strategy")
    .option("--json <file>", "write every figure as JSON")
    .option("--html <file>", "write a self-contained HTML report")
    .action(async (path: string, opts: { preset: string; compare?: string; rules?: string[]; restart?: boolean; perSession?: boolean; json?: string; html?: string }) => {
      let sessions: Session[];
      try {
        sessions = loadSessions(path);
      } catch (e) {
        io.err(`error: ${(e as Error).message}\n`);
        return setCode(2);
      }
      const compare = opts.compare ? opts.compare.split(",").map((s) => s.trim()).filter(Boolean) : ["none", opts.preset];
      if (!compare.includes("none")) compare.unshift("none");
      const bar = sessions.length > 1 && process.stderr.isTTY ? await progressBar() : undefined;
      let results: StrategyResult[];
      try {
        results = simulate(sessions, { compare, rules: opts.rules, restart: opts.restart, progress: bar?.update });
      } catch (e) {
        bar?.stop();
        io.err(`error: ${(e as Error).message}\n`);
        return setCode(2);
      }
      bar?.stop();
      io.out(`${report(results, Boolean(opts.perSession) || sessions.length === 1)}\n`);
      if (opts.json) writeFileSync(opts.json, JSON.stringify(results, null, 1));
      if (opts.html) {
        const command = ["acp simulate", path, "--compare", compare.join(","), ...(opts.rules ?? []).flatMap((r) => ["--rules", r]), ...(opts.restart ? ["--restart"] : [])];
        writeFileSync(opts.html, htmlReport(results, { title: `acp simulate — ${basename(path)}`, generatedBy: `${command.join(" ")} · ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC` }));
      }
      setCode(0);
    });
}

async function progressBar() {
  const { default: progress } = await import("cli-progress");
  const bar = new progress.SingleBar({ stream: process.stderr, format: "replaying {bar} {value}/{total}", hideCursor: true }, progress.Presets.shades_classic);
  let started = false;
  return {
    update: (done: number, total: number) => {
      if (!started) bar.start(total, 0), (started = true);
      bar.update(done);
    },
    stop: () => started && bar.stop(),
  };
}
