// Text of the /acp commands. Pure functions of the pruner state and the session history, so
// they are tested without a host.
import { buildGraph, partResultText, tokensOf, textOf, type Graph } from "../graph/graph.js";
import { idTags } from "../engine/id-tags.js";
import { OPENCODE } from "./profile.js";
import type { Message } from "../graph/types.js";
import type { AcpPruner } from "../engine/pruner.js";
import { partOf, shownIdOf } from "../engine/ids.js";
import { rulesText, type ManualEntry } from "../engine/manual.js";
import { manualBy } from "../engine/manual-patch.js";
import { byReason, type Holder } from "../engine/holders.js";
import { describeStanding } from "../engine/why-not.js";
import { PIN_LASTS } from "../engine/pins.js";
import { sessionTotals, type RuleTotals } from "../engine/totals.js";
import { backedOffRules, regretTotal, type RegretCounts } from "../engine/regret.js";
import { budgetText, expiredWaitingNote, type BudgetLimit } from "./budget.js";
import { fmtK } from "./notify.js";
import { callLabel } from "./reminders.js";
import { didYouMean } from "../rules/problems.js";

const fmt = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)}K` : String(n));

export const HELP = [
  "opencode-acp — agentic context pruning",
  "  /acp             this help",
  "  /acp context     token breakdown of this session and what pruning saved",
  "  /acp stats       prunes per rule, tokens saved and regret: this session and all-time",
  "  /acp budget      context window use of the last request, and what to do about it",
  "  /acp protected   protected tools and file globs",
  "  /acp sweep [n]   discard tool outputs since your last message (or the newest n)",
  "  /acp explain ID  who pruned a part and why (ID: t1bz as in [acp:t1bz], or a part id prt_…)",
  "  /acp restore ID  show a part in full again and keep it so (no rule prunes it until it is viewed again)",
].join("\n");

/** "1 re-run, 2 restored by the agent, 1 by you": who regretted a rule's prunes; "" when nobody did. */
export function regretText(t: RegretCounts): string {
  const restored = [t.agent && `${t.agent} by the agent`, t.user && `${t.user} by you`].filter(Boolean);
  const parts = [t.rerun && `${t.rerun} re-run${t.rerun === 1 ? "" : "s"}`, restored.length && `restored ${restored.join(", ")}`].filter(Boolean);
  return parts.join(", ");
}

/** One row per rule: parts, tokens, and the regret it caused (a rule all of whose prunes were restored still shows). */
function ruleRows(rules: [string, RuleTotals][], note: (rule: string) => string = () => ""): string[] {
  const rows = rules.filter(([, r]) => r.parts > 0 || regretTotal(r) > 0).sort((a, b) => b[1].tokens - a[1].tokens || a[0].localeCompare(b[0]));
  const width = Math.max(0, ...rows.map(([id]) => id.length));
  return rows.map(([id, r]) => {
    const regret = regretText(r);
    const extra = [regret && `regret: ${regret}`, note(id)].filter(Boolean).join("; ");
    return `  ${id.padEnd(width)}  ${String(r.parts).padStart(4)} parts  ${fmt(r.tokens).padStart(7)} tokens${extra ? `  (${extra})` : ""}`;
  });
}

const prunes = (n: number) => `${n} prune${n === 1 ? "" : "s"}`;

export function statsText(pruner: AcpPruner, sessionID: string): string {
  // A prune that saves nothing (a step marker the host never sends, a short output replaced by its
  // note beside a newer view that went) is not a prune worth counting.
  const all = pruner.explain(sessionID);
  const free = all.filter((e) => !(e.tokensSaved > 0)).length;
  const freeNote = free > 0 ? `  (${free} more part${free === 1 ? "" : "s"} changed without saving tokens, not counted: step markers the provider never receives, short outputs replaced by a note beside a newer view)` : undefined;
  const state = pruner.state(sessionID);
  const totals = Object.entries(sessionTotals(state));
  const limit = pruner.resolved.commit.regretLimit ?? 0;
  const backedOff = backedOffRules(state, limit);
  const note = (rule: string) => (backedOff.has(rule) ? `backed off: prunes no new parts in this session` : "");
  const parts = totals.reduce((s, [, r]) => s + r.parts, 0);
  const tokens = totals.reduce((s, [, r]) => s + r.tokens, 0);
  const lines =
    parts === 0 && totals.length === 0
      ? [`acp stats: nothing pruned yet in this session (preset ${pruner.resolved.presetName}).`]
      : [`acp stats (preset ${pruner.resolved.presetName}): ${prunes(parts)}, ${fmt(tokens)} tokens saved per request`, ...ruleRows(totals, note)];
  if (freeNote) lines.push(freeNote);
  // what the last request left waiting (made by this process or an earlier one: the state keeps it)
  const waiting = pruner.waiting(sessionID);
  if (waiting) {
    const minTokens = pruner.resolved.commit.minTokens;
    const head = `  waiting: ${prunes(waiting.parts)} of parts already sent (${fmt(waiting.tokens)} tokens)`;
    const expired = expiredWaitingNote(pruner, state);
    if (expired) lines.push(`${head}: ${expired}`);
    else lines.push(`${head}: they go when the provider's cache breaks anyway (it expired, or a new message of yours makes the provider drop signed reasoning)${minTokens > 0 ? `, once they free ${fmt(minTokens)} tokens` : ""}${pruner.resolved.commit.breakEven > 0 ? ", or once enough requests follow to repay re-writing the cached prompt" : ""}, so it is not re-written for little`);
  }
  if (totals.some(([, r]) => regretTotal(r) > 0))
    lines.push(limit > 0 ? `  regret: a pruned part restored, or its call re-run while hidden; a rule backs off in a session after ${limit} (regretLimit)` : "  regret: a pruned part restored, or its call re-run while hidden (back-off off: regretLimit 0)");
  const allTime = pruner.allTime(sessionID);
  // no session has pruned anything yet: a line of zeros says nothing (a broken file still says so)
  if (allTime && (allTime.sessions > 0 || allTime.problem)) {
    const rules = Object.entries(allTime.rules);
    const n = rules.reduce((s, [, r]) => s + r.parts, 0);
    const t = rules.reduce((s, [, r]) => s + r.tokens, 0);
    lines.push(
      "",
      `all-time (${allTime.sessions} session${allTime.sessions === 1 ? "" : "s"}): ${prunes(n)}, ${fmt(t)} tokens saved per request`,
      ...ruleRows(rules),
    );
    if (allTime.problem) lines.push(`  (${allTime.problem}; a new file begins with the next prune)`);
  }
  return lines.join("\n");
}

