// Todo reminder and automata reflection: pure functions of the request copy the transform hook
// hands us (after pruning) and the configuration.
//
// A "turn" here is one model call (one assistant message; compaction summaries excluded). In a
// long agentic run the user speaks once and the agent makes dozens of calls, so counting user
// messages would never fire; counting calls does, and a chat of short answers still gets there.
//
// Placement and the prompt cache: a reminder is a synthetic user message appended after the
// newest message of the request, and only on the call where it is due. Earlier messages are never
// touched, so the cached prefix stays byte-identical; the reminder is the last block of one
// request and is gone from the next (the new step takes its place), so at most one reminder is
// ever in context and no older position carries it. Being its own message (not a part added to the
// last message) leaves the host's second-to-last cache marker on the real last message, so the
// next call still finds that prefix in the cache.
import { isAbsolute, parse, relative, sep } from "node:path";
import { sentByUser, tokensOf, typedByUser } from "../graph/graph.js";
import { clearedByHost } from "../graph/prompt.js";
import type { Message, Part } from "../graph/types.js";
import { defaultConfig } from "../rules/config.js";
import type { AcpConfig } from "../rules/types.js";
import { PRUNE_TOOL_NAME } from "./prune-tool.js";

/** The host's todo tool. Tool names live only in src/host. */
export const TODO_TOOL = "todowrite";
/** Marks our synthetic message so a repeated hook pass over the same array can remove it first. */
export const REMINDER_MARK = "acpReminder";
/** How many of the largest prunable outputs a reminder lists. */
export const LIST_OUTPUTS = 5;

export interface ReminderSettings {
  todo: { enabled: boolean; initialTurns: number; repeatTurns: number; stuckTaskTurns: number };
  automata: { enabled: boolean; initialTurns: number };
  /** The context_prune tool is on (outputs carry [acp:tN] ids). */
  tool: boolean;
}


const posInt = (v: unknown, d: number) => (typeof v === "number" && Number.isFinite(v) && v >= 1 ? Math.floor(v) : d);

/** Settings from acp.jsonc; a layer that sets only some keys of an object keeps the defaults of the rest. */
export function reminderSettings(config: Partial<AcpConfig>): ReminderSettings {
  // the shipped defaults (presets/defaults.jsonc) fill in what a layer left out
  const shipped = defaultConfig();
  const DEFAULTS = { todo: shipped.todoReminder as ReminderSettings["todo"], automata: shipped.automata as ReminderSettings["automata"] };
  const t = (config.todoReminder ?? {}) as Partial<ReminderSettings["todo"]>;
  const a = (config.automata ?? {}) as Partial<ReminderSettings["automata"]>;
  const on = config.enabled !== false;
  return {
    todo: {
      enabled: on && t.enabled !== false,
      initialTurns: posInt(t.initialTurns, DEFAULTS.todo.initialTurns),
      repeatTurns: posInt(t.repeatTurns, DEFAULTS.todo.repeatTurns),
      stuckTaskTurns: posInt(t.stuckTaskTurns, DEFAULTS.todo.stuckTaskTurns),
    },
    automata: { enabled: on && a.enabled !== false, initialTurns: posInt(a.initialTurns, DEFAULTS.automata.initialTurns) },
    tool: on && config.tool !== false,
  };
}

export interface Todo {
  id?: string;
  content: string;
  status: string;
  priority?: string;
}

export interface StuckTask {
  todo: Todo;
  /** Model calls since the call that set it in_progress. */
  turns: number;
}

export interface SessionFacts {
  /** Model calls in the visible history. */
  turns: number;
  /** Model calls since the last todo update (all of them when there was none). */
  sinceTodo: number;
  /** The latest todo list, undefined when none is visible. */
  todos?: Todo[];
  stuck: StuckTask[];
  /** A user message contains the word "automata". */
  automata: boolean;
  /** Model calls since the last user message. */
  sinceUser: number;
}

const isReminder = (m: Message) => Array.isArray(m?.parts) && m.parts.length > 0 && m.parts.every((p) => p?.metadata?.[REMINDER_MARK] === true);

/** A model call: an assistant message that is not a compaction summary. */
const isStep = (m: Message) => m?.info?.role === "assistant" && m.info.summary !== true;

