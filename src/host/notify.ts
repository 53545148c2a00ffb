// Prune notifications (pruneNotification: off | minimal | detailed): what the pruner committed
// during a turn, summed up once the turn is over.
//
// When: the plugin posts the text on the host's `session.idle` event, i.e. after the agent loop
// of the turn has ended, and only when the turn committed new prunes. Posting from inside the
// transform would store a user message while the loop runs: the loop would then see it as the
// newest user message and could carry on (or switch agent) because of it. After the loop it is a
// plain ignored message: the UI shows it, the provider never receives it, and the engine does not
// count it as a turn.
import type { CallResult } from "../engine/call.js";
import type { SessionState } from "../engine/state.js";
import type { Message, Part } from "../graph/types.js";
import { callLabel } from "./reminders.js";

export type NotificationMode = "off" | "minimal" | "detailed";

type Kind = "text" | "reasoning" | "tool";

export interface PruneEntry {
  partId: string;
  slot: string;
  kind: Kind;
  rule: string;
  action: string;
  tokens: number;
  /** Commit call number: a re-decided slot (restored, then pruned again) counts anew. */
  call: number;
  label: string;
}

interface PartInfo {
  type: string;
  label: string;
}

interface Track {
  /** Every decision of the session as last seen, by `partId:slot`. */
  known: Map<string, PruneEntry>;
  /** Decisions present when the session was first seen in this process: not news. */
  baseline?: Set<string>;
  /** Parts of the current request, indexed before the transform rewrites or drops them. */
  parts?: Map<string, PartInfo>;
  /** Committed since the last notification. */
  fresh: PruneEntry[];
}

const ICON: Record<Kind, string> = { text: "💬", reasoning: "🧠", tool: "⚙️" };
const ORDER: Kind[] = ["text", "reasoning", "tool"];

