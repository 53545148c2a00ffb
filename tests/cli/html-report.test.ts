import { describe, expect, it } from "vitest";
import { htmlReport, niceScale } from "../../src/cli/html-report.js";
import type { StrategyResult } from "../../src/cli/simulate.js";
import { sessionsOverLimit, type CallFigures, type Figures, type QuoteLoss, type RuleFigures, type SessionFigures } from "../../src/sim/metrics.js";

// Synthetic figures, small enough to check every number by hand.
type Call = [tokens: number, reusable: number, prefixBreak: boolean, quoteEvents: number, quoteLost: number, recoveryTokens?: number];

function sessionFigures(sessionId: string, calls: Call[], rules: RuleFigures[] = [], quoteLosses: QuoteLoss[] = [], timed = false): SessionFigures {
  const perCall: CallFigures[] = calls.map(([tokens, reusable, prefixBreak, quoteEvents, quoteLost, recoveryTokens = 0], i) => ({
    messageId: `msg_${i + 1}`,
    tokens,
    reusable,
    prefixBreak,
    transformMs: timed ? 1 + i : 0,
    quoteEvents,
    quoteLost,
    reReads: recoveryTokens ? 1 : 0,
    recoveryTokens,
  }));
  return { sessionId, file: `${sessionId}.json`, perCall, ...figuresOf([perCall], rules, quoteLosses, timed) };
}

function figuresOf(perCall: CallFigures[][], rules: RuleFigures[], quoteLosses: QuoteLoss[], timed: boolean): Figures {
  const calls = perCall.flat();
  const sum = (f: (c: CallFigures) => number) => calls.reduce((a, c) => a + f(c), 0);
  const quoteEvents = sum((c) => c.quoteEvents);
  const quoteLost = sum((c) => c.quoteLost);
  const anthropicCost = sum((c) => 0.1 * c.reusable + 1.25 * (c.tokens - c.reusable));
  const openaiCost = sum((c) => 0.1 * c.reusable + 1.0 * (c.tokens - c.reusable));
  const recoveryTokens = sum((c) => c.recoveryTokens);
  return {
    calls: calls.length,
    billedTokens: sum((c) => c.tokens),
    peakContext: Math.max(0, ...calls.map((c) => c.tokens)),
    reusableTokens: sum((c) => c.reusable),
    prefixBreaks: sum((c) => (c.prefixBreak ? 1 : 0)),
    anthropicCost,
    openaiCost,
    quoteEvents,
    quoteLost,
    quoteLoss: quoteEvents ? quoteLost / quoteEvents : 0,
    reReads: sum((c) => c.reReads),
    recoveryTokens,
    anthropicCostWithRecovery: anthropicCost + 1.25 * recoveryTokens,
    openaiCostWithRecovery: openaiCost + recoveryTokens,
    transform: timed ? { firstMs: 1, medianMs: 2.5, p95Ms: 3, calls: calls.length } : { firstMs: 0, medianMs: 0, p95Ms: 0, calls: 0 },
    rules,
    quoteLosses,
  };
}

function result(strategy: string, sessions: SessionFigures[], base?: StrategyResult): StrategyResult {
  const rules = sessions.flatMap((s) => s.rules);
  const losses = sessions.flatMap((s) => s.quoteLosses);
  const total = figuresOf(sessions.map((s) => s.perCall), rules, losses, sessions.some((s) => s.transform.calls > 0));
  return { strategy, figures: { sessions, total }, overLimit: base && sessionsOverLimit(sessions, base.figures.sessions) };
}

const XSS = "<script>alert(1)</script>";
const loss = (line: string, rule = "dedupe-x", reReadTokens = 0): QuoteLoss => ({ sessionId: "ses_a", messageId: "msg_3", line, partId: "prt_7", rule, reReadTokens });