export function contextText(pruner: AcpPruner, messages: Message[]): string {
  const g = buildGraph(messages, undefined, { host: OPENCODE });
  const t = { user: 0, assistant: 0, reasoning: 0, toolCalls: 0, toolResults: 0 };
  for (const n of g.nodes) {
    const p = n.part;
    if (p.type === "text" && !p.ignored) t[n.message.info.role === "user" ? "user" : "assistant"] += tokensOf((p.text ?? "").length);
    else if (p.type === "reasoning") t.reasoning += tokensOf((p.text ?? "").length);
    else if (p.type === "tool") {
      t.toolCalls += tokensOf(textOf(p.state?.input).length);
      t.toolResults += tokensOf(partResultText(p, OPENCODE).length);
    }
  }
  const saved = pruner.explain(g.sessionID).reduce((s, e) => s + e.tokensSaved, 0);
  const total = t.user + t.assistant + t.reasoning + t.toolCalls + t.toolResults;
  return [
    `acp context: ${fmt(total)} tokens of history (chars/4), ${fmt(saved)} pruned from each request`,
    `  user        ${fmt(t.user)}`,
    `  assistant   ${fmt(t.assistant)}`,
    `  reasoning   ${fmt(t.reasoning)}`,
    `  tool calls  ${fmt(t.toolCalls)}`,
    `  tool output ${fmt(t.toolResults)}`,
    `  sent now    ${fmt(Math.max(0, total - saved))}`,
  ].join("\n");
}

export function protectedText(pruner: AcpPruner): string {
  return [
    "acp protected (config keys protectedTools / protectedFiles in acp.jsonc):",
    `  tools: ${pruner.config.protectedTools.join(", ")}`,
    `  files: ${pruner.config.protectedFiles.join(", ")}`,
  ].join("\n");
}

/** What a user named with an id: the part (when the session knows it) and how to call it. */
function named(pruner: AcpPruner, sessionID: string, raw: string, graph: Graph, root?: string): { shown: string; partId?: string; label: string } {
  const state = pruner.state(sessionID);
  const { shown, partId } = partOf(state.ids, raw, (id) => graph.byId.has(id) || state.decisions[id] !== undefined || state.manual?.[id] !== undefined, idTags(OPENCODE.idTag));
  return { shown, partId, label: labelOf(shown, partId, graph, root) };
}