/** Text the user typed: not ignored (our notices), not synthetic (host or plugin additions). */
function userText(m: Message): string {
  if (m?.info?.role !== "user" || !Array.isArray(m.parts) || isReminder(m)) return "";
  return m.parts
    .filter(typedByUser)
    .map((p) => p.text)
    .join("\n");
}

/** A user message the provider receives (the engine's definition, minus our own reminders). */
const isRealUser = (m: Message) => sentByUser(m) && !isReminder(m);

function todosOf(part: Part): Todo[] | undefined {
  const todos = (part.state?.input as { todos?: unknown } | undefined)?.todos;
  if (!Array.isArray(todos)) return undefined;
  return todos
    .filter((t): t is Record<string, unknown> => Boolean(t) && typeof t === "object")
    .map((t) => ({
      id: typeof t.id === "string" || typeof t.id === "number" ? String(t.id) : undefined,
      content: typeof t.content === "string" ? t.content : String(t.content ?? ""),
      status: typeof t.status === "string" ? t.status : "pending",
      priority: typeof t.priority === "string" ? t.priority : undefined,
    }));
}

const todoKey = (t: Todo) => t.id ?? t.content;
const AUTOMATA = /\bautomata\b/i;

export function sessionFacts(messages: Message[]): SessionFacts {
  let turns = 0;
  let lastTodoTurn: number | undefined;
  let todos: Todo[] | undefined;
  let lastUserTurn = 0;
  let automata = false;
  /** todo key → the turn whose call set it in_progress */
  const inProgressSince = new Map<string, number>();
  for (const m of messages) {
    if (!m?.info) continue;
    if (isStep(m)) {
      turns++;
      for (const p of Array.isArray(m.parts) ? m.parts : []) {
        if (p?.type !== "tool" || p.tool !== TODO_TOOL || p.state?.status !== "completed") continue;
        const list = todosOf(p);
        if (!list) continue;
        todos = list;
        lastTodoTurn = turns;
        const keep = new Set<string>();
        for (const t of list) {
          if (t.status !== "in_progress") continue;
          keep.add(todoKey(t));
          if (!inProgressSince.has(todoKey(t))) inProgressSince.set(todoKey(t), turns);
        }
        for (const k of [...inProgressSince.keys()]) if (!keep.has(k)) inProgressSince.delete(k);
      }
    } else if (isRealUser(m)) {
      lastUserTurn = turns;
      if (AUTOMATA.test(userText(m))) automata = true;
    }
  }
  const stuck: StuckTask[] = [];
  for (const t of todos ?? []) {
    const since = t.status === "in_progress" ? inProgressSince.get(todoKey(t)) : undefined;
    if (since !== undefined) stuck.push({ todo: t, turns: turns - since });
  }
  return { turns, sinceTodo: turns - (lastTodoTurn ?? 0), todos, stuck, automata, sinceUser: turns - lastUserTurn };
}

/** Due at `start`, then every `every` calls after it. */
const dueAt = (n: number, start: number, every: number) => n >= start && (n - start) % every === 0;

export interface PrunableOutput {
  /** The id the model cites, e.g. "t12". */
  id: string;
  partId: string;
  tokens: number;
  /** Tool and its main argument, e.g. `read src/a.ts`. */
  label: string;
}

const LABEL_KEYS = ["filePath", "path", "command", "pattern", "url", "query", "description"];

const PATH_KEYS = new Set(["filePath", "path"]);

/**
 * A path inside `root` (the project folder) relative to it, as the user knows it; anything else as is.
 * Only the user's views (commands, notices) pass a root: what the model reads keeps its paths.
 */
export function pathIn(root: string | undefined, path: string): string {
  // the file system's root (OpenCode's worktree outside git) is no project folder
  if (!root || parse(root).root === root || !isAbsolute(path)) return path;
  const rel = relative(root, path);
  return rel && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel) ? rel : path;
}

