// The figures of docs/simulate.md, computed over a replay: billed tokens, peak context, reusable prefix,
// prefix breaks, cache cost, quote events and quote-loss, recovery (re-reads), transform time, and a
// per-rule breakdown.
import type { ExplainEntry } from "../engine/api.js";
import type { Part } from "../graph/types.js";
import type { Session } from "./load.js";
import { PromptText, QuoteTracker } from "./quotes.js";
import type { HostProfile } from "../graph/host.js";
import { lastUserIndex, renderMessage, toolResultText, unitTokens, type Unit } from "../graph/prompt.js";
import { callTime, replaySession, type ReplayOptions, type ReplayedCall } from "./replay.js";

/** Cache price multipliers on the base input price. */
export const ANTHROPIC_CACHE = { read: 0.1, write: 1.25 } as const; // 5-minute cache write
export const OPENAI_CACHE = { read: 0.1, write: 1.0 } as const; // GPT-5 family: no write premium

/** Rule name given to a quote-loss whose hidden part no explain() entry claims. */
export const UNEXPLAINED = "(unexplained)";

/** No session's cost including recovery may exceed the no-pruning replay by more than this (issue 13). */
export const RECOVERY_LIMIT_PCT = 2;

export interface CallFigures {
  messageId: string;
  /** Tokens of the whole prompt. */
  tokens: number;
  /** Tokens of the longest common unit prefix with the previous call's prompt (0 for the first call). */
  reusable: number;
  /** The previous prompt is not a prefix of this one. */
  prefixBreak: boolean;
  transformMs: number;
  quoteEvents: number;
  quoteLost: number;
  /** Parts re-read at this call: the distinct parts its lost quotes were blamed on. */
  reReads: number;
  /** Tokens of those parts' full outputs, charged as new uncached input on this call. */
  recoveryTokens: number;
}

export interface QuoteLoss {
  sessionId: string;
  /** The assistant message that wrote the line. */
  messageId: string;
  line: string;
  /** The completed tool part that held the line: the newest one an explain() entry claims, else the newest. */
  partId: string;
  /** The rule whose explain() entry claims that part, or UNEXPLAINED. */
  rule: string;
  /**
   * Tokens charged for re-reading the part at this call: its full output on the call's first loss
   * blamed on that part, 0 on the others (a part is re-read once per call).
   */
  reReadTokens: number;
}

export interface RuleFigures {
  rule: string;
  /** Distinct parts explain() credited to the rule on any call of the replay. */
  partsHit: number;
  /** Billed tokens saved: over all calls, the rule's parts rendered unpruned minus rendered pruned. */
  tokensSaved: number;
  /** Quote-loss events attributed to the rule. */
  quoteLosses: number;
  /** Re-reads (part and call) charged to the rule, and their tokens. */
  reReads: number;
  recoveryTokens: number;
}

export interface TimingFigures {
  /** The first transform call of the replay (cold start), ms. */
  firstMs: number;
  /** Median and 95th percentile of the other calls, ms (0 when there are none). */
  medianMs: number;
  p95Ms: number;
  /** Number of transform calls timed, the first included. */
  calls: number;
}

export interface Figures {
  calls: number;
  billedTokens: number;
  peakContext: number;
  reusableTokens: number;
  prefixBreaks: number;
  /** In base-input-price token units: Σ 0.1 × reusable + 1.25 × rest. */
  anthropicCost: number;
  /** In base-input-price token units: Σ 0.1 × reusable + 1.0 × rest. */
  openaiCost: number;
  quoteEvents: number;
  quoteLost: number;
  /** quoteLost / quoteEvents (0 when there are no events). */
  quoteLoss: number;
  /** Recovery: at each call, every part a lost quote was blamed on is re-read once (see CallFigures). */
  reReads: number;
  recoveryTokens: number;
  /** anthropicCost + 1.25 × recoveryTokens: the re-read outputs are new, uncached input. */
  anthropicCostWithRecovery: number;
  /** openaiCost + 1.0 × recoveryTokens. */
  openaiCostWithRecovery: number;
  transform: TimingFigures;
  rules: RuleFigures[];
  quoteLosses: QuoteLoss[];
}

export interface SessionFigures extends Figures {
  sessionId: string;
  file: string;
  perCall: CallFigures[];
}

export interface CorpusFigures {
  sessions: SessionFigures[];
  total: Figures;
}

/** The provider's prompt-cache lifetime the cost figures assume unless told otherwise (Anthropic's default). */
export const DEFAULT_CACHE_TTL_MINUTES = 5;