/** "t1bz (prt_…, read src/a.ts)": the id shown, the part id when it differs, and what the part is. */
function labelOf(shown: string, partId: string | undefined, graph: Graph, root?: string): string {
  const part = partId ? graph.byId.get(partId)?.part : undefined;
  const what = part ? (part.type === "tool" ? callLabel(part, root) : part.type === "text" ? "message" : part.type) : undefined;
  const ids = [shown !== partId ? partId : undefined, what].filter(Boolean).join(", ");
  return ids ? `${shown} (${ids})` : shown;
}

/** A part the engine named by its part id, as the user knows it: its [acp:…] id where it has one. */
function labelOfPart(pruner: AcpPruner, sessionID: string, partId: string, graph: Graph, root?: string): string {
  return labelOf(shownIdOf(pruner.state(sessionID).ids, partId), partId, graph, root);
}

const unknownId = (cmd: string, shown: string) =>
  `acp ${cmd}: unknown id "${shown}". Ids are the ones in [acp:…] tags, such as t1bz, or part ids (prt_…).`;

/** "discarded by the user with /acp sweep": a manual prune says who asked for it. */
function manualText(entry: ManualEntry | undefined, action: string): string {
  const done = entry?.action === "distill" ? "distilled" : entry?.action === "replace" ? "cut (replace)" : entry?.action === "discard" ? "discarded" : action;
  return manualBy(entry) === "user" ? `${done} by the user with /acp sweep` : `${done} by the agent with context_prune`;
}

/** Rules listed for a part that is not pruned (the most telling first: what holds it, what is about to prune it). */
const MAX_STANDING = 8;

export function explainText(pruner: AcpPruner, sessionID: string, raw: string, messages: Message[] = [], root?: string): string {
  const who = named(pruner, sessionID, raw, buildGraph(messages, undefined, { host: OPENCODE }), root);
  if (!who.partId) return unknownId("explain", who.shown);
  const state = pruner.state(sessionID);
  const manual = state.manual?.[who.partId];
  const e = pruner.explain(sessionID).filter((x) => x.partId === who.partId);
  if (!e.length) {
    if (manual) return `acp explain ${who.label}: not pruned yet; ${manualText(manual, "pruned")}, applied from the next request.`;
    const standing = pruner.why(sessionID, who.partId, messages)?.standing;
    if (!standing?.length) return `acp explain ${who.label}: not pruned.`;
    const lines = standing.slice(0, MAX_STANDING).map((x) => `  - ${describeStanding(x)}`);
    if (standing.length > MAX_STANDING) lines.push(`  - and ${standing.length - MAX_STANDING} more (\`npx acp explain <export.json> --part ${who.partId}\` on an \`opencode export\` of the session shows each condition)`);
    return [`acp explain ${who.label}: not pruned. Rules that consider it:`, ...lines].join("\n");
  }
  return e
    .map((x) => {
      const tokens = `${x.tokensSaved} tokens saved`;
      if (x.rule === "manual") return `acp explain ${who.label}: ${manualText(manual, x.action)} (${tokens})`;
      const rule = pruner.resolved.all.find((r) => r.spec.id === x.rule)?.spec;
      return `acp explain ${who.label}: ${x.action} by rule "${x.rule}" (${tokens})${rule ? ` — ${rule.description} [${rule.source?.file}:${rule.source?.line}]` : ""}`;
    })
    .join("\n");
}

/**
 * /acp restore: the part is sent in full from the next request and pinned (no rule prunes it
 * until a later call views the same thing again, pins.ts), whether it was pruned, waited to be,
 * or neither; its pruned newer views of the same thing come back with it
 * (AcpPruner.restoreReport). The reply says which of these it was.
 */
export function restoreText(pruner: AcpPruner, sessionID: string, raw: string, messages: Message[] = [], root?: string): string {
  const graph = buildGraph(messages, undefined, { host: OPENCODE });
  const who = named(pruner, sessionID, raw, graph, root);
  if (!who.partId) return unknownId("restore", who.shown);
  const r = pruner.restoreReport(sessionID, who.partId, "user", messages);
  const newer = r.newer.length === 0 ? "" : ` Restored with it, so that an older view is never sent in full while a newer view of the same thing is hidden: ${r.newer.map((id) => labelOfPart(pruner, sessionID, id, graph, root)).join(", ")}.`;
  if (r.restored) return `acp: ${who.label} restored; it is sent in full from the next request.${newer}`;
  if (r.waiting.length > 0) {
    const tokens = r.waiting.reduce((m, w) => Math.max(m, w.tokens ?? 0), 0);
    return `acp: ${who.label} was not pruned yet: ${rulesText(r.waiting)} waited to prune it (the commit policy held the change for a batch${tokens > 0 ? `; it would save ${fmt(tokens)} tokens` : ""}). It is pinned now: it stays in full, and no rule prunes it ${PIN_LASTS}.${newer}`;
  }
  if (r.wasPinned) return `acp: ${who.label} is not pruned: it was restored before, and no rule prunes it ${PIN_LASTS}.${newer}`;
  return `acp: ${who.label} is not pruned. It is pinned now: no rule prunes it ${PIN_LASTS}.${newer}`;
}

