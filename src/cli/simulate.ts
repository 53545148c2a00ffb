// acp simulate: replay recorded sessions call by call through the same createPruner the plugin
// uses, and report billed tokens, cache-aware cost (with and without recovery), prefix breaks,
// quote-loss and speed beside the no-pruning replay (definitions: docs/simulate.md).
import { OPENCODE } from "../host/profile.js";
import { existsSync, writeFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import type { AcpPruner } from "../engine/pruner.js";
import { createPruner, type PrunerOptions } from "../store/pruner.js";
import { backedOffRules, regretByRule } from "../engine/regret.js";
import { packagePath } from "../rules/paths.js";
import { INLINE_CONFIG, PRESET_NAMES } from "../rules/presets.js";
import { loadConfig } from "../rules/config.js";
import { didYouMean } from "../rules/problems.js";
import {
  ANTHROPIC_CACHE,
  loadSessions,
  measureSessions,
  RECOVERY_LIMIT_PCT,
  relativeTo,
  sessionsOverLimit,
  totalOf as totalOfSessions,
  type CorpusFigures,
  type Figures,
  sessionIdOf,
  type Session,
} from "../sim/index.js";
import { htmlReport } from "./html-report.js";
import type { Io } from "./io.js";
import type { StrategyResult } from "./strategy-result.js";
import { columns } from "./format.js";

export type { StrategyResult } from "./strategy-result.js";

/** Comparison bundles that reproduce the published baselines (presets/baselines/*.yaml). */
const BASELINES = ["native", "mask10", "ctxedit", "batch10"];

/** The strategy that replays what the plugin would run in the current folder (its acp.jsonc layers and rule folders). */
export const CONFIG_STRATEGY = "config";

export function strategyPreset(name: string): string | undefined {
  if (name === "none") return undefined;
  return BASELINES.includes(name) ? packagePath("presets", "baselines", `${name}.yaml`) : name;
}

/** Where the `config` strategy looks for acp.jsonc, as the plugin does in that folder. */
export interface ConfigPlace {
  projectDir: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * The pruner options of a strategy (undefined for `none`): a baseline bundle, a preset (name or
 * file), or `config`: the configuration the plugin would load in `place.projectDir` (global,
 * $OPENCODE_CONFIG_DIR and project acp.jsonc, their rule folders and ruleFiles; `acp rules list`
 * shows the same). `rules` adds rule files; `cacheTtl` replaces the cache lifetime. A problem of
 * an acp.jsonc that is an error stops here with its file:line:col, as a preset's does.
 */
export function strategyOptions(strategy: string, o: { rules?: string[]; cacheTtl?: number; place?: ConfigPlace }): PrunerOptions | undefined {
  const ttl = o.cacheTtl !== undefined ? { cacheTtlMinutes: o.cacheTtl } : undefined;
  if (strategy === CONFIG_STRATEGY) {
    const loaded = loadConfig({ projectDir: o.place?.projectDir ?? process.cwd() }, o.place?.env ?? process.env);
    const e = loaded.problems.find((p) => p.severity === "error");
    if (e) throw new Error(`strategy "${strategy}": ${e.file}:${e.line}:${e.col} ${e.message}`);
    const config = { ...loaded.config, commit: { ...loaded.config.commit, ...ttl } };
    return { host: OPENCODE, config, layers: loaded.layers, ruleDirs: loaded.ruleDirs, rules: o.rules };
  }
  const preset = strategyPreset(strategy);
  if (preset === undefined) return undefined;
  // a misspelt baseline or `config` (the preset loader suggests only presets)
  const hint = preset === strategy && !existsSync(strategy) ? didYouMean(strategy, [...BASELINES, CONFIG_STRATEGY, "none"]) : "";
  if (hint && !didYouMean(strategy, PRESET_NAMES)) throw new Error(`strategy "${strategy}": unknown strategy${hint}`);
  // Baselines reproduce other pruners: without this plugin's own additions (ids, system prompt).
  // The pruner is told the same cache lifetime the cost figures assume.
  const config = BASELINES.includes(strategy) ? { tool: false } : ttl ? { commit: ttl } : undefined;
  return { host: OPENCODE, preset, rules: o.rules, config };
}

/**
 * A pruner for a strategy, or an Error naming the first error of its preset, rule files or
 * settings at file:line:col (with a did-you-mean where there is one). simulate and explain both
 * load their pruner through this, so both reject the same input the same way.
 */
export function checkedPruner(strategy: string, options: PrunerOptions): AcpPruner {
  const pruner = createPruner(options);
  const errors = pruner.problems.filter((p) => p.severity === "error");
  const e = errors[0];
  // a problem of the command line's own settings (the inline config) has no file to point at
  if (e) throw new Error(`strategy "${strategy}": ${e.file === INLINE_CONFIG ? "" : `${e.file}:${e.line}:${e.col} `}${e.message}`);
  return pruner;
}

export interface SimulateOptions {
  compare: string[];
  rules?: string[];
  restart?: boolean;
  /** The provider's cache lifetime in minutes, for the cost figures and the pruner's commit policy (default 5; 0: never expires). */
  cacheTtl?: number;
  progress?: (done: number, total: number) => void;
  /** Where the `config` strategy reads acp.jsonc (default: the current folder). */
  place?: ConfigPlace;
}

export function simulate(sessions: Session[], opts: SimulateOptions): StrategyResult[] {
  const out: StrategyResult[] = [];
  const steps = opts.compare.length * sessions.length;
  let done = 0;
  for (const strategy of opts.compare) {
    const options = strategyOptions(strategy, opts);
    const measured: CorpusFigures["sessions"] = [];
    let regret: StrategyResult["regret"];
    for (const session of sessions) {
      let pruner;
      let last: AcpPruner | undefined;
      let stateDir: string | undefined;
      if (options !== undefined) {
        if (opts.restart) stateDir = mkdtempSync(join(tmpdir(), "acp-sim-"));
        const check = checkedPruner(strategy, options);
        pruner = () => (last = createPruner({ ...options, stateDir }));
        regret ??= { limit: check.resolved.commit.regretLimit ?? 0, rules: {}, backedOff: [] };
      }
      measured.push(...measureSessions([session], { host: OPENCODE, pruner, restart: opts.restart, cacheTtlMinutes: opts.cacheTtl }).sessions);
      if (last && regret) {
        const state = last.state(sessionIdOf(session));
        for (const [rule, c] of regretByRule(state)) {
          const sum = (regret.rules[rule] ??= { agent: 0, user: 0, rerun: 0 });
          sum.agent += c.agent;
          sum.user += c.user;
          sum.rerun += c.rerun;
        }
        for (const rule of backedOffRules(state, regret.limit)) regret.backedOff.push({ rule, session: session.id });
      }
      if (stateDir) rmSync(stateDir, { recursive: true, force: true });
      opts.progress?.(++done, steps);
    }
    out.push({ strategy, figures: { sessions: measured, total: totalOf(measured) }, regret });
  }
  const none = out.find((r) => r.strategy === "none");
  if (none) for (const r of out) r.overLimit = sessionsOverLimit(r.figures.sessions, none.figures.sessions);
  return out;
}

/** The total over the sessions; the per-rule rows with the most tokens saved first. */
function totalOf(sessions: CorpusFigures["sessions"]): Figures {
  const total = totalOfSessions(sessions);
  return { ...total, rules: [...total.rules].sort((a, b) => b.tokensSaved - a.tokensSaved) };
}

const pct = (x: number) => `${x > 0 ? "+" : ""}${x.toFixed(1)}%`;
const int = (x: number) => x.toLocaleString("en-US");

const table = (rows: string[][]): string => columns(rows, "right").join("\n");

/** `over`: the session's mark, or the TOTAL row's count, of costs more than the limit above `none`. */
function rowOf(label: string, strategy: string, f: Figures, base: Figures | undefined, over: string): string[] {
  const rel = base ? relativeTo(f, base) : undefined;
  return [
    label,
    strategy,
    int(f.billedTokens),
    rel ? pct(rel.billedTokensPct) : "",
    int(f.peakContext),
    String(f.prefixBreaks),
    rel ? pct(rel.anthropicCostPct) : "",
    rel ? pct(rel.anthropicCostWithRecoveryPct) : "",
    rel ? pct(rel.openaiCostPct) : "",
    rel ? pct(rel.openaiCostWithRecoveryPct) : "",
    `${(100 * f.quoteLoss).toFixed(2)}% (${f.quoteLost}/${f.quoteEvents})`,
    f.reReads ? `${f.reReads} (${int(f.recoveryTokens)})` : "0",
    over,
    f.transform.calls ? `${f.transform.medianMs.toFixed(2)}/${f.transform.p95Ms.toFixed(2)}` : "-",
  ];
}

export function report(results: StrategyResult[], perSession: boolean): string {
  const head = ["session", "strategy", "billed", "Δbilled", "peak", "breaks", "Δanthropic", "+recovery", "Δopenai", "+recovery", "quote-loss", "re-reads (tokens)", `>+${RECOVERY_LIMIT_PCT}%`, "ms med/p95"];
  const base = results.find((r) => r.strategy === "none")?.figures;
  const rows: string[][] = [head];
  if (perSession)
    results[0].figures.sessions.forEach((s, i) => {
      for (const r of results) {
        const over = r.strategy === "none" || !r.overLimit ? "" : r.overLimit.sessions.includes(s.sessionId) ? "yes" : "";
        rows.push(rowOf(s.sessionId.slice(0, 28), r.strategy, r.figures.sessions[i], base?.sessions[i], over));
      }
    });
  for (const r of results) {
    const over = r.strategy === "none" || !r.overLimit ? "" : `${r.overLimit.sessions.length}/${r.figures.sessions.length}`;
    rows.push(rowOf(`TOTAL (${r.figures.sessions.length} sessions)`, r.strategy, r.figures.total, base?.total, over));
  }
  const out = [table(rows)];
  for (const r of results) {
    if (!r.figures.total.rules.length) continue;
    // a rule's recovery cost: its re-read tokens at the cache-write price, against none's Anthropic cost
    const recovery = (tokens: number) => (base?.total.anthropicCost ? `+${((100 * ANTHROPIC_CACHE.write * tokens) / base.total.anthropicCost).toFixed(2)}%` : "");
    const head = ["rule", "parts", "tokens saved", "quote-loss events", "re-reads", "re-read tokens", "recovery Δanthropic"];
    const rows = r.figures.total.rules.map((x) => [x.rule, int(x.partsHit), int(x.tokensSaved), String(x.quoteLosses), String(x.reReads), int(x.recoveryTokens), x.recoveryTokens ? recovery(x.recoveryTokens) : ""]);
    out.push("", `per rule — ${r.strategy}`, table([head, ...rows]));
    if (r.regret) out.push(regretLine(r.regret));
  }
  return out.join("\n");
}

/** The live regret signal of a replay: re-runs of hidden outputs per rule, and where a rule backed off. */
function regretLine(regret: NonNullable<StrategyResult["regret"]>): string {
  const rules = Object.entries(regret.rules).sort((a, b) => b[1].rerun - a[1].rerun || a[0].localeCompare(b[0]));
  const events = rules.length ? rules.map(([rule, c]) => `${rule} ${c.rerun}`).join(", ") : "none";
  const off = regret.backedOff.length ? regret.backedOff.map((b) => `${b.rule} in ${b.session}`).join(", ") : "none";
  return `regret (calls re-run while their output was hidden): ${events}; backed off (regretLimit ${regret.limit}): ${off}`;
}

/** Why `file` cannot be written as an output file (a folder, no such parent folder), or undefined. */
function unwritable(file: string): string | undefined {
  try {
    if (statSync(file).isDirectory()) return "is a folder";
  } catch {
    // does not exist yet: its folder must
  }
  try {
    return statSync(dirname(resolve(file))).isDirectory() ? undefined : "its folder is not a folder";
  } catch {
    return `its folder ${dirname(resolve(file))} does not exist`;
  }
}

export function registerSimulate(program: Command, io: Io, setCode: (c: number) => void): void {
  program
    .command("simulate <path>")
    .description("replay recorded sessions (an export, a corpus file or a folder) and report savings, cache cost and quote-loss")
    .option("--preset <name>", "preset to replay (compact | balanced | verbose | file), or config (what the plugin would run in this folder)", "balanced")
    .option("--compare <list>", "comma-separated strategies: none, native, mask10, ctxedit, batch10, compact, balanced, verbose, preset files, or config (what the plugin would run in this folder: its acp.jsonc files and rule folders)")
    .option("--rules <paths...>", "extra rule files or folders")
    .option("--restart", "reload state from disk before every call (a new OpenCode process per prompt)")
    .option("--per-session", "one row per session and strategy")
    .option("--cache-ttl <minutes>", "the provider's prompt-cache lifetime: a call longer than this after the previous one is uncached (cost figures and commit policy; 0: never expires)", (v) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0) throw new Error(`--cache-ttl: expected minutes >= 0, got "${v}"`);
      return n;
    })
    .option("--json <file>", "write every figure as JSON")
    .option("--html <file>", "write a self-contained HTML report")
    .action(async (path: string, opts: { preset: string; compare?: string; rules?: string[]; restart?: boolean; perSession?: boolean; json?: string; html?: string; cacheTtl?: number }) => {
      const compare = opts.compare !== undefined ? opts.compare.split(",").map((s) => s.trim()).filter(Boolean) : ["none", opts.preset];
      if (compare.length === 0) {
        io.err(`error: --compare names no strategy (known: none, ${BASELINES.join(", ")}, ${PRESET_NAMES.join(", ")}, ${CONFIG_STRATEGY}, or preset files)\n`);
        return setCode(2);
      }
      // an output file that cannot be written is said before anything is read or replayed
      for (const [flag, file] of [["--json", opts.json], ["--html", opts.html]] as const) {
        const problem = file === undefined ? undefined : unwritable(file);
        if (problem) {
          io.err(`error: ${flag} ${file}: ${problem}\n`);
          return setCode(2);
        }
      }
      let sessions: Session[] | undefined;
      let failure: unknown;
      // A folder's unreadable files are reported and left out; the rest are replayed.
      const skipped: string[] = [];
      try {
        sessions = loadSessions(path, skipped);
      } catch (e) {
        failure = e;
      }
      for (const s of skipped) io.err(`skipped: ${s}\n`);
      if (sessions === undefined) {
        io.err(`error: ${(failure as Error).message}\n`);
        return setCode(2);
      }
      if (!compare.includes("none")) compare.unshift("none");
      const bar = sessions.length > 1 && process.stderr.isTTY ? await progressBar() : undefined;
      let results: StrategyResult[];
      try {
        results = simulate(sessions, { compare, rules: opts.rules, restart: opts.restart, cacheTtl: opts.cacheTtl, progress: bar?.update });
      } catch (e) {
        bar?.stop();
        io.err(`error: ${(e as Error).message}\n`);
        return setCode(2);
      }
      bar?.stop();
      io.out(`${report(results, Boolean(opts.perSession) || sessions.length === 1)}\n`);
      if (opts.json) writeFileSync(opts.json, JSON.stringify(results, null, 1));
      if (opts.html) {
        const command = ["acp simulate", path, "--compare", compare.join(","), ...(opts.rules ?? []).flatMap((r) => ["--rules", r]), ...(opts.restart ? ["--restart"] : []), ...(opts.cacheTtl !== undefined ? ["--cache-ttl", String(opts.cacheTtl)] : [])];
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