/** Replays one session and computes its figures. */
export function measureSession(session: Session, options: ReplayOptions): SessionFigures {
  const quotes = new QuoteTracker();
  let quotedUpTo = 0; // messages before this index have been fed to the tracker
  const perCall: CallFigures[] = [];
  const quoteLosses: QuoteLoss[] = [];
  const rules = new RuleLedger(options.host);
  let previous: Unit[] = [];
  let previousAt: number | undefined;
  const ttl = (options.cacheTtlMinutes ?? DEFAULT_CACHE_TTL_MINUTES) * 60_000;
  let recorded: Map<string, Part> | undefined; // part id → the part as recorded, built on the first loss

  for (const call of replaySession(session, options)) {
    const tokensPerUnit = call.units.map((unit) => unitTokens(unit.text));
    const tokens = sum(tokensPerUnit);
    // A call made longer than the cache lifetime after the previous one finds nothing cached.
    const at = callTime(call.message);
    const expired = ttl > 0 && at !== undefined && previousAt !== undefined && at - previousAt > ttl;
    if (at !== undefined) previousAt = at;
    const common = perCall.length === 0 ? 0 : commonPrefixLength(previous, call.units);
    const reusable = expired ? 0 : sum(tokensPerUnit.slice(0, common));
    // a break in the prompt itself (an expired cache is not counted: the prompt may be unchanged)
    const prefixBreak = perCall.length > 0 && common < previous.length;

    // Quote events of this call: the tracker sees every message up to and including the call's own.
    let events: ReturnType<QuoteTracker["step"]> = [];
    while (quotedUpTo <= call.index) events = quotes.step(session.messages[quotedUpTo++]);
    const prompt = new PromptText(call.units);
    const explained = entriesPerPart(call.explain);
    let quoteLost = 0;
    let recoveryTokens = 0;
    const reRead = new Set<string>();
    for (const event of events) {
      if (prompt.contains(event.line)) continue;
      quoteLost++;
      // Every part that held the line is hidden; blame the newest one a rule claims, else the newest,
      // and of its decisions the one on its output (its input may be stripped by another rule).
      const newestFirst = [...event.sourcePartIds].reverse();
      const partId = newestFirst.find((id) => explained.has(id)) ?? newestFirst[0];
      const rule = outputEntry(explained.get(partId))?.rule ?? UNEXPLAINED;
      // Recovery: the agent re-reads the hidden part, once per part and call, at full size.
      let reReadTokens = 0;
      if (!reRead.has(partId)) {
        reRead.add(partId);
        recorded ??= partsById(session);
        const part = recorded.get(partId);
        reReadTokens = part ? unitTokens(toolResultText(part, options.host)) : 0;
        recoveryTokens += reReadTokens;
      }
      quoteLosses.push({ sessionId: session.id, messageId: event.messageId, line: event.line, partId, rule, reReadTokens });
    }

    if (explained.size > 0) rules.addCall(call, tokensPerUnit, explained);
    perCall.push({ messageId: call.message.info.id, tokens, reusable, prefixBreak, transformMs: call.transformMs, quoteEvents: events.length, quoteLost, reReads: reRead.size, recoveryTokens });
    previous = call.units;
  }

  rules.addQuoteLosses(quoteLosses);
  return { sessionId: session.id, file: session.file, perCall, ...figuresOf(perCall, quoteLosses, rules.figures(), !!options.pruner) };
}

/** Replays every session and adds a total. */
export function measureSessions(sessions: Session[], options: ReplayOptions): CorpusFigures {
  const measured = sessions.map((session) => measureSession(session, options));
  return { sessions: measured, total: totalOf(measured) };
}

/** The total over sessions measured one by one (e.g. to report progress between them). */
export function totalOf(sessions: SessionFigures[]): Figures {
  const perCall = sessions.flatMap((s) => s.perCall);
  const quoteLosses = sessions.flatMap((s) => s.quoteLosses);
  const timed = sessions.some((s) => s.transform.calls > 0);
  return figuresOf(perCall, quoteLosses, mergeRules(sessions.map((s) => s.rules)), timed);
}

export interface RelativeFigures {
  /** Percent change against the baseline (e.g. -42.0 for 42% fewer billed tokens). */
  billedTokensPct: number;
  peakContextPct: number;
  anthropicCostPct: number;
  openaiCostPct: number;
  /** The costs including recovery, against the baseline's (no pruning: nothing to recover). */
  anthropicCostWithRecoveryPct: number;
  openaiCostWithRecoveryPct: number;
}

/** Figures relative to the same replay without pruning, in percent. */
export function relativeTo(figures: Figures, baseline: Figures): RelativeFigures {
  const pct = (value: number, base: number) => (base === 0 ? 0 : (100 * (value - base)) / base);
  return {
    billedTokensPct: pct(figures.billedTokens, baseline.billedTokens),
    peakContextPct: pct(figures.peakContext, baseline.peakContext),
    anthropicCostPct: pct(figures.anthropicCost, baseline.anthropicCost),
    openaiCostPct: pct(figures.openaiCost, baseline.openaiCost),
    anthropicCostWithRecoveryPct: pct(figures.anthropicCostWithRecovery, baseline.anthropicCostWithRecovery),
    openaiCostWithRecoveryPct: pct(figures.openaiCostWithRecovery, baseline.openaiCostWithRecovery),
  };
}