/**
 * "t0dy (prt_r3, read src/calc.ts), t0de (prt_r1, read src/calc.ts) were restored": the older views
 * that keep newer ones in full (holders.ts), one clause per reason.
 */
function holdersText(pruner: AcpPruner, sessionID: string, holders: Holder[], graph: Graph, root?: string): string {
  return byReason(holders)
    .map((h) => {
      const labels = h.partIds.map((p) => labelOfPart(pruner, sessionID, p, graph, root));
      const one = labels.length === 1;
      if (h.why === "restored") return `${labels.join(", ")} ${one ? "was" : "were"} restored`;
      if (h.why === "protected") return `${labels.join(", ")} ${one ? "is" : "are"} protected by rule "${h.rule}"`;
      if (h.why === "no-note") return `${labels.join(", ")} ${one ? "stays" : "stay"} in full: rule "${h.rule}" has no note short enough for ${one ? "it" : "them"}`;
      return `${labels.join(", ")} ${one ? "stays" : "stay"} in full: rule "${h.rule}" backed off after regret`;
    })
    .join("; ");
}

export function sweepText(pruner: AcpPruner, sessionID: string, messages: Message[], n: number | undefined, root?: string): string {
  const r = pruner.sweep(sessionID, messages, n);
  const held = r.held && `${r.held.parts} newer view${r.held.parts === 1 ? "" : "s"} of ${r.held.holders.length === 1 ? "a part that stays" : "parts that stay"} in full (${holdersText(pruner, sessionID, r.held.holders, buildGraph(messages, undefined, { host: OPENCODE }), root)}; an older view is never sent in full while a newer one is hidden)`;
  const alone = [
    r.already && `${r.already} already pruned`,
    r.protected && `${r.protected} protected`,
    r.small && `${r.small} too small to be worth it`,
    held,
  ].filter(Boolean);
  const rest = alone.length ? `; left alone: ${alone.join(", ")}` : "";
  if (r.parts === 0) return `acp sweep: nothing to discard${n === undefined ? " since your last message" : ""}${rest}.`;
  return `acp sweep: ${r.parts} output${r.parts === 1 ? "" : "s"} discarded by you (${fmtK(r.tokens)} tokens) from the next request${rest}.`;
}

/** Every subcommand, for an unknown one's did-you-mean. */
const SUBCOMMANDS = ["help", "context", "stats", "budget", "protected", "sweep", "explain", "restore"];

/** Subcommands that read the session history (the plugin fetches it for them). */
export const NEEDS_HISTORY = /^(context|sweep|budget|explain|restore)\b/;

export interface CommandEnv {
  /** The context limit for /acp budget (the plugin looks it up asynchronously). */
  limit?: BudgetLimit;
  /** The project folder: paths inside it are shown relative to it. */
  root?: string;
}

/** Runs one /acp subcommand; returns the text to show. */
export function runCommand(pruner: AcpPruner, sessionID: string, args: string, messages: Message[], env: CommandEnv = {}): string {
  const [sub, arg] = args.trim().split(/\s+/);
  switch (sub || "help") {
    case "help":
      return HELP;
    case "stats":
      return statsText(pruner, sessionID);
    case "context":
      return contextText(pruner, messages);
    case "protected":
      return protectedText(pruner);
    case "budget":
      return budgetText({ pruner, sessionID, messages, limit: env.limit ?? { source: "none" }, root: env.root });
    case "sweep": {
      const n = arg === undefined ? undefined : Number.parseInt(arg, 10);
      if (n !== undefined && !(n > 0)) return "usage: /acp sweep [n]  (n: how many of the newest tool outputs)";
      return sweepText(pruner, sessionID, messages, n, env.root);
    }
    case "explain":
      return arg ? explainText(pruner, sessionID, arg, messages, env.root) : "usage: /acp explain <id>  (t1bz as in [acp:t1bz], or a part id prt_…)";
    case "restore":
      return arg ? restoreText(pruner, sessionID, arg, messages, env.root) : "usage: /acp restore <id>  (t1bz as in [acp:t1bz], or a part id prt_…)";
    default:
      return `acp: unknown subcommand "${sub}"${didYouMean(sub, SUBCOMMANDS)}.\n${HELP}`;
  }
}