/** 7.5K, 16K, 83.1K, 950 — the status-line number format. */
export function fmtK(n: number): string {
  if (n < 1000) return String(Math.round(n));
  return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}K`;
}

/** Part types whose prunes are worth telling: what the provider receives. */
const REPORTED = new Set(["text", "reasoning", "tool", "file"]);
const kindOf = (type: string | undefined): Kind => (type === "tool" ? "tool" : type === "reasoning" ? "reasoning" : "text");

function keysOf(state: SessionState): Set<string> {
  const keys = new Set<string>();
  for (const [partId, slots] of Object.entries(state.decisions ?? {})) for (const [slot, d] of Object.entries(slots ?? {})) if (d) keys.add(`${partId}:${slot}`);
  return keys;
}

/** `「 ⚙️ 39(83.1K) ▼ 」`: parts (not slots) and tokens per kind. */
export function statusLine(entries: PruneEntry[]): string {
  const by = new Map<Kind, { parts: Set<string>; tokens: number }>();
  for (const e of entries) {
    const k = by.get(e.kind) ?? { parts: new Set<string>(), tokens: 0 };
    k.parts.add(e.partId);
    k.tokens += e.tokens;
    by.set(e.kind, k);
  }
  const items = ORDER.filter((k) => by.has(k)).map((k) => `${ICON[k]} ${by.get(k)!.parts.size}(${fmtK(by.get(k)!.tokens)}) ▼`);
  return `「 ${items.join(" + ")} 」`;
}

/** The notification text for the prunes `fresh` of one turn, `all` being the whole session's. */
export function notificationText(mode: NotificationMode, fresh: PruneEntry[], all: PruneEntry[], pending?: Pick<CallResult, "pending" | "pendingTokens">): string | undefined {
  if (mode === "off" || fresh.length === 0) return undefined;
  const sameAsSession = all.length === fresh.length;
  const head = `${statusLine(fresh)} acp: pruned this turn${sameAsSession ? "" : ` · session ${statusLine(all)}`}`;
  if (mode === "minimal") return head;
  const rules = new Map<string, PruneEntry[]>();
  for (const e of fresh) rules.set(e.rule, [...(rules.get(e.rule) ?? []), e]);
  const rows = [...rules].sort((a, b) => sum(b[1]) - sum(a[1]));
  const w = Math.max(...rows.map(([r]) => r.length));
  const lines = [head];
  for (const [rule, es] of rows) {
    const labels = [...new Set(es.map((e) => e.label))];
    const shown = labels.slice(0, 3).join(", ") + (labels.length > 3 ? `, +${labels.length - 3} more` : "");
    const parts = new Set(es.map((e) => e.partId)).size;
    lines.push(`  ${rule.padEnd(w)}  ${String(parts).padStart(3)} ${parts === 1 ? "part " : "parts"}  ${fmtK(sum(es)).padStart(6)}  ${shown}`);
  }
  if (pending && pending.pending > 0)
    lines.push(`  pending: ${pending.pending} more prune${pending.pending === 1 ? "" : "s"} (~${fmtK(pending.pendingTokens)}), applied together once they free enough (to spare the prompt cache)`);
  return lines.join("\n");
}

const sum = (es: PruneEntry[]) => es.reduce((s, e) => s + e.tokens, 0);

/** Collects prunes per session across the model calls of a turn. One instance per plugin. */
export class PruneNotifier {
  private readonly sessions = new Map<string, Track>();

  /** `root`: the project folder, so that paths inside it show relative to it. */
  constructor(
    readonly mode: NotificationMode,
    private readonly root?: string,
  ) {}

  get enabled(): boolean {
    return this.mode === "minimal" || this.mode === "detailed";
  }

  /** Before the transform: first sight of a session sets the baseline; indexes the request's parts. */
  before(sessionID: string, state: SessionState, messages: Message[]): void {
    if (!this.enabled) return;
    let t = this.sessions.get(sessionID);
    if (!t) this.sessions.set(sessionID, (t = { known: new Map(), baseline: keysOf(state), fresh: [] }));
    const parts = new Map<string, PartInfo>();
    for (const m of messages) for (const p of Array.isArray(m?.parts) ? m.parts : []) if (p && typeof p.id === "string" && !parts.has(p.id)) parts.set(p.id, info(p, this.root));
    t.parts = parts;
  }

  /** After the transform: records decisions that are new since the last look. */
  after(sessionID: string, state: SessionState): void {
    const t = this.sessions.get(sessionID);
    if (!this.enabled || !t) return;
    const present = new Set<string>();
    for (const [partId, slots] of Object.entries(state.decisions ?? {})) {
      for (const [slot, d] of Object.entries(slots ?? {})) {
        if (!d) continue;
        const key = `${partId}:${slot}`;
        present.add(key);
        const prev = t.known.get(key);
        if (prev && prev.rule === d.rule && prev.call === d.call) continue;
        const p = t.parts?.get(partId);
        if (!REPORTED.has(p?.type ?? "") || !(d.tokens > 0)) continue; // markers the provider never sees
        const entry: PruneEntry = { partId, slot, kind: kindOf(p?.type), rule: d.rule, action: d.action, tokens: d.tokens, call: d.call, label: p?.label ?? partId };
        t.known.set(key, entry);
        if (!t.baseline?.has(key)) t.fresh.push(entry);
      }
    }
    for (const key of [...t.known.keys()]) if (!present.has(key)) t.known.delete(key);
    t.fresh = t.fresh.filter((e) => t.known.get(`${e.partId}:${e.slot}`) === e);
    t.baseline = undefined;
    t.parts = undefined;
  }

  /** The text to post now (once per batch of prunes), or undefined when there is nothing new. */
  take(sessionID: string, pending?: Pick<CallResult, "pending" | "pendingTokens">): string | undefined {
    const t = this.sessions.get(sessionID);
    if (!t || t.fresh.length === 0) return undefined;
    const fresh = t.fresh;
    t.fresh = [];
    return notificationText(this.mode, fresh, [...t.known.values()], pending);
  }

  forget(sessionID: string): void {
    this.sessions.delete(sessionID);
  }
}

function info(p: Part, root: string | undefined): PartInfo {
  return { type: p.type, label: p.type === "tool" ? callLabel(p, root) : p.type };
}