export interface OverLimit {
  limitPct: number;
  /** Sessions whose Anthropic or OpenAI cost including recovery is more than limitPct above the baseline's. */
  sessions: string[];
  anthropic: number;
  openai: number;
}

/**
 * The sessions a strategy makes more expensive than the baseline (no pruning) by more than limitPct,
 * recovery included. Both lists must hold the same sessions in the same order.
 */
export function sessionsOverLimit(sessions: SessionFigures[], baseline: SessionFigures[], limitPct = RECOVERY_LIMIT_PCT): OverLimit {
  const out: OverLimit = { limitPct, sessions: [], anthropic: 0, openai: 0 };
  sessions.forEach((s, i) => {
    const base = baseline[i];
    if (!base || base.sessionId !== s.sessionId || base.file !== s.file) throw new Error(`sessionsOverLimit: session ${i} differs from the baseline's`);
    const rel = relativeTo(s, base);
    const anthropic = rel.anthropicCostWithRecoveryPct > limitPct;
    const openai = rel.openaiCostWithRecoveryPct > limitPct;
    if (anthropic) out.anthropic++;
    if (openai) out.openai++;
    if (anthropic || openai) out.sessions.push(s.sessionId);
  });
  return out;
}

/** Cost of one call in base-input-price token units: cached prefix read, the rest written or sent. */
export function cacheCost(tokens: number, reusable: number, price: { read: number; write: number }): number {
  return price.read * reusable + price.write * (tokens - reusable);
}

/** Number of leading units that match: same part id and exactly the same text. */
export function commonPrefixLength(a: Unit[], b: Unit[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i].partId === b[i].partId && a[i].text === b[i].text) i++;
  return i;
}

function figuresOf(perCall: CallFigures[], quoteLosses: QuoteLoss[], rules: RuleFigures[], timed: boolean): Figures {
  let billedTokens = 0, peakContext = 0, reusableTokens = 0, prefixBreaks = 0;
  let anthropicCost = 0, openaiCost = 0, quoteEvents = 0, quoteLost = 0, reReads = 0, recoveryTokens = 0;
  for (const call of perCall) {
    billedTokens += call.tokens;
    peakContext = Math.max(peakContext, call.tokens);
    reusableTokens += call.reusable;
    if (call.prefixBreak) prefixBreaks++;
    anthropicCost += cacheCost(call.tokens, call.reusable, ANTHROPIC_CACHE);
    openaiCost += cacheCost(call.tokens, call.reusable, OPENAI_CACHE);
    quoteEvents += call.quoteEvents;
    quoteLost += call.quoteLost;
    reReads += call.reReads;
    recoveryTokens += call.recoveryTokens;
  }
  return {
    calls: perCall.length,
    billedTokens,
    peakContext,
    reusableTokens,
    prefixBreaks,
    anthropicCost,
    openaiCost,
    quoteEvents,
    quoteLost,
    quoteLoss: quoteEvents === 0 ? 0 : quoteLost / quoteEvents,
    reReads,
    recoveryTokens,
    anthropicCostWithRecovery: anthropicCost + ANTHROPIC_CACHE.write * recoveryTokens,
    openaiCostWithRecovery: openaiCost + OPENAI_CACHE.write * recoveryTokens,
    transform: timingOf(timed ? perCall.map((call) => call.transformMs) : []),
    rules,
    quoteLosses,
  };
}

/** First call apart (cold start: module JIT, state load); median and p95 over the rest. */
export function timingOf(ms: number[]): TimingFigures {
  if (ms.length === 0) return { firstMs: 0, medianMs: 0, p95Ms: 0, calls: 0 };
  const rest = ms.slice(1).sort((a, b) => a - b);
  return { firstMs: ms[0], medianMs: percentile(rest, 0.5), p95Ms: percentile(rest, 0.95), calls: ms.length };
}

/** Nearest-rank percentile of sorted values; 0 for none. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** explain() lists a part once per decided slot (its output, its input): its entries together. */
function entriesPerPart(entries: ExplainEntry[]): Map<string, ExplainEntry[]> {
  const byPart = new Map<string, ExplainEntry[]>();
  for (const entry of entries) {
    const list = byPart.get(entry.partId);
    if (list) list.push(entry);
    else byPart.set(entry.partId, [entry]);
  }
  return byPart;
}

/** Of a part's decisions, the one on its output (quote sources are output lines), else the latest. */
function outputEntry(entries: ExplainEntry[] | undefined): ExplainEntry | undefined {
  return entries?.find((e) => e.slot !== "input") ?? entries?.[entries.length - 1];
}