// none: tokens 1000, 2000, 3000, each call extending the previous one.
const none = result("none", [sessionFigures("ses_a", [[1000, 0, false, 0, 0], [2000, 1000, false, 0, 0], [3000, 2000, false, 2, 0]])]);
// balanced: a prefix break at call 2, one of two quoted lines lost at call 3 (its part re-read: 400 tokens).
const balanced = result(
  "balanced",
  [
    sessionFigures(
      "ses_a",
      [[1000, 0, false, 0, 0], [1500, 500, true, 0, 0], [2000, 1500, false, 2, 1, 400]],
      [{ rule: "dedupe-x", partsHit: 3, tokensSaved: 1500, quoteLosses: 1, reReads: 1, recoveryTokens: 400 }],
      [loss(`const html = "${XSS}"; // see https://example.com/x and see the tail of this long line`, "dedupe-x", 400)],
      true,
    ),
  ],
  none,
);
const compact = result("compact", [sessionFigures("ses_a", [[900, 0, false, 0, 0], [1400, 900, false, 0, 0], [1900, 1400, false, 2, 0]], [], [], true)], none);
const results = [none, balanced, compact];
const meta = { title: "report <title>", generatedBy: "acp simulate test.json" };

/** The text of each cell of each row of the table with the given class. */
function tableRows(html: string, cls: string): string[][] {
  const table = html.match(new RegExp(`<table class="${cls}">([\\s\\S]*?)</table>`))?.[1];
  if (!table) throw new Error(`no table ${cls}`);
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1].matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((cell) => decode(cell[1].replace(/<[^>]*>/g, "")).trim()),
  );
}

