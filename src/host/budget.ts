// /acp budget: how full the model's context window is, and what to do about it.
//
// Usage is what the provider reported for the newest model call (the last assistant message's
// tokens: input + cache read + cache write + output), not an estimate. The limit comes from the
// host's model list (v1 client: config.providers → provider.models[id].limit.context); the
// acp.jsonc key `contextLimit`, when set, overrides it. The text says which one it used.
import type { AcpPruner } from "../engine/pruner.js";
import { cacheExpiredSince, type SessionState } from "../engine/state.js";
import type { Message } from "../graph/types.js";
import { fmtK } from "./notify.js";
import { outputLines, prunableOutputs } from "./reminders.js";

export interface Usage {
  /** input + cache.read + cache.write + output of the newest model call. */
  total: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  providerID?: string;
  modelID?: string;
}

export interface ModelLimit {
  context: number;
  /** Max output tokens, when the model list gives it. */
  output?: number;
}

export interface BudgetLimit {
  context?: number;
  output?: number;
  source: "model" | "config" | "none";
  /** The model list's limit when `contextLimit` overrode it. */
  modelContext?: number;
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/** The newest assistant message that reports token usage (compaction summaries skipped). */
export function lastUsage(messages: Message[]): Usage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const info = messages[i]?.info;
    if (info?.role !== "assistant" || info.summary === true) continue;
    const t = info.tokens as { input?: number; output?: number; cache?: { read?: number; write?: number } } | undefined;
    if (!t) continue;
    const u = { input: num(t.input), output: num(t.output), cacheRead: num(t.cache?.read), cacheWrite: num(t.cache?.write) };
    const total = u.input + u.output + u.cacheRead + u.cacheWrite;
    if (total === 0) continue; // an aborted or still-running call
    return { total, ...u, providerID: typeof info.providerID === "string" ? info.providerID : undefined, modelID: typeof info.modelID === "string" ? info.modelID : undefined };
  }
  return undefined;
}

/**
 * The model's limits from the host (`client.config.providers()`, v1 SDK), or undefined when the
 * host does not know the model or the call fails.
 */
export async function modelLimit(client: any, providerID: string | undefined, modelID: string | undefined): Promise<ModelLimit | undefined> {
  if (!providerID || !modelID || typeof client?.config?.providers !== "function") return undefined;
  try {
    const res = await client.config.providers();
    const providers: any[] = (res?.data ?? res)?.providers ?? [];
    const model = providers.find((p) => p?.id === providerID)?.models?.[modelID];
    const context = num(model?.limit?.context);
    return context ? { context, output: num(model?.limit?.output) || undefined } : undefined;
  } catch {
    return undefined;
  }
}

/** Which limit /acp budget uses: `contextLimit` from acp.jsonc wins over the model list. */
export function chooseLimit(model: ModelLimit | undefined, configLimit: unknown): BudgetLimit {
  const cfg = num(configLimit);
  if (cfg) return { context: cfg, output: model?.output, source: "config", modelContext: model?.context };
  if (model) return { context: model.context, output: model.output, source: "model" };
  return { source: "none" };
}

/**
 * Share of the room OpenCode leaves before it compacts (context limit minus max output) at which
 * the plugin applies every pending prune at once. The engine counts the history at chars/4 without
 * the system prompt and tool definitions, so the margin covers those and a tokenizer that counts
 * more than chars/4.
 */
export const PRESSURE_SHARE = 0.8;

/**
 * The prompt size (estimated tokens) from which pending prunes apply at once (TransformOptions
 * pressureTokens): some way before OpenCode would compact the session, which loses far more than
 * re-writing the cached prompt once. 0 when the limit is unknown.
 */
export function compactionPressure(limit: BudgetLimit): number {
  if (!limit.context) return 0;
  const room = limit.output && limit.output < limit.context ? limit.context - limit.output : limit.context;
  return Math.floor(room * PRESSURE_SHARE);
}

/**
 * Why prunes left waiting go with the next request, when they do: the provider's cache has expired
 * since the last one (undefined: it has not). /acp stats and /acp budget say it in the same words.
 */
export function expiredWaitingNote(pruner: AcpPruner, state: SessionState): string | undefined {
  if (!cacheExpiredSince(state, pruner.resolved.commit.cacheTtlMinutes, Date.now())) return undefined;
  return "the provider's cache has expired since the last request, so they go with the next one";
}