/** Accumulates the per-rule breakdown over one session's calls. */
class RuleLedger {
  constructor(private readonly host: HostProfile) {}
  private readonly partsByRule = new Map<string, Set<string>>();
  private readonly savedByRule = new Map<string, number>();
  private readonly lossesByRule = new Map<string, number>();
  private readonly reReadsByRule = new Map<string, number>();
  private readonly recoveryByRule = new Map<string, number>();

  /**
   * Tokens saved on this call by each explained part: the part's units rendered from the recorded context,
   * minus its units in the pruned prompt (0 when the pruner removed the part).
   */
  addCall(call: ReplayedCall, tokensPerUnit: number[], explained: Map<string, ExplainEntry[]>): void {
    const prunedTokens = tokensByPart(call.units, tokensPerUnit, explained);
    // Only the recorded messages that hold an explained part need rendering.
    const lastUser = lastUserIndex(call.context, this.host);
    const originalUnits: Unit[] = [];
    call.context.forEach((message, i) => {
      if (message.parts.some((part) => explained.has(part.id))) renderMessage(message, i > lastUser, this.host, originalUnits);
    });
    const originalTokens = tokensByPart(originalUnits, originalUnits.map((u) => unitTokens(u.text)), explained);
    for (const [partId, entries] of explained) {
      const saved = (originalTokens.get(partId) ?? 0) - (prunedTokens.get(partId) ?? 0);
      // a part whose output and input different rules pruned: the saving is shared by what each decision frees
      const total = entries.reduce((t, e) => t + Math.max(0, e.tokensSaved), 0);
      for (const entry of entries) {
        if (!this.partsByRule.has(entry.rule)) this.partsByRule.set(entry.rule, new Set());
        this.partsByRule.get(entry.rule)!.add(partId);
        const share = entries.length === 1 ? saved : total > 0 ? (saved * Math.max(0, entry.tokensSaved)) / total : saved / entries.length;
        this.savedByRule.set(entry.rule, (this.savedByRule.get(entry.rule) ?? 0) + share);
      }
    }
  }

  addQuoteLosses(losses: QuoteLoss[]): void {
    const reRead = new Set<string>(); // part and call (the message that quoted)
    for (const loss of losses) {
      this.lossesByRule.set(loss.rule, (this.lossesByRule.get(loss.rule) ?? 0) + 1);
      const key = `${loss.messageId}\u0000${loss.partId}`;
      if (reRead.has(key)) continue;
      reRead.add(key);
      this.reReadsByRule.set(loss.rule, (this.reReadsByRule.get(loss.rule) ?? 0) + 1);
      this.recoveryByRule.set(loss.rule, (this.recoveryByRule.get(loss.rule) ?? 0) + loss.reReadTokens);
    }
  }

  figures(): RuleFigures[] {
    const names = new Set([...this.partsByRule.keys(), ...this.lossesByRule.keys()]);
    return [...names].sort().map((rule) => ({
      rule,
      partsHit: this.partsByRule.get(rule)?.size ?? 0,
      tokensSaved: Math.round(this.savedByRule.get(rule) ?? 0),
      quoteLosses: this.lossesByRule.get(rule) ?? 0,
      reReads: this.reReadsByRule.get(rule) ?? 0,
      recoveryTokens: this.recoveryByRule.get(rule) ?? 0,
    }));
  }
}

function tokensByPart(units: Unit[], tokensPerUnit: number[], wanted: Map<string, unknown>): Map<string, number> {
  const byPart = new Map<string, number>();
  units.forEach((unit, i) => {
    if (wanted.has(unit.partId)) byPart.set(unit.partId, (byPart.get(unit.partId) ?? 0) + tokensPerUnit[i]);
  });
  return byPart;
}

function mergeRules(perSession: RuleFigures[][]): RuleFigures[] {
  const merged = new Map<string, RuleFigures>();
  for (const figures of perSession) {
    for (const f of figures) {
      const m = merged.get(f.rule) ?? { rule: f.rule, partsHit: 0, tokensSaved: 0, quoteLosses: 0, reReads: 0, recoveryTokens: 0 };
      m.partsHit += f.partsHit;
      m.tokensSaved += f.tokensSaved;
      m.quoteLosses += f.quoteLosses;
      m.reReads += f.reReads;
      m.recoveryTokens += f.recoveryTokens;
      merged.set(f.rule, m);
    }
  }
  return [...merged.values()].sort((a, b) => a.rule.localeCompare(b.rule));
}

/** Every part of the recorded session by id (the first of duplicates, as the quote tracker indexes them). */
function partsById(session: Session): Map<string, Part> {
  const byId = new Map<string, Part>();
  for (const message of session.messages) for (const part of message.parts) if (!byId.has(part.id)) byId.set(part.id, part);
  return byId;
}

function sum(values: number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}