function decode(s: string): string {
  return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

function chart(html: string, id: string): string[] {
  return [...html.matchAll(new RegExp(`<svg class="chart" data-chart="${id}"[\\s\\S]*?</svg>`, "g"))].map((m) => m[0]);
}

describe("htmlReport on one session", () => {
  const html = htmlReport(results, meta);

  it("is a complete HTML document", () => {
    expect(html.startsWith("<!DOCTYPE html>\n<html lang=\"en\">")).toBe(true);
    expect(html.trimEnd().endsWith("</html>")).toBe(true);
    for (const tag of ["head", "body", "main", "style"]) {
      expect(html.match(new RegExp(`<${tag}[\\s>]`, "g")), tag).toHaveLength(1);
      expect(html.match(new RegExp(`</${tag}>`, "g")), tag).toHaveLength(1);
    }
    const head = html.slice(html.indexOf("<head>"), html.indexOf("</head>"));
    expect(head).toContain('<meta charset="utf-8">');
    expect(head).toContain("<title>report &lt;title&gt;</title>");
    expect(html.indexOf("</head>")).toBeLessThan(html.indexOf("<body>"));
    for (const tag of ["svg", "table", "section", "tr"]) expect(html.split(`<${tag}`).length, tag).toBe(html.split(`</${tag}>`).length);
  });

  it("loads nothing: no scripts, no external references in any tag", () => {
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<link|<img|<iframe|@import|url\(/i);
    // Text from sessions is escaped, so every '<' opens one of our tags: none may point outside.
    const tags = html.match(/<[^>]*>/g) ?? [];
    for (const tag of tags) {
      expect(tag).not.toMatch(/https?:|\/\//i);
      expect(tag).not.toMatch(/\s(src|href|xlink:href|action)=/i);
    }
    // The URL from the quoted line is there, as text.
    expect(html).toContain("see https://example.com/x");
  });

  it("escapes text from sessions", () => {
    expect(html).not.toContain(XSS);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("<title>report &lt;title&gt;</title>");
    const quotes = tableRows(html, "quotes");
    expect(quotes[1]).toEqual(["ses_a", "3", "msg_3", "prt_7", "dedupe-x", "400", `const html = "${XSS}"; // see https://example.com/x and see the tail of this long line`]);
  });

  it("escapes session ids, file names and strategy names, in text and attributes", () => {
    const evil = '"><img src=x onerror=alert(1)>';
    const s = result(`./p${evil}.yaml`, [sessionFigures(`ses${evil}`, [[10, 0, false, 1, 1]], [{ rule: `r${evil}`, partsHit: 1, tokensSaved: 2, quoteLosses: 1, reReads: 0, recoveryTokens: 0 }], [{ ...loss(evil, `r${evil}`), sessionId: `ses${evil}`, messageId: "msg_1" }])]);
    const n = result("none", [sessionFigures(`ses${evil}`, [[12, 0, false, 1, 0]])]);
    const out = htmlReport([n, s], { title: evil, generatedBy: evil });
    expect(out).not.toContain("<img");
    expect(out).not.toMatch(/"><img|onerror=alert\(1\)>/);
    expect(out).toContain("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;");
  });

  it("draws one series path per strategy in the prompt-size and reuse charts, and a Δ chart without none", () => {
    const [prompt] = chart(html, "prompt-tokens");
    expect(prompt).toBeDefined();
    expect([...prompt.matchAll(/<path class="series" data-strategy="([^"]*)"/g)].map((m) => m[1])).toEqual(["none", "balanced", "compact"]);
    const [reuse] = chart(html, "reused-share");
    expect([...reuse.matchAll(/<path class="series" data-strategy="([^"]*)"/g)].map((m) => m[1])).toEqual(["none", "balanced", "compact"]);
    const [delta] = chart(html, "prompt-delta");
    expect([...delta.matchAll(/<path class="series" data-strategy="([^"]*)"/g)].map((m) => m[1])).toEqual(["balanced", "compact"]);
    // Three calls: three points per path, one hover band (with its tooltip) per call.
    const path = prompt.match(/<path class="series" data-strategy="none" d="([^"]*)"/)![1];
    expect(path.match(/[ML]/g)).toHaveLength(3);
    expect(prompt.match(/<rect class="hover"/g)).toHaveLength(3);
    expect(prompt).toContain("call 3 · msg_3\nnone: 3,000 tokens, 66.7% reused\nbalanced: 2,000 tokens, 75.0% reused (1/2 quotes lost)");
    // The quote-loss of balanced at call 3 is marked.
    expect(prompt).toContain("balanced: 1 of 2 quoted lines lost at call 3");
  });

  it("puts the right numbers in the totals table", () => {
    const rows = tableRows(html, "totals");
    expect(rows[0]).toEqual([
      "strategy", "calls", "billed tokens", "Δbilled", "peak context", "reused", "prefix breaks", "Δanthropic", "with recovery", "Δopenai", "with recovery",
      "quote-loss", "re-reads (tokens)", "sessions > +2%", "ms first", "ms med/p95",
    ]);
    expect(rows[1]).toEqual(["none", "3", "6,000", "0.0%", "3,000", "50.0%", "0", "0.0%", "0.0%", "0.0%", "0.0%", "0.00% (0/2)", "0", "–", "–", "–"]);
    // anthropic: none 1250 + 1350 + 1450 = 4050, balanced 1250 + 1300 + 775 = 3325 (−17.9%), with the
    // 400-token re-read at 1.25: 3825 (−5.6%); openai: none 3300, balanced 2700 (−18.2%), with it 3100 (−6.1%).
    expect(rows[2]).toEqual(["balanced", "3", "4,500", "-25.0%", "2,000", "44.4%", "1", "-17.9%", "-5.6%", "-18.2%", "-6.1%", "50.00% (1/2)", "1 (400)", "0/1", "1.00", "2.50/3.00"]);
    expect(rows[3].slice(0, 4)).toEqual(["compact", "3", "4,200", "-30.0%"]);
  });

  it("lists the rules per strategy", () => {
    const rows = tableRows(html, "rules");
    expect(rows[0]).toEqual(["rule", "parts", "tokens saved", "", "of unpruned billed", "quote-loss events", "re-reads", "re-read tokens", "recovery Δanthropic"]);
    // recovery: 1.25 × 400 = 500 of none's 4050 (+12.35%)
    expect(rows[1]).toEqual(["dedupe-x", "3", "1,500", "", "25.0%", "1", "1", "400", "+12.35%"]);
    expect(html).toMatch(/compact<\/span><\/h3>\n<p class="muted">No rule acted\.<\/p>/);
  });

  it("notes strategies whose lines coincide, and none when they differ", () => {
    expect(html).not.toContain("lines coincide");
    const twin = { ...compact, strategy: "verbose" };
    expect(htmlReport([none, compact, twin], meta)).toContain("their lines coincide: <code>compact</code>, <code>verbose</code>.");
  });

  it("counts the sessions whose cost with recovery exceeds none's by more than 2%", () => {
    // a strategy that saves nothing and re-reads 100 tokens: 4050 + 125 is 3.1% above none
    const dear = result("dear", [sessionFigures("ses_a", [[1000, 0, false, 0, 0], [2000, 1000, false, 0, 0], [3000, 2000, false, 2, 1, 100]])], none);
    const row = tableRows(htmlReport([none, dear], meta), "totals")[2];
    expect(row.slice(7, 14)).toEqual(["0.0%", "+3.1%", "0.0%", "+3.0%", "50.00% (1/2)", "1 (100)", "1/1"]);
  });

  it("lists the re-read tokens with each lost line", () => {
    expect(tableRows(html, "quotes")[1].slice(5, 6)).toEqual(["400"]);
  });

  it("caps the quote-loss list", () => {
    const many = result("mask", [
      sessionFigures("ses_a", [[10, 0, false, 3, 3]], [], [loss("first line of the three lost lines, long enough"), loss("second"), loss("third")]),
    ]);
    const out = htmlReport([none, many], meta, { quoteLossCap: 1 });
    expect(tableRows(out, "quotes")).toHaveLength(2);
    expect(out).toContain("… and 2 more not shown");
  });

  it("says so when nothing was lost", () => {
    expect(htmlReport([none, compact], meta)).toContain("No quote-loss");
  });
});

describe("htmlReport on a corpus", () => {
  const sizes = [3, 8, 5, 1];
  const sessions = (scale: number) =>
    sizes.map((n, s) => sessionFigures(`ses_${s}`, Array.from({ length: n }, (_, k): Call => [Math.round(scale * 100 * (k + 1) * (s + 1)), k ? Math.round(scale * 100 * k * (s + 1)) : 0, false, 0, 0])));
  const corpus = [result("none", sessions(1)), result("mask10", sessions(0.5)), result("balanced", sessions(0.8))];
  const html = htmlReport(corpus, meta, { largest: 2 });

  it("draws the cumulative charts with one path per strategy, over every call", () => {
    for (const id of ["cumulative-billed", "cumulative-anthropic"]) {
      const [svg] = chart(html, id);
      expect([...svg.matchAll(/<path class="series" data-strategy="([^"]*)"/g)].map((m) => m[1])).toEqual(["none", "mask10", "balanced"]);
      const d = svg.match(/data-strategy="none" d="([^"]*)"/)![1];
      expect(d.match(/[ML]/g)).toHaveLength(1 + 17); // the origin, then each of the 17 calls
      expect(svg.match(/<rect class="hover"/g)).toHaveLength(4); // one band per session
    }
    const [share] = chart(html, "session-reused-share");
    expect(share.match(/<g class="dots"/g)).toHaveLength(3);
  });

  it("shows the largest sessions as small multiples and every session in a collapsed list", () => {
    const tiles = [...html.matchAll(/<figure class="tile">\n<figcaption><code>([^<]*)<\/code>/g)].map((m) => m[1]);
    expect(tiles).toEqual(["ses_1", "ses_2"]); // by unpruned billed tokens: 8 calls × 2, then 5 calls × 3
    expect(html.match(/<details class="session">/g)).toHaveLength(4);
    expect(chart(html, "prompt-tokens")).toHaveLength(2 + 4);
    expect(chart(html, "prompt-delta")).toHaveLength(0);
  });

  it("has a per-session table aligned with the sessions", () => {
    const rows = tableRows(html, "per-session");
    expect(rows).toHaveLength(2 + 4);
    // ses_1: none 100·2·(1+…+8) = 7,200 billed; mask10 at half: −50.0%; balanced −20.0%.
    expect(rows[3]).toEqual(["ses_1", "8", "7,200", "0", "-50.0%", "-50.0%", "-50.0%", "0", "0/0", "-20.0%", "-20.0%", "-20.0%", "0", "0/0"]);
    expect(rows.at(-1)![0]).toBe("ses_3");
    expect(tableRows(html, "totals")[1].slice(0, 3)).toEqual(["none", "17", "12,700"]);
  });
});

describe("niceScale", () => {
  it("widens the domain to round values covering the range, with round ticks", () => {
    const ticks = (min: number, max: number, count: number, integer?: boolean) => niceScale(min, max, count, integer).ticks;
    expect(niceScale(0, 51721, 6).scale.domain()).toEqual([0, 60000]);
    expect(ticks(0, 51721, 6)).toEqual([0, 10000, 20000, 30000, 40000, 50000, 60000]);
    expect(ticks(0, 1, 5)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(ticks(-21500, 300, 5)).toEqual([-25000, -20000, -15000, -10000, -5000, 0, 5000]);
    expect(ticks(1, 23, 10, true)).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]);
    expect(ticks(0.5, 3.5, 10, true)).toEqual([0, 1, 2, 3, 4]);
    expect(ticks(5, 5, 4)).toEqual([5]);
  });
});
