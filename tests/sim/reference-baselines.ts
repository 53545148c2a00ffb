// Test oracles only: the reference strategies of the published baseline table (docs/simulate.md,
// Baselines), written independently of the engine, so that the metric code can be checked against the
// published figures.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { ExplainEntry, Pruner } from "../../src/engine/api.js";
import type { Message, Part } from "../../src/graph/types.js";
import { promptTokens, renderPrompt } from "../../src/graph/prompt.js";
import { OPENCODE } from "../../src/host/profile.js";

function completedToolParts(messages: Message[]): Part[] {
  return messages.flatMap((m) => m.parts.filter((p) => p.type === "tool" && p.state?.status === "completed"));
}

/** Sets the mark OpenCode's own prune sets; toModelMessages then sends "[Old tool result content cleared]". */
function clearOutput(part: Part): void {
  part.state!.time = { ...part.state!.time, compacted: 1 };
}

function entries(parts: Part[], messageOf: Map<string, string>, rule: string): ExplainEntry[] {
  return parts.map((p) => ({
    partId: p.id,
    messageId: messageOf.get(p.id) ?? "",
    rule,
    action: "clear",
    tokensSaved: Math.ceil(String(p.state?.output ?? "").length / 4),
    tool: p.tool,
    slot: "output" as const,
  }));
}

/**
 * Observation masking, every call: the newest `keep` tool parts keep their output; older completed ones
 * are cleared. Errored parts count towards the window (they are observations too) but cannot be
 * cleared: toModelMessages honours `time.compacted` on completed parts only. This reading reproduces
 * the published breaks (1,014) exactly; counting completed parts only gives 982.
 */
export function mask(keep = 10): Pruner {
  let explained: ExplainEntry[] = [];
  return {
    transform(messages) {
      const parts = messages.flatMap((m) => m.parts.filter((p) => p.type === "tool"));
      const cleared = parts.slice(0, Math.max(0, parts.length - keep)).filter((p) => p.state?.status === "completed");
      cleared.forEach(clearOutput);
      const messageOf = new Map(messages.flatMap((m) => m.parts.map((p) => [p.id, m.info.id] as const)));
      explained = entries(cleared, messageOf, `mask${keep}`);
    },
    systemPrompt: () => "",
    explain: () => explained,
  };
}

/**
 * Anthropic's context editing with its defaults (clear_tool_uses: trigger 100K input tokens, keep 3
 * tool uses). The API applies it to each request on its own: whenever the prompt as sent (measured
 * as the replay measures it, before any clearing) is above the trigger, every tool result but the
 * newest `keep` is cleared; below it nothing is. Errored parts count towards the kept ones, as in
 * `mask`.
 */
export function contextEditing(trigger = 100_000, keep = 3): Pruner {
  let explained: ExplainEntry[] = [];
  return {
    transform(messages) {
      explained = [];
      if (promptTokens(renderPrompt(messages, OPENCODE)) <= trigger) return;
      const parts = messages.flatMap((m) => m.parts.filter((p) => p.type === "tool"));
      const cleared = parts.slice(0, Math.max(0, parts.length - keep)).filter((p) => p.state?.status === "completed");
      cleared.forEach(clearOutput);
      const messageOf = new Map(messages.flatMap((m) => m.parts.map((p) => [p.id, m.info.id] as const)));
      explained = entries(cleared, messageOf, "ctxedit");
    },
    systemPrompt: () => "",
    explain: () => explained,
  };
}

/**
 * Batched masking: outputs older than the newest `keep` tool parts are cleared, but only once those
 * not cleared yet add up to `minTokens` tokens (ceil(chars / 4) of each output); then all of them at
 * once. Sticky: a cleared part stays cleared.
 */
export function batchMask(keep = 10, minTokens = 20_000): Pruner {
  const cleared = new Set<string>();
  let messageOf = new Map<string, string>();
  return {
    transform(messages) {
      const parts = messages.flatMap((m) => m.parts.filter((p) => p.type === "tool"));
      const old = parts.slice(0, Math.max(0, parts.length - keep)).filter((p) => p.state?.status === "completed" && !cleared.has(p.id));
      const tokens = old.reduce((sum, p) => sum + Math.ceil(String(p.state?.output ?? "").length / 4), 0);
      if (tokens >= minTokens) for (const p of old) cleared.add(p.id);
      for (const p of parts) if (cleared.has(p.id)) clearOutput(p);
      messageOf = new Map(messages.flatMap((m) => m.parts.map((p) => [p.id, m.info.id] as const)));
    },
    systemPrompt: () => "",
    explain: () => [...cleared].map((partId) => ({ partId, messageId: messageOf.get(partId) ?? "", rule: "batch10", action: "clear", tokensSaved: 0, slot: "output" as const })),
  };
}

export const PRUNE_PROTECT = 40_000;
export const PRUNE_MINIMUM = 20_000;
const PROTECTED_TOOLS = ["skill"];

/**
 * OpenCode's own prune (compaction.ts, 1.18.33), evaluated whenever the context holds a user message not
 * evaluated before. Sticky: a cleared part stays cleared. With `stateFile`, the state is read from and
 * written to disk, so a new instance per call (restart mode) continues where the last one stopped.
 */
export function native(stateFile?: string): Pruner {
  let state = { cleared: [] as string[], lastUserId: "" };
  if (stateFile && existsSync(stateFile)) state = JSON.parse(readFileSync(stateFile, "utf8"));
  let messageOf = new Map<string, string>();

  const applySticky = (messages: Message[]) => {
    const cleared = new Set(state.cleared);
    for (const part of completedToolParts(messages)) if (cleared.has(part.id)) clearOutput(part);
  };

  return {
    transform(messages) {
      messageOf = new Map(messages.flatMap((m) => m.parts.map((p) => [p.id, m.info.id] as const)));
      applySticky(messages);
      const lastUser = [...messages].reverse().find((m) => m.info.role === "user");
      if (!lastUser || lastUser.info.id === state.lastUserId) return;
      state.lastUserId = lastUser.info.id;
      state.cleared.push(...nativePruneCandidates(messages));
      applySticky(messages);
      if (stateFile) writeFileSync(stateFile, JSON.stringify(state));
    },
    systemPrompt: () => "",
    explain: () =>
      state.cleared.map((partId) => ({ partId, messageId: messageOf.get(partId) ?? "", rule: "native", action: "clear", tokensSaved: 0, slot: "output" as const })),
  };
}

/** The parts OpenCode's prune would mark, or none when less than PRUNE_MINIMUM tokens would be freed. */
export function nativePruneCandidates(messages: Message[]): string[] {
  let turns = 0;
  let total = 0;
  let pruned = 0;
  const candidates: string[] = [];
  walk: for (let m = messages.length - 1; m >= 0; m--) {
    const message = messages[m];
    if (message.info.role === "user") turns++;
    if (turns < 2) continue;
    if (message.info.role === "assistant" && message.info.summary) break;
    for (let p = message.parts.length - 1; p >= 0; p--) {
      const part = message.parts[p];
      if (part.type !== "tool" || part.state?.status !== "completed") continue;
      if (PROTECTED_TOOLS.includes(part.tool ?? "")) continue;
      if (part.state.time?.compacted) break walk;
      const estimate = Math.round(String(part.state.output ?? "").length / 4);
      total += estimate;
      if (total > PRUNE_PROTECT) {
        pruned += estimate;
        candidates.push(part.id);
      }
    }
  }
  return pruned > PRUNE_MINIMUM ? candidates : [];
}