/** "read src/a.ts": the tool and its main argument; `root` makes a path relative to the project (pathIn). */
export function callLabel(part: Part, root?: string): string {
  const input = (part.state?.input ?? {}) as Record<string, unknown>;
  const key = LABEL_KEYS.find((k) => typeof input[k] === "string") ?? Object.keys(input).find((k) => typeof input[k] === "string");
  let arg = key ? String(input[key]).replace(/\s+/g, " ").trim() : "";
  if (key && PATH_KEYS.has(key)) arg = pathIn(root, arg);
  if (arg.length > 60) arg = key && PATH_KEYS.has(key) ? `…${arg.slice(-59)}` : `${arg.slice(0, 59)}…`;
  return arg ? `${part.tool} ${arg}` : String(part.tool ?? part.type);
}

/** The tags ending a tool output: the ids of reasoning it carries, then its own (src/engine/ids.ts). */
const TAG_AT_END = /\n(?:\[acp:r[0-9a-z]+\] )*\[acp:(t[0-9a-z]+)\]$/;

/** The id tag the transform appended to a tool output, if any. */
export function tagInOutput(part: Part): string | undefined {
  const out = part.state?.output;
  return typeof out === "string" ? TAG_AT_END.exec(out)?.[1] : undefined;
}

/**
 * Completed tool outputs that carry an id and are not pruned, largest first. `idOf` finds a
 * part's id (the tag in a transformed copy, or the session state for stored history).
 */
export function prunableOutputs(messages: Message[], idOf: (part: Part) => string | undefined, isPruned: (partId: string) => boolean = () => false, root?: string): PrunableOutput[] {
  const out: PrunableOutput[] = [];
  for (const m of messages) {
    for (const p of Array.isArray(m?.parts) ? m.parts : []) {
      if (p?.type !== "tool" || p.state?.status !== "completed" || typeof p.state.output !== "string" || clearedByHost(p)) continue;
      const id = idOf(p);
      if (!id || isPruned(p.id)) continue;
      const text = p.state.output.replace(TAG_AT_END, "");
      out.push({ id, partId: p.id, tokens: tokensOf(text.length), label: callLabel(p, root) });
    }
  }
  return out.sort((a, b) => b.tokens - a.tokens);
}

const fmt = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)}K` : String(n));
const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? "" : "s"}`;

export function outputLines(list: PrunableOutput[], n = LIST_OUTPUTS): string[] {
  const shown = list.slice(0, n);
  const w = Math.max(0, ...shown.map((o) => o.id.length));
  return shown.map((o) => `  ${o.id.padEnd(w)}  ${fmt(o.tokens).padStart(6)} tokens  ${o.label}`);
}

function todoSection(f: SessionFacts, s: ReminderSettings, stuck: StuckTask[], outputs: PrunableOutput[]): string[] {
  const lines: string[] = [];
  const why = f.todos ? `${plural(f.sinceTodo, "model call")} since the todo list was last updated` : `${plural(f.sinceTodo, "model call")} without a todo list`;
  lines.push(`🔖 Checkpoint from the opencode-acp plugin (not from the user): ${why}.`);
  const todos = f.todos ?? [];
  if (!f.todos) lines.push(`If this is multi-step work, write a todo list with ${TODO_TOOL} and keep it current.`);
  else {
    const count = (st: string) => todos.filter((t) => t.status === st).length;
    const open = todos.filter((t) => t.status === "pending" || t.status === "in_progress");
    lines.push(`Todo list: ${count("in_progress")} in progress, ${count("pending")} pending, ${count("completed")} completed${count("cancelled") ? `, ${count("cancelled")} cancelled` : ""}.`);
    for (const st of stuck)
      lines.push(`⚠ "${st.todo.content}" has been in progress for ${plural(st.turns, "model call")}. If it is blocked, say what blocks it, split it into smaller tasks or mark the parts that are done; otherwise finish it.`);
    if (open.length) lines.push(`Update the list with ${TODO_TOOL}: mark finished tasks completed and the task you work on in_progress.`);
    else lines.push(`Every task is done. If more work remains, add it with ${TODO_TOOL}; otherwise wrap up.`);
  }
  if (s.tool && outputs.length) {
    lines.push(`Largest tool outputs in context; discard or distill the ones you no longer need with ${PRUNE_TOOL_NAME}:`);
    lines.push(...outputLines(outputs));
  }
  return lines;
}

