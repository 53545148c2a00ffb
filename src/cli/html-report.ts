// `acp simulate --html`: one self-contained HTML page (inline CSS and hand-written inline SVG, no
// scripts, no network) with the figures of docs/simulate.md: prompt size and cache-reused share per
// call, totals (with the cost of recovering lost quotes), the per-rule breakdown and the quote-loss events. Pure functions from results to a string;
// every text that comes from a session (ids, file names, quoted lines, rule names) is escaped.
import { scaleLinear, type ScaleLinear } from "d3-scale";
import { line } from "d3-shape";
import { ANTHROPIC_CACHE, RECOVERY_LIMIT_PCT, relativeTo, type Figures, type QuoteLoss, type SessionFigures } from "../sim/index.js";
import type { StrategyResult } from "./strategy-result.js";

export interface HtmlReportMeta {
  title: string;
  /** Shown under the title, e.g. the command line and the date. */
  generatedBy: string;
}

export interface HtmlReportOptions {
  /** Sessions drawn as small multiples when there are several (the largest by unpruned billed tokens). */
  largest?: number;
  /** Quote-loss events listed per strategy; the rest are counted. */
  quoteLossCap?: number;
}

export function htmlReport(results: StrategyResult[], meta: HtmlReportMeta, options: HtmlReportOptions = {}): string {
  const ctx = contextOf(results);
  const largest = options.largest ?? 6;
  const cap = options.quoteLossCap ?? 50;
  const body = [
    header(ctx, meta),
    section("Totals", "totals", totalsTable(ctx) + legendNote()),
    ctx.sessionCount === 1 ? singleSessionCharts(ctx) : corpusCharts(ctx, largest),
    ctx.sessionCount > 1 ? section("Per session", "per-session", perSessionTable(ctx)) : "",
    section("Per rule", "rules", rulesTables(ctx)),
    section("Quote-loss events", "quote-loss", quoteLossList(ctx, cap)),
    glossary(),
  ].join("\n");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(meta.title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

// ---------------------------------------------------------------------------------------------------
// Context: strategies with their styles, the unpruned baseline, sessions aligned by index.

interface Strategy {
  index: number;
  name: string;
  figures: StrategyResult["figures"];
  overLimit?: StrategyResult["overLimit"];
  style: Style;
}

interface Style {
  color: string;
  width: number;
  dash: string;
}

interface Ctx {
  strategies: Strategy[];
  /** The "none" replay, when it was run. */
  base?: Strategy;
  sessionCount: number;
}

const PALETTE = ["#1f6fd1", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#0b7285", "#8d6708", "#495057"];
const DASHES = ["", "9 5", "2 4", "12 4 3 4", "5 3", "1 3"];

function contextOf(results: StrategyResult[]): Ctx {
  let colour = 0;
  const strategies = results.map((r, index): Strategy => {
    const style: Style =
      r.strategy === "none"
        ? { color: "#adb5bd", width: 5, dash: "" }
        : { color: PALETTE[colour % PALETTE.length], width: Math.max(1.4, 2.6 - 0.4 * colour), dash: DASHES[colour++ % DASHES.length] };
    return { index, name: r.strategy, figures: r.figures, overLimit: r.overLimit, style };
  });
  const sessionCount = Math.max(0, ...results.map((r) => r.figures.sessions.length));
  return { strategies, base: strategies.find((s) => s.name === "none"), sessionCount };
}

/** Sessions are in the same order in every strategy's figures; the first strategy names them. */
function sessionAt(ctx: Ctx, i: number): SessionFigures | undefined {
  for (const s of ctx.strategies) if (s.figures.sessions[i]) return s.figures.sessions[i];
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Text helpers.

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML content and quoted attributes; control characters become U+FFFD. */
export function esc(value: unknown): string {
  return String(value)
    .replace(/[&<>"']/g, (c) => ESCAPES[c])
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, "\uFFFD");
}

const int = (x: number) => Math.round(x).toLocaleString("en-US");
/** Signed percent with one decimal; values that round to zero print as 0.0%. */
function pct(x: number): string {
  const r = x.toFixed(1);
  if (Number(r) === 0) return "0.0%";
  return `${x > 0 ? "+" : ""}${r}%`;
}
const share = (x: number) => `${(100 * x).toFixed(1)}%`;

function short(x: number): string {
  const a = Math.abs(x);
  if (a >= 1e6) return `${trim((x / 1e6).toFixed(a >= 1e7 ? 0 : 1))}M`;
  if (a >= 1e3) return `${trim((x / 1e3).toFixed(a >= 1e4 ? 0 : 1))}k`;
  return trim(x.toFixed(a < 10 && a % 1 ? 1 : 0));
}
const trim = (s: string) => s.replace(/\.0$/, "");

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

function deltaCell(x: number | undefined): string {
  if (x === undefined) return `<td class="num muted">–</td>`;
  const cls = x < -0.05 ? "good" : x > 0.05 ? "bad" : "";
  return `<td class="num ${cls}">${pct(x)}</td>`;
}

function section(title: string, id: string, content: string): string {
  return `<section id="${id}">\n<h2>${esc(title)}</h2>\n${content}\n</section>`;
}

function swatch(style: Style): string {
  return `<svg class="swatch" width="34" height="12" viewBox="0 0 34 12" aria-hidden="true"><line x1="1" y1="6" x2="33" y2="6" stroke="${style.color}" stroke-width="${Math.min(style.width, 4)}"${style.dash ? ` stroke-dasharray="${style.dash}"` : ""} stroke-linecap="butt"/></svg>`;
}

function strategyLabel(s: Strategy): string {
  return `<span class="strategy">${swatch(s.style)}${esc(s.name)}</span>`;
}

function legend(ctx: Ctx, extra: (s: Strategy) => string = () => ""): string {
  return `<div class="legend">${ctx.strategies.map((s) => `<span class="item">${strategyLabel(s)}${extra(s)}</span>`).join("")}</div>`;
}

// ---------------------------------------------------------------------------------------------------
// Header, totals, per-session and per-rule tables.

function header(ctx: Ctx, meta: HtmlReportMeta): string {
  const first = ctx.strategies[0]?.figures.total;
  const calls = ctx.base?.figures.total.calls ?? first?.calls ?? 0;
  const facts = [
    `${int(ctx.sessionCount)} session${ctx.sessionCount === 1 ? "" : "s"}`,
    `${int(calls)} calls`,
    `${ctx.strategies.length} strateg${ctx.strategies.length === 1 ? "y" : "ies"}`,
  ];
  if (ctx.sessionCount === 1) {
    const s = sessionAt(ctx, 0);
    if (s) facts.unshift(`session <code>${esc(s.sessionId)}</code> (${esc(s.file)})`);
  }
  return `<header>
<h1>${esc(meta.title)}</h1>
<p class="meta">${esc(meta.generatedBy)}</p>
<p class="facts">${facts.join(" · ")}</p>
</header>`;
}

function totalsTable(ctx: Ctx): string {
  const base = ctx.base?.figures.total;
  const head = ["strategy", "calls", "billed tokens", "Δbilled", "peak context", "reused", "prefix breaks", "Δanthropic", "with recovery", "Δopenai", "with recovery", "quote-loss", "re-reads (tokens)", `sessions > +${RECOVERY_LIMIT_PCT}%`, "ms first", "ms med/p95"];
  const rows = ctx.strategies.map((s) => {
    const f = s.figures.total;
    const rel = base ? relativeTo(f, base) : undefined;
    const over = s === ctx.base || !s.overLimit ? "–" : `${int(s.overLimit.sessions.length)}/${int(s.figures.sessions.length)}`;
    return `<tr>
<th scope="row">${strategyLabel(s)}</th>
<td class="num">${int(f.calls)}</td>
<td class="num">${int(f.billedTokens)}</td>
${deltaCell(rel?.billedTokensPct)}
<td class="num">${int(f.peakContext)}</td>
<td class="num">${f.billedTokens ? share(f.reusableTokens / f.billedTokens) : "–"}</td>
<td class="num">${int(f.prefixBreaks)}</td>
${deltaCell(rel?.anthropicCostPct)}
${deltaCell(rel?.anthropicCostWithRecoveryPct)}
${deltaCell(rel?.openaiCostPct)}
${deltaCell(rel?.openaiCostWithRecoveryPct)}
<td class="num${f.quoteLost ? " bad" : ""}">${quoteLossText(f)}</td>
<td class="num">${f.reReads ? `${int(f.reReads)} (${int(f.recoveryTokens)})` : "0"}</td>
<td class="num${s.overLimit?.sessions.length ? " bad" : ""}">${over}</td>
<td class="num">${f.transform.calls ? f.transform.firstMs.toFixed(2) : "–"}</td>
<td class="num">${f.transform.calls ? `${f.transform.medianMs.toFixed(2)}/${f.transform.p95Ms.toFixed(2)}` : "–"}</td>
</tr>`;
  });
  return `<table class="totals">
<thead><tr>${head.map((h, i) => `<th scope="col"${i ? ` class="num"` : ""}>${esc(h)}</th>`).join("")}</tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>`;
}

function quoteLossText(f: Figures): string {
  return `${(100 * f.quoteLoss).toFixed(2)}% (${int(f.quoteLost)}/${int(f.quoteEvents)})`;
}

function legendNote(): string {
  return `<p class="note">Δ columns are relative to the <code>none</code> replay (green: cheaper, red: dearer). Reused: share of billed tokens that the previous call's prompt already held as a prefix (cache read). With recovery: the cost when every part a lost quote came from is read again, once per part and call, as new uncached input. Sessions &gt; +${RECOVERY_LIMIT_PCT}%: sessions whose Anthropic or OpenAI cost with recovery is more than ${RECOVERY_LIMIT_PCT}% above <code>none</code>. Definitions at the end of the page.</p>`;
}

function perSessionTable(ctx: Ctx): string {
  const pruned = ctx.strategies.filter((s) => s !== ctx.base);
  const groups = pruned.map((s) => `<th scope="colgroup" colspan="5" class="group">${strategyLabel(s)}</th>`).join("");
  const sub = pruned.map(() => `<th class="num">Δbilled</th><th class="num">Δanthropic</th><th class="num">with recovery</th><th class="num">breaks</th><th class="num">lost</th>`).join("");
  const rows: string[] = [];
  for (let i = 0; i < ctx.sessionCount; i++) {
    const id = sessionAt(ctx, i);
    const base = ctx.base?.figures.sessions[i];
    const cells = pruned.map((s) => {
      const f = s.figures.sessions[i];
      if (!f) return `<td class="muted" colspan="5">–</td>`;
      const rel = base ? relativeTo(f, base) : undefined;
      return `${deltaCell(rel?.billedTokensPct)}${deltaCell(rel?.anthropicCostPct)}${deltaCell(rel?.anthropicCostWithRecoveryPct)}<td class="num">${int(f.prefixBreaks)}</td><td class="num${f.quoteLost ? " bad" : ""}">${int(f.quoteLost)}/${int(f.quoteEvents)}</td>`;
    });
    rows.push(
      `<tr><th scope="row" title="${esc(id?.file ?? "")}"><code>${esc(clip(id?.sessionId ?? `#${i + 1}`, 30))}</code></th><td class="num">${int(id?.calls ?? 0)}</td>` +
        `<td class="num">${base ? int(base.billedTokens) : "–"}</td><td class="num">${base ? int(base.prefixBreaks) : "–"}</td>${cells.join("")}</tr>`,
    );
  }
  return `<details>
<summary>${int(ctx.sessionCount)} sessions, in load order</summary>
<div class="scroll"><table class="per-session">
<thead><tr><th rowspan="2">session</th><th rowspan="2" class="num">calls</th><th colspan="2" class="group">none</th>${groups}</tr>
<tr><th class="num">billed</th><th class="num">breaks</th>${sub}</tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table></div>
</details>`;
}

function rulesTables(ctx: Ctx): string {
  const baseBilled = ctx.base?.figures.total.billedTokens ?? 0;
  const baseCost = ctx.base?.figures.total.anthropicCost ?? 0;
  // One scale for every strategy's bars, so that the tables compare.
  const max = Math.max(1, ...ctx.strategies.flatMap((s) => s.figures.total.rules.map((r) => r.tokensSaved)));
  const out: string[] = [];
  for (const s of ctx.strategies) {
    if (s === ctx.base) continue;
    const rules = [...s.figures.total.rules].sort((a, b) => b.tokensSaved - a.tokensSaved || b.partsHit - a.partsHit || a.rule.localeCompare(b.rule));
    if (!rules.length) {
      out.push(`<h3>${strategyLabel(s)}</h3>\n<p class="muted">No rule acted.</p>`);
      continue;
    }
    const rows = rules.map(
      (r) => `<tr>
<th scope="row"><code>${esc(r.rule)}</code></th>
<td class="num">${int(r.partsHit)}</td>
<td class="num">${int(r.tokensSaved)}</td>
<td class="bar"><span style="width:${Math.max(0, (100 * r.tokensSaved) / max).toFixed(1)}%;background:${s.style.color}"></span></td>
<td class="num">${baseBilled ? share(r.tokensSaved / baseBilled) : "–"}</td>
<td class="num${r.quoteLosses ? " bad" : ""}">${int(r.quoteLosses)}</td>
<td class="num">${int(r.reReads)}</td>
<td class="num">${int(r.recoveryTokens)}</td>
<td class="num">${r.recoveryTokens && baseCost ? `+${((100 * ANTHROPIC_CACHE.write * r.recoveryTokens) / baseCost).toFixed(2)}%` : "–"}</td>
</tr>`,
    );
    out.push(`<h3>${strategyLabel(s)}</h3>
<table class="rules">
<thead><tr><th scope="col">rule</th><th scope="col" class="num">parts</th><th scope="col" class="num">tokens saved</th><th scope="col"></th><th scope="col" class="num">of unpruned billed</th><th scope="col" class="num">quote-loss events</th><th scope="col" class="num">re-reads</th><th scope="col" class="num">re-read tokens</th><th scope="col" class="num">recovery Δanthropic</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>`);
  }
  if (!out.length) return `<p class="muted">Only the unpruned replay was run.</p>`;
  return `<p class="note">Tokens saved: over all calls, a rule's parts rendered unpruned minus rendered pruned (billed tokens). Parts: distinct parts the rule acted on. Re-reads: the rule's parts read again where a quote from them was lost (once per part and call), with their tokens; recovery Δanthropic: those tokens at the cache-write price, relative to the <code>none</code> replay's Anthropic cost.</p>\n${out.join("\n")}`;
}

function quoteLossList(ctx: Ctx, cap: number): string {
  const out: string[] = [];
  for (const s of ctx.strategies) {
    const losses = s.figures.total.quoteLosses;
    if (!losses.length) continue;
    const callOf = callIndexer(s);
    const rows = losses.slice(0, cap).map(
      (q) => `<tr>
<td><code title="${esc(q.sessionId)}">${esc(clip(q.sessionId, 28))}</code></td>
<td class="num">${callOf(q)}</td>
<td><code>${esc(q.messageId)}</code></td>
<td><code>${esc(q.partId)}</code></td>
<td><code>${esc(q.rule)}</code></td>
<td class="num">${q.reReadTokens ? int(q.reReadTokens) : "–"}</td>
<td class="line"><code>${esc(clip(q.line, 240))}</code></td>
</tr>`,
    );
    const more = losses.length > cap ? `<p class="muted">… and ${int(losses.length - cap)} more not shown (see <code>--json</code>).</p>` : "";
    out.push(`<h3>${strategyLabel(s)} <span class="muted">${int(losses.length)} event${losses.length === 1 ? "" : "s"}</span></h3>
<div class="scroll"><table class="quotes">
<thead><tr><th scope="col">session</th><th scope="col" class="num">call</th><th scope="col">written by</th><th scope="col">hidden part</th><th scope="col">rule</th><th scope="col" class="num">re-read</th><th scope="col">line</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table></div>
${more}`);
  }
  const intro = `<p class="note">A quote event is a line (≥ 40 characters) an assistant message writes that appeared earlier in a tool output; it is lost when that line appears nowhere in the pruned prompt of that call. Re-read: the tokens charged for reading the hidden part again (on the first loss from that part in that call). Listed: the first ${int(cap)} per strategy.</p>`;
  return out.length ? `${intro}\n${out.join("\n")}` : `<p class="muted">No quote-loss: every quoted line was still in the prompt.</p>`;
}

/** The 1-based call number of the message that wrote a lost line, within its session. */
function callIndexer(s: Strategy): (q: QuoteLoss) => string {
  const bySession = new Map<string, Map<string, number>>();
  for (const session of s.figures.sessions) {
    const calls = new Map<string, number>();
    session.perCall.forEach((c, i) => calls.set(c.messageId, i + 1));
    bySession.set(session.sessionId, calls);
  }
  return (q) => {
    const n = bySession.get(q.sessionId)?.get(q.messageId);
    return n === undefined ? "–" : String(n);
  };
}

function glossary(): string {
  const items: [string, string][] = [
    ["billed tokens", "sum over calls of the prompt's tokens (ceil(chars / 4) per rendered unit)"],
    ["peak context", "the largest prompt of a session (the largest over sessions for a corpus)"],
    ["reused", "tokens of the longest common prefix with the previous call's prompt (a unit matches by part id and exact text), over billed tokens"],
    ["prefix breaks", "calls where the previous prompt is not a prefix of this one"],
    ["Δanthropic", "cache cost per call 0.1 × reused + 1.25 × the rest, summed, relative to no pruning"],
    ["Δopenai", "cache cost per call 0.1 × reused + 1.0 × the rest, summed, relative to no pruning"],
    ["with recovery", "the cost with each lost quote's hidden part read again as new uncached input (1.25× Anthropic, 1.0× OpenAI), once per part and call"],
    ["quote-loss", "quoted lines hidden by the pruner / all quote events"],
    ["re-reads", "parts read again to recover lost quotes (part and call), and their tokens"],
    [`sessions > +${RECOVERY_LIMIT_PCT}%`, `sessions whose Anthropic or OpenAI cost with recovery exceeds the none replay's by more than ${RECOVERY_LIMIT_PCT}%`],
    ["ms", "transform time inside the process: the first call apart, median and p95 of the others"],
  ];
  return `<footer>
<h2>Definitions</h2>
<dl>${items.map(([t, d]) => `<dt>${esc(t)}</dt><dd>${esc(d)}</dd>`).join("")}</dl>
<p class="muted">Written by opencode-acp <code>acp simulate --html</code> (docs/simulate.md). This page is self-contained: no scripts, no network.</p>
</footer>`;
}

// ---------------------------------------------------------------------------------------------------
// Charts.

function singleSessionCharts(ctx: Ctx): string {
  const size = promptChart(ctx, 0, { width: 1280, height: 340 });
  const reuse = reuseChart(ctx, 0, { width: 1280, height: 260 });
  const delta = ctx.base && ctx.strategies.length > 1 ? `<h3>Prompt size against no pruning per call (tokens, strategy − none)</h3>\n${deltaChart(ctx, 0, { width: 1280, height: 240 })}\n` : "";
  return section(
    "Per call",
    "charts",
    `${legend(ctx, (s) => ` <span class="muted">${short(s.figures.total.billedTokens)} billed</span>`)}
${coincide(ctx, 0)}
<h3>Prompt size per call (tokens)</h3>
${size}
${delta}<h3>Cache-reused share per call (reused prefix / prompt)</h3>
${reuse}
<p class="note">Hover a call for every strategy's figures. Red rings mark calls where the strategy lost a quoted line; a drop in the reused share is a prefix break (the cache is rewritten from the edit point on).</p>`,
  );
}

function corpusCharts(ctx: Ctx, largest: number): string {
  const order = [...Array(ctx.sessionCount).keys()];
  const sizeOf = (i: number) => (ctx.base ?? ctx.strategies[0])?.figures.sessions[i]?.billedTokens ?? 0;
  const top = [...order].sort((a, b) => sizeOf(b) - sizeOf(a) || a - b).slice(0, largest);
  const tiles = top.map((i) => sessionTile(ctx, i, { width: 620, height: 210 }, { width: 620, height: 150 }));
  const all = order.map((i) => {
    const s = sessionAt(ctx, i);
    return `<details class="session">
<summary><span class="sid"><code title="${esc(s?.file ?? "")}">${esc(clip(s?.sessionId ?? `#${i + 1}`, 48))}</code></span><span class="cell">${int(s?.calls ?? 0)} calls</span><span class="cell">${short(sizeOf(i))} billed</span>${sessionDeltas(ctx, i)}</summary>
<div class="pair">${promptChart(ctx, i, { width: 620, height: 230 })}${reuseChart(ctx, i, { width: 620, height: 230 })}</div>
</details>`;
  });
  const aggregate = `${legend(ctx, (s) => ` <span class="muted">${short(s.figures.total.billedTokens)} billed</span>`)}
<h3>Cumulative billed tokens, the corpus's calls concatenated</h3>
${cumulativeChart(ctx, "cumulative-billed", (c) => c.tokens, { width: 1280, height: 320 })}
<h3>Cumulative Anthropic cache cost (base-input-price token units)</h3>
${cumulativeChart(ctx, "cumulative-anthropic", (c) => 0.1 * c.reusable + 1.25 * (c.tokens - c.reusable), { width: 1280, height: 280 })}
<h3>Cache-reused share per session (reused / billed)</h3>
${sessionShareChart(ctx, { width: 1280, height: 240 })}
<p class="note">Shaded bands are sessions (load order); hover one for its figures. The gap between two cumulative lines is what a strategy saved so far.</p>`;
  return [
    section("Corpus", "charts", aggregate),
    section(
      `Largest ${top.length} sessions`,
      "largest",
      `${legend(ctx)}\n<p class="note">Prompt size (tokens) and cache-reused share per call, for the sessions with the most unpruned billed tokens.</p>\n<div class="tiles">${tiles.join("\n")}</div>`,
    ),
    section("Every session", "sessions", `${legend(ctx)}\n<p class="note">Open a session to see its per-call charts. Columns: unpruned calls and billed tokens, then each strategy's Δbilled.</p>\n${all.join("\n")}`),
  ].join("\n");
}

/** Δbilled of each strategy for session i, aligned cells for the session list. */
function sessionDeltas(ctx: Ctx, i: number): string {
  const base = ctx.base?.figures.sessions[i];
  if (!base) return "";
  return ctx.strategies
    .filter((s) => s !== ctx.base && s.figures.sessions[i])
    .map((s) => {
      const d = relativeTo(s.figures.sessions[i], base).billedTokensPct;
      return `<span class="cell wide">${esc(s.name)} <span class="${d < -0.05 ? "good" : d > 0.05 ? "bad" : ""}">${pct(d)}</span></span>`;
    })
    .join("");
}

function sessionSummary(ctx: Ctx, i: number): string {
  const base = ctx.base?.figures.sessions[i];
  if (!base) return "";
  return ctx.strategies
    .filter((s) => s !== ctx.base && s.figures.sessions[i])
    .map((s) => ` · ${esc(s.name)} ${pct(relativeTo(s.figures.sessions[i], base).billedTokensPct)}`)
    .join("");
}

function sessionTile(ctx: Ctx, i: number, sizeBox: Box, reuseBox: Box): string {
  const s = sessionAt(ctx, i);
  return `<figure class="tile">
<figcaption><code>${esc(clip(s?.sessionId ?? `#${i + 1}`, 60))}</code><br><span class="muted">${int(s?.calls ?? 0)} calls${sessionSummary(ctx, i)}</span></figcaption>
${promptChart(ctx, i, sizeBox)}
${reuseChart(ctx, i, reuseBox)}
</figure>`;
}

interface Box {
  width: number;
  height: number;
}

/** Prompt tokens per call of session i, one line per strategy, quote-loss rings. */
function promptChart(ctx: Ctx, i: number, box: Box): string {
  const n = callCount(ctx, i);
  const series = ctx.strategies.map((s) => ({ strategy: s, points: (s.figures.sessions[i]?.perCall ?? []).map((c, k): Pt => [k + 1, c.tokens]) }));
  const markers: Marker[] = [];
  for (const s of ctx.strategies)
    (s.figures.sessions[i]?.perCall ?? []).forEach((c, k) => {
      if (c.quoteLost) markers.push({ x: k + 1, y: c.tokens, title: `${s.name}: ${c.quoteLost} of ${c.quoteEvents} quoted line${c.quoteEvents === 1 ? "" : "s"} lost at call ${k + 1}` });
    });
  const yMax = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[1])));
  return lineChart({
    id: "prompt-tokens",
    box,
    x: { min: 0.5, max: n + 0.5, label: "call", format: (v) => String(v), integer: true },
    y: { min: 0, max: yMax, label: "prompt tokens", format: short },
    series,
    markers,
    bands: callBands(ctx, i, n),
  });
}

/** Tokens per call of session i minus the unpruned prompt's, one line per pruning strategy. */
function deltaChart(ctx: Ctx, i: number, box: Box): string {
  const n = callCount(ctx, i);
  const base = ctx.base?.figures.sessions[i]?.perCall ?? [];
  const series = ctx.strategies
    .filter((s) => s !== ctx.base)
    .map((s) => ({ strategy: s, points: (s.figures.sessions[i]?.perCall ?? []).map((c, k): Pt => [k + 1, c.tokens - (base[k]?.tokens ?? 0)]) }));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  return lineChart({
    id: "prompt-delta",
    box,
    x: { min: 0.5, max: n + 0.5, label: "call", format: (v) => String(v), integer: true },
    y: { min: Math.min(0, ...ys), max: Math.max(1, ...ys), label: "Δ tokens", format: short },
    series,
    markers: [],
    bands: callBands(ctx, i, n),
  });
}

/** A note naming strategies whose per-call prompt sizes are identical (their lines coincide). */
function coincide(ctx: Ctx, i: number): string {
  const groups = new Map<string, string[]>();
  for (const s of ctx.strategies) {
    const key = (s.figures.sessions[i]?.perCall ?? []).map((c) => `${c.tokens}/${c.reusable}`).join(",");
    groups.set(key, [...(groups.get(key) ?? []), s.name]);
  }
  const same = [...groups.values()].filter((g) => g.length > 1);
  if (!same.length) return "";
  const list = (g: string[]) => g.map((n) => `<code>${esc(n)}</code>`).join(", ");
  return `<p class="note">Same prompt sizes and reused prefixes on every call, so their lines coincide: ${same.map(list).join("; ")}.</p>`;
}

/** reusable / tokens per call of session i. */
function reuseChart(ctx: Ctx, i: number, box: Box): string {
  const n = callCount(ctx, i);
  const series = ctx.strategies.map((s) => ({
    strategy: s,
    points: (s.figures.sessions[i]?.perCall ?? []).map((c, k): Pt => [k + 1, c.tokens ? c.reusable / c.tokens : 0]),
  }));
  return lineChart({
    id: "reused-share",
    box,
    x: { min: 0.5, max: n + 0.5, label: "call", format: (v) => String(v), integer: true },
    y: { min: 0, max: 1, label: "reused share", format: (v) => `${Math.round(100 * v)}%` },
    series,
    markers: [],
    bands: callBands(ctx, i, n),
  });
}

function callCount(ctx: Ctx, i: number): number {
  return Math.max(0, ...ctx.strategies.map((s) => s.figures.sessions[i]?.perCall.length ?? 0));
}

/** One hover band per call, its tooltip listing every strategy's figures for that call. */
function callBands(ctx: Ctx, i: number, n: number): Band[] {
  const bands: Band[] = [];
  for (let k = 0; k < n; k++) {
    const lines = [`call ${k + 1}${messageOf(ctx, i, k)}`];
    for (const s of ctx.strategies) {
      const c = s.figures.sessions[i]?.perCall[k];
      if (!c) continue;
      const flags = [c.prefixBreak ? "prefix break" : "", c.quoteLost ? `${c.quoteLost}/${c.quoteEvents} quotes lost` : ""].filter(Boolean);
      lines.push(`${s.name}: ${int(c.tokens)} tokens, ${c.tokens ? share(c.reusable / c.tokens) : "0%"} reused${flags.length ? ` (${flags.join(", ")})` : ""}`);
    }
    bands.push({ x0: k + 0.5, x1: k + 1.5, title: lines.join("\n"), shade: false });
  }
  return bands;
}

function messageOf(ctx: Ctx, i: number, k: number): string {
  const id = sessionAt(ctx, i)?.perCall[k]?.messageId;
  return id ? ` · ${id}` : "";
}

/** A running sum over every session's calls, concatenated in load order; one band per session. */
function cumulativeChart(ctx: Ctx, id: string, value: (c: SessionFigures["perCall"][number]) => number, box: Box): string {
  const series = ctx.strategies.map((s) => {
    const points: Pt[] = [[0, 0]];
    let x = 0, y = 0;
    for (const session of s.figures.sessions) for (const c of session.perCall) points.push([++x, (y += value(c))]);
    return { strategy: s, points };
  });
  const total = Math.max(1, ...series.map((s) => s.points.length - 1));
  const yMax = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[1])));
  const bands: Band[] = [];
  let start = 0;
  for (let i = 0; i < ctx.sessionCount; i++) {
    const s = sessionAt(ctx, i);
    const n = callCount(ctx, i);
    const lines = [`session ${i + 1}: ${s?.sessionId ?? ""}`, `calls ${start + 1}–${start + n}`];
    for (const st of ctx.strategies) {
      const calls = st.figures.sessions[i]?.perCall ?? [];
      const own = calls.reduce((a, c) => a + value(c), 0);
      const at = series[st.index].points[Math.min(start + n, series[st.index].points.length - 1)]?.[1] ?? 0;
      lines.push(`${st.name}: ${int(own)} in this session, ${int(at)} so far`);
    }
    bands.push({ x0: start, x1: start + n, title: lines.join("\n"), shade: i % 2 === 1 });
    start += n;
  }
  return lineChart({
    id,
    box,
    x: { min: 0, max: total, label: "calls, all sessions", format: short, integer: true },
    y: { min: 0, max: yMax, label: id === "cumulative-billed" ? "billed tokens" : "cost units", format: short },
    series,
    markers: [],
    bands,
  });
}

/** Reused / billed per session, rings per strategy (concentric when equal). */
function sessionShareChart(ctx: Ctx, box: Box): string {
  const series = ctx.strategies.map((s) => ({
    strategy: s,
    points: s.figures.sessions.map((f, i): Pt => [i + 1, f.billedTokens ? f.reusableTokens / f.billedTokens : 0]),
  }));
  const bands: Band[] = [];
  for (let i = 0; i < ctx.sessionCount; i++) {
    const s = sessionAt(ctx, i);
    const lines = [`session ${i + 1}: ${s?.sessionId ?? ""} (${s?.calls ?? 0} calls)`];
    for (const st of ctx.strategies) {
      const f = st.figures.sessions[i];
      if (f) lines.push(`${st.name}: ${f.billedTokens ? share(f.reusableTokens / f.billedTokens) : "–"} reused, ${f.prefixBreaks} breaks`);
    }
    bands.push({ x0: i + 0.5, x1: i + 1.5, title: lines.join("\n"), shade: i % 2 === 1 });
  }
  return lineChart({
    id: "session-reused-share",
    box,
    x: { min: 0.5, max: ctx.sessionCount + 0.5, label: "session (load order)", format: (v) => String(v), integer: true },
    y: { min: 0, max: 1, label: "reused share", format: (v) => `${Math.round(100 * v)}%` },
    series,
    markers: [],
    bands,
    dots: true,
  });
}

// ---------------------------------------------------------------------------------------------------
// An SVG line chart on d3-scale (nice domains and ticks) and d3-shape (paths): one <path class="series">
// per strategy, hover bands whose <title> is the tooltip, optional markers.

type Pt = [number, number];

interface Axis {
  min: number;
  max: number;
  label: string;
  format: (v: number) => string;
  integer?: boolean;
}

interface Band {
  x0: number;
  x1: number;
  title: string;
  shade: boolean;
}

interface Marker {
  x: number;
  y: number;
  title: string;
}

interface ChartSpec {
  id: string;
  box: Box;
  x: Axis;
  y: Axis;
  series: { strategy: Strategy; points: Pt[] }[];
  markers: Marker[];
  bands: Band[];
  /** Draw rings at the points instead of a line. */
  dots?: boolean;
}

const f1 = (v: number) => (Math.round(v * 10) / 10).toString();

export function lineChart(spec: ChartSpec): string {
  const { width, height } = spec.box;
  const m = { left: 58, right: 14, top: 12, bottom: 40 };
  const pw = width - m.left - m.right;
  const ph = height - m.top - m.bottom;
  const y0 = spec.y.min, y1 = spec.y.max === spec.y.min ? spec.y.min + 1 : spec.y.max;
  const x0 = spec.x.min, x1 = spec.x.max === spec.x.min ? spec.x.min + 1 : spec.x.max;
  const y = niceScale(y0, y1, Math.max(3, Math.round(ph / 45)));
  const yTicks = y.ticks;
  const yBottom = y.scale.domain()[0];
  const ys = y.scale.range([m.top + ph, m.top]);
  const xs = scaleLinear().domain([x0, x1]).range([m.left, m.left + pw]);
  const sx = (v: number) => xs(v);
  const sy = (v: number) => ys(v);
  const xTicks = niceScale(x0, x1, Math.max(2, Math.round(pw / 80)), spec.x.integer).ticks.filter((v) => v >= x0 && v <= x1);
  const path = line<Pt>().x(([x]) => sx(x)).y(([, v]) => sy(v)).digits(1);
  const out: string[] = [];
  out.push(`<svg class="chart" data-chart="${esc(spec.id)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(spec.y.label)} by ${esc(spec.x.label)}">`);
  // Shaded bands (sessions) under everything.
  for (const b of spec.bands) if (b.shade) out.push(`<rect class="shade" x="${f1(sx(b.x0))}" y="${m.top}" width="${f1(Math.max(0, sx(b.x1) - sx(b.x0)))}" height="${ph}"/>`);
  // Grid and axes.
  for (const t of yTicks) out.push(`<line class="${t === 0 && yBottom < 0 ? "zero" : "grid"}" x1="${m.left}" x2="${m.left + pw}" y1="${f1(sy(t))}" y2="${f1(sy(t))}"/><text class="tick" x="${m.left - 6}" y="${f1(sy(t) + 4)}" text-anchor="end">${esc(spec.y.format(t))}</text>`);
  for (const t of xTicks) out.push(`<line class="tickmark" x1="${f1(sx(t))}" x2="${f1(sx(t))}" y1="${m.top + ph}" y2="${m.top + ph + 4}"/><text class="tick" x="${f1(sx(t))}" y="${m.top + ph + 16}" text-anchor="middle">${esc(spec.x.format(t))}</text>`);
  out.push(`<line class="axis" x1="${m.left}" x2="${m.left + pw}" y1="${m.top + ph}" y2="${m.top + ph}"/><line class="axis" x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + ph}"/>`);
  out.push(`<text class="label" x="${m.left + pw / 2}" y="${height - 6}" text-anchor="middle">${esc(spec.x.label)}</text>`);
  out.push(`<text class="label" transform="translate(13 ${m.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(spec.y.label)}</text>`);
  // Series: "none" first (a wide grey underlay), then each strategy with its own dash.
  for (const { strategy: s, points } of spec.series) {
    const st = s.style;
    if (spec.dots) {
      const r = s.name === "none" ? 6 : Math.max(2, 4.8 - 0.8 * s.index);
      out.push(`<g class="dots" data-strategy="${esc(s.name)}" fill="none" stroke="${st.color}" stroke-width="${s.name === "none" ? 3 : 1.6}"><title>${esc(s.name)}</title>${points.map(([x, y]) => `<circle cx="${f1(sx(x))}" cy="${f1(sy(y))}" r="${f1(r)}"/>`).join("")}</g>`);
      continue;
    }
    const d = points.length ? (path(points) ?? "") : "";
    out.push(
      `<path class="series" data-strategy="${esc(s.name)}" d="${d}" fill="none" stroke="${st.color}" stroke-width="${st.width}" stroke-linejoin="round" stroke-linecap="round"${st.dash ? ` stroke-dasharray="${st.dash}"` : ""}><title>${esc(s.name)}</title></path>`,
    );
    if (points.length === 1) out.push(`<circle cx="${f1(sx(points[0][0]))}" cy="${f1(sy(points[0][1]))}" r="${Math.max(2.5, st.width)}" fill="${st.color}"/>`);
  }
  for (const mk of spec.markers) out.push(`<circle class="marker" cx="${f1(sx(mk.x))}" cy="${f1(sy(mk.y))}" r="5"><title>${esc(mk.title)}</title></circle>`);
  // Hover bands on top: transparent, with the tooltip.
  for (const b of spec.bands) out.push(`<rect class="hover" x="${f1(sx(b.x0))}" y="${m.top}" width="${f1(Math.max(0.5, sx(b.x1) - sx(b.x0)))}" height="${ph}"><title>${esc(b.title)}</title></rect>`);
  // Markers once more above the bands, so their own tooltip wins.
  for (const mk of spec.markers) out.push(`<circle class="marker top" cx="${f1(sx(mk.x))}" cy="${f1(sy(mk.y))}" r="5"><title>${esc(mk.title)}</title></circle>`);
  out.push(`</svg>`);
  return out.join("\n");
}

/** A linear scale whose domain is widened to round values covering [min, max], with its ticks (about `count`; whole numbers only if `integer`). */
export function niceScale(min: number, max: number, count: number, integer = false): { scale: ScaleLinear<number, number>; ticks: number[] } {
  const scale = scaleLinear().domain([min, max]);
  if (!(max > min) || !Number.isFinite(min) || !Number.isFinite(max)) return { scale, ticks: [min] };
  scale.nice(count);
  // d3 steps are 1, 2, 5 x 10^k: on an integer axis a step below 1 leaves the whole ticks
  const ticks = scale.ticks(count).filter((t) => !integer || Number.isInteger(t));
  return { scale, ticks };
}

// ---------------------------------------------------------------------------------------------------

const CSS = `
:root{--fg:#1d2125;--muted:#6b737b;--line:#dee2e6;--bg:#fff;--soft:#f6f7f9;--good:#2b8a3e;--bad:#c92a2a}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1320px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:32px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:18px 0 6px}
code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.meta{margin:0;color:var(--muted)}
.facts{margin:4px 0 0}
.muted{color:var(--muted);font-weight:normal}
.note{color:var(--muted);font-size:13px;margin:8px 0}
table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}
th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
thead th{background:var(--soft);font-weight:600;white-space:nowrap}
th.group{text-align:center;border-left:1px solid var(--line)}
.num{text-align:right;white-space:nowrap}
.good{color:var(--good);font-weight:600}
.bad{color:var(--bad)}
tbody tr:hover{background:#f1f3f5}
.strategy{white-space:nowrap;display:inline-flex;align-items:center;gap:6px}
.swatch{flex:none}
.legend{display:flex;flex-wrap:wrap;gap:6px 22px;margin:8px 0}
.legend .item{display:inline-flex;align-items:center;gap:4px}
td.bar{width:180px;padding-top:8px}
td.bar span{display:block;height:8px;border-radius:2px}
table.quotes td.line{max-width:640px;word-break:break-word}
table.quotes td.line code{white-space:pre-wrap}
.scroll{overflow-x:auto}
table.per-session{font-size:12.5px}
table.per-session th,table.per-session td{padding:3px 6px;white-space:nowrap}
svg.chart{display:block;max-width:100%;height:auto;overflow:visible}
svg.chart .grid{stroke:#eceef0}
svg.chart .zero{stroke:#868e96;stroke-dasharray:3 3}
svg.chart .axis,svg.chart .tickmark{stroke:#868e96}
svg.chart .tick{font-size:11px;fill:var(--muted)}
svg.chart .label{font-size:12px;fill:#495057}
svg.chart .shade{fill:#f3f5f7}
svg.chart .hover{fill:#000;fill-opacity:0;pointer-events:all}
svg.chart .hover:hover{fill-opacity:.07}
svg.chart .marker{fill:none;stroke:var(--bad);stroke-width:2}
svg.chart .marker.top{stroke-opacity:0;pointer-events:all}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(600px,1fr));gap:18px}
figure.tile{margin:0;padding:10px;border:1px solid var(--line);border-radius:6px}
figure.tile figcaption{margin-bottom:4px}
details.session{border-bottom:1px solid var(--line);padding:4px 0}
details summary{cursor:pointer}
details.session summary .sid{display:inline-block;width:400px}
details.session summary .cell{display:inline-block;width:90px;text-align:right;color:var(--muted);font-variant-numeric:tabular-nums}
details.session summary .cell.wide{width:170px}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px;margin:8px 0}
footer dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}
footer dt{font-weight:600}
footer dd{margin:0;color:var(--muted)}
`;