export interface BudgetInput {
  pruner: AcpPruner;
  sessionID: string;
  /** The stored session history. */
  messages: Message[];
  limit: BudgetLimit;
  /** The project folder: paths inside it are shown relative to it. */
  root?: string;
}

const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;

export function budgetText({ pruner, sessionID, messages, limit, root }: BudgetInput): string {
  const usage = lastUsage(messages);
  const state = pruner.state(sessionID); // ids and decisions (loaded from disk in a fresh process)
  const entries = pruner.explain(sessionID);
  const saved = entries.reduce((s, e) => s + e.tokensSaved, 0);
  const waiting = pruner.waiting(sessionID); // also what a request of an earlier process left
  const idByPart = new Map(Object.entries(state.ids ?? {}).map(([id, partId]) => [partId, id]));
  const outputs = prunableOutputs(messages, (p) => idByPart.get(p.id), (id) => Boolean(state.decisions[id]?.output), root);

  const lines: string[] = [];
  const model = usage?.providerID && usage.modelID ? `${usage.providerID}/${usage.modelID}` : "this session's model";
  const source =
    limit.source === "config"
      ? `limit from contextLimit in acp.jsonc${limit.modelContext ? `; the model list says ${fmtK(limit.modelContext)}` : ""}`
      : limit.source === "model"
        ? `limit of ${model} from OpenCode's model list`
        : "";
  if (!usage) lines.push(`acp budget: no model call has reported its token usage in this session yet.`);
  else if (limit.context) lines.push(`acp budget: ${fmtK(usage.total)} of ${fmtK(limit.context)} tokens (${pct(usage.total, limit.context)}) used by the last request (${source})`);
  else lines.push(`acp budget: ${fmtK(usage.total)} tokens used by the last request; the context limit of ${model} is unknown (set "contextLimit" in acp.jsonc)`);
  if (usage) lines.push(`  input ${fmtK(usage.input)} · cache read ${fmtK(usage.cacheRead)} · cache write ${fmtK(usage.cacheWrite)} · output ${fmtK(usage.output)}`);
  const partsPruned = new Set(entries.filter((e) => e.tokensSaved > 0).map((e) => e.partId)).size; // not markers the provider never sees
  lines.push(`  pruning: ${partsPruned ? `${partsPruned} part${partsPruned === 1 ? "" : "s"} pruned, ${fmtK(saved)} tokens saved on every request (preset ${pruner.resolved.presetName})` : `nothing pruned yet (preset ${pruner.resolved.presetName})`}`);
  if (waiting) {
    const expired = expiredWaitingNote(pruner, state);
    const when = expired ? `: ${expired}` : ", applied together once they free enough (to spare the prompt cache)";
    lines.push(`  waiting: ${waiting.parts} more prune${waiting.parts === 1 ? "" : "s"} (~${fmtK(waiting.tokens)})${when}`);
  }
  if (limit.context && limit.output && limit.output < limit.context) lines.push(`  OpenCode compacts the session automatically near ${fmtK(limit.context - limit.output)} (context limit minus max output)`);
  if (outputs.length) {
    lines.push(`  largest tool outputs still sent (ask the agent to discard what it no longer needs, e.g. "discard ${outputs[0].id}"):`);
    lines.push(...outputLines(outputs).map((l) => `  ${l}`));
  }

  const used = usage && limit.context ? usage.total / limit.context : undefined;
  lines.push("recommendations:");
  if (used === undefined) lines.push("  - run /acp context for an estimate from the history (chars/4)");
  else if (used < 0.5) lines.push("  - the context is healthy; nothing to do");
  else if (used < 0.7) lines.push("  - fine for now; /acp sweep discards the tool outputs since your last message if a task is done");
  else {
    if (used >= 0.9) lines.push("  - the context is nearly full: OpenCode will compact (summarise) the session soon");
    lines.push("  - /acp sweep discards the tool outputs since your last message (protected tools and files stay)");
    if (pruner.resolved.presetName !== "compact") lines.push('  - "preset": "compact" in .opencode/acp.jsonc prunes more aggressively (takes effect on restart)');
    if (outputs.length) lines.push(`  - ask the agent to discard large outputs it is done with: ${outputs.slice(0, 3).map((o) => o.id).join(", ")}`);
    lines.push("  - /compact summarises the session now if that is not enough");
  }
  return lines.join("\n");
}