/** `prune`: the request shows ids the model can prune by (the prune tool is on and ids have started). */
function automataSection(f: SessionFacts, prune: boolean): string[] {
  return [
    `🔄 Reflection (automata mode, ${plural(f.sinceUser, "model call")} since the user's last message):`,
    `1. Review your progress against your todo list: mark finished tasks, re-prioritise, and add objectives you discovered (fixes, tests, refactors, optimisations).`,
    ...(prune ? [`2. Prune tool outputs you no longer need with ${PRUNE_TOOL_NAME}.`, `3. Then continue working on your own; stop only when the work is done or you are blocked.`] : [`2. Then continue working on your own; stop only when the work is done or you are blocked.`]),
  ];
}

export interface ReminderOptions {
  /** True for a part whose output the pruner already replaced (its id tag stays). */
  isPruned?: (partId: string) => boolean;
  /**
   * Facts taken from the copy before pruning. Pass them when rules may prune or drop older todo
   * calls, so stuck-task tracking still sees every list.
   */
  facts?: SessionFacts;
  /**
   * The request shows [acp:…] ids (the prune tool's instructions are in it, or in the system
   * prompt). Until then no reminder asks the model to prune. Default: some tool output carries an id.
   */
  idsShown?: boolean;
}

/** The reminder due on this call, or undefined. `messages` is the request copy after pruning. */
export function reminderText(messages: Message[], settings: ReminderSettings, options: ReminderOptions = {}): string | undefined {
  const f = options.facts ?? sessionFacts(messages.filter((m) => !isReminder(m)));
  const t = settings.todo;
  const todoDue = t.enabled && f.turns > 0 && dueAt(f.sinceTodo, t.initialTurns, t.repeatTurns);
  const stuck = t.enabled ? f.stuck.filter((x) => x.turns >= t.stuckTaskTurns) : [];
  const stuckDue = stuck.some((x) => dueAt(x.turns, t.stuckTaskTurns, t.repeatTurns));
  const a = settings.automata;
  const automataDue = a.enabled && f.automata && f.sinceUser > 0 && dueAt(f.sinceUser, a.initialTurns, a.initialTurns);
  if (!todoDue && !stuckDue && !automataDue) return undefined;
  const sections: string[][] = [];
  if (todoDue || stuckDue) {
    const outputs = settings.tool ? prunableOutputs(messages, tagInOutput, options.isPruned) : [];
    sections.push(todoSection(f, settings, stuck, outputs));
  }
  if (automataDue) sections.push(automataSection(f, settings.tool && (options.idsShown ?? prunableOutputs(messages, tagInOutput).length > 0)));
  return `<system-reminder>\n${sections.map((s) => s.join("\n")).join("\n\n")}\n</system-reminder>`;
}

/** Removes reminders a previous pass over this same array added. Returns how many. */
export function stripReminders(messages: Message[]): number {
  let removed = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i] && isReminder(messages[i])) {
      messages.splice(i, 1);
      removed++;
    }
  }
  return removed;
}

/** Appends `text` as a synthetic user message after the newest message. */
export function insertReminder(messages: Message[], text: string): Message | undefined {
  const last = messages[messages.length - 1];
  if (!last?.info?.sessionID) return undefined;
  const sessionID = last.info.sessionID;
  const lastUser = [...messages].reverse().find(isRealUser);
  const id = `${last.info.id}_acp_reminder`;
  const time = (last.info.time as { created?: number } | undefined)?.created;
  const info: Message["info"] = { id, sessionID, role: "user", time: { created: typeof time === "number" ? time : 0 } };
  if (lastUser?.info.agent) info.agent = lastUser.info.agent;
  if (lastUser?.info.model) info.model = lastUser.info.model;
  const msg: Message = { info, parts: [{ id: `${id}_text`, sessionID, messageID: id, type: "text", text, synthetic: true, metadata: { [REMINDER_MARK]: true } }] };
  messages.push(msg);
  return msg;
}

/** Strips stale reminders, then adds the one due on this call (if any). Returns its text. */
export function applyReminders(messages: Message[], settings: ReminderSettings, options: ReminderOptions = {}): string | undefined {
  stripReminders(messages);
  if (!settings.todo.enabled && !settings.automata.enabled) return undefined;
  const text = reminderText(messages, settings, options);
  if (text) insertReminder(messages, text);
  return text;
}
