// The OpenCode plugin entry. This module exports the plugin function only: the host treats
// every export as a plugin and drops the whole module if one is not.
import type { Plugin } from "@opencode-ai/plugin";
import { join } from "node:path";
import { homedir } from "node:os";
import type { AcpPruner } from "../engine/pruner.js";
import type { Message } from "../graph/types.js";
import { sentByUser } from "../graph/graph.js";
import { formatProblem, type Problem } from "../rules/problems.js";
import { NEEDS_HISTORY, runCommand } from "./commands.js";
import { pruneTool, PRUNE_TOOL_NAME } from "./prune-tool.js";
import { OPENCODE } from "./profile.js";
import { createLogger } from "./log.js";
import { applyReminders, reminderSettings, sessionFacts, stripReminders } from "./reminders.js";
import { PruneNotifier } from "./notify.js";
import { chooseLimit, compactionPressure, lastUsage, modelLimit, type ModelLimit } from "./budget.js";
import { beforeFailing, commandHandled, handledMessage, NoticeWatch } from "./handled.js";
import { LiveSetup } from "./live-config.js";
import { undoGuard } from "./undo.js";

/** Problems listed in the notice; a broken folder of rule files can hold thousands. */
const NOTICE_PROBLEMS = 20;

function problemsText(problems: Problem[]): string {
  const shown = problems.slice(0, NOTICE_PROBLEMS).map(formatProblem);
  if (problems.length > NOTICE_PROBLEMS) shown.push(`… and ${problems.length - NOTICE_PROBLEMS} more (npx acp rules lint lists them all)`);
  return `acp: configuration problems, using defaults where needed:\n${shown.join("\n")}`;
}

const AcpPlugin: Plugin = async (input) => {
  const dataHome = process.env.XDG_DATA_HOME ?? join(homedir(), ".local", "share");
  const pluginDir = join(dataHome, "opencode", "storage", "plugin", "acp");
  // Start-up never throws: loading reports every problem it knows of; anything else leaves the defaults.
  let log = createLogger(join(pluginDir, "log"), false);
  // all-time stats in a folder of their own: nothing there can clash with a `<session>.json`
  const statsFile = join(pluginDir, "all-time", "stats.json");
  const options = { host: OPENCODE, stateDir: pluginDir, statsFile, manualTool: PRUNE_TOOL_NAME, onError: (e: unknown, where: string) => log.error(where, e) };
  // The host registers tools once: whether context_prune exists is settled at start-up.
  let toolOn: boolean | undefined;
  // what the user sees names files as the agent's tools do, from the folder OpenCode runs in
  // (the worktree is "/" outside git)
  const labelRoot: string | undefined = input.directory || input.worktree;
  const live = new LiveSetup({ projectDir: input.worktree || input.directory }, options, (config) => {
    toolOn ??= config.enabled && config.tool;
    return toolOn ? config : { ...config, tool: false };
  });
  toolOn ??= live.current.loaded.config.enabled && live.current.loaded.config.tool; // defaults applied
  // Everything below reads the current setup: acp.jsonc and rule files are re-read when they change.
  let loaded = live.current.loaded;
  let pruner: AcpPruner = live.current.pruner;
  let problems = live.current.problems;
  let reminders = reminderSettings(loaded.config);
  let notifier = new PruneNotifier(loaded.config.enabled ? loaded.config.pruneNotification : "off", labelRoot);
  log = createLogger(join(pluginDir, "log"), loaded.config.debug);
  for (const p of problems) log.error("config", formatProblem(p));
  let problemNotice = problemsText(problems);
  const toldAboutProblems = new Set<string>();
  const isChild = new Map<string, boolean>();
  const client = input.client as any;

  /**
   * Picks up changed configuration and rule files (a few stat calls, at most once a second).
   * New problems are told once per session, like those found at start-up.
   */
  function refresh(): void {
    const reload = live.refresh();
    if (!reload) return;
    ({ loaded, pruner } = reload.setup);
    problems = reload.fresh;
    problemNotice = problemsText(problems);
    if (problems.length) toldAboutProblems.clear();
    reminders = reminderSettings(loaded.config);
    const mode = loaded.config.enabled ? loaded.config.pruneNotification : "off";
    if (mode !== notifier.mode) notifier = new PruneNotifier(mode, labelRoot);
    log = createLogger(join(pluginDir, "log"), loaded.config.debug);
    log.info(`config reloaded: ${pruner.resolved.rules.length} rules, preset ${pruner.resolved.presetName}`);
    for (const p of problems) log.error("config", formatProblem(p));
  }
  function safe<T>(where: string, f: () => T): T | undefined {
    try {
      return f();
    } catch (e) {
      log.error(where, e);
      return undefined;
    }
  }

  /** Answers of handled /acp commands the host has yet to publish (the command fails once it has). */
  const notices = new NoticeWatch();

  /** Agent and model of each session's last real user message: notices keep them, so the UI does not switch. */
  const lastUserOf = new Map<string, { agent?: string; model?: { providerID: string; modelID: string } }>();

  /**
   * Shows `text` in the session as an ignored user message: stored and displayed, never sent to
   * the model. A finished text part (time.end) is what `opencode run` prints.
   */
  async function notify(sessionID: string, text: string) {
    const who = lastUserOf.get(sessionID) ?? {};
    const now = Date.now();
    const body: Record<string, unknown> = { noReply: true, parts: [{ type: "text", text, ignored: true, time: { start: now, end: now } }] };
    if (who.agent) body.agent = who.agent;
    if (who.model) body.model = who.model;
    await client.session.prompt({ path: { id: sessionID }, body });
  }

  /** The host's model list, looked up once per model (modelLimit never throws). */
  const limits = new Map<string, Promise<ModelLimit | undefined>>();
  /** Where pending prunes go at once: some way before the host would compact (budget.ts), 0 if unknown. */
  async function pressureFor(messages: Message[]): Promise<number> {
    const usage = lastUsage(messages);
    const key = `${usage?.providerID}/${usage?.modelID}`;
    if (usage?.providerID && usage.modelID && !limits.has(key)) limits.set(key, modelLimit(client, usage.providerID, usage.modelID));
    return compactionPressure(chooseLimit(await limits.get(key), loaded.config.contextLimit));
  }

  /** A child session (task tool), known by its parentID. */
  async function child(sessionID: string): Promise<boolean> {
    let known = isChild.get(sessionID);
    if (known === undefined) {
      try {
        const res = await client.session.get({ path: { id: sessionID } });
        known = Boolean((res?.data ?? res)?.parentID);
      } catch {
        known = false;
      }
      isChild.set(sessionID, known);
    }
    return known;
  }

  /** Sessions the plugin leaves alone: subagents, unless config.subagents. */
  async function subagent(sessionID: string): Promise<boolean> {
    return loaded.config.subagents ? false : child(sessionID);
  }

  function rememberUser(sessionID: string, messages: Message[]) {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      if (!sentByUser(m)) continue;
      const model = m.info.model as { providerID?: unknown; modelID?: unknown } | undefined;
      lastUserOf.set(sessionID, {
        agent: typeof m.info.agent === "string" ? m.info.agent : undefined,
        model: typeof model?.providerID === "string" && typeof model?.modelID === "string" ? { providerID: model.providerID, modelID: model.modelID } : undefined,
      });
      return;
    }
  }

  /** The configuration problems, the first time a session asks (once per session and process). */
  function problemsFor(sessionID: string): string | undefined {
    if (!problems.length || toldAboutProblems.has(sessionID)) return undefined;
    toldAboutProblems.add(sessionID);
    return problemNotice;
  }

  /** After a turn: configuration problems (if the turn's message did not show them) and what this turn pruned. */
  async function onIdle(sessionID: string) {
    compacting.delete(sessionID);
    if (!sessionID || (await child(sessionID))) return;
    if (lastUserOf.has(sessionID)) {
      const told = problemsFor(sessionID);
      if (told) await notify(sessionID, told);
    }
    const last = pruner.lastCall(sessionID);
    const text = notifier.take(sessionID, last);
    if (text) await notify(sessionID, text);
  }

  /** The session's stored history (the tool context carries it; otherwise ask the host). */
  async function history(sessionID: string, ctx?: { messages?: unknown }): Promise<Message[]> {
    if (Array.isArray(ctx?.messages)) return ctx.messages as Message[];
    return ((await client.session.messages({ path: { id: sessionID } }))?.data ?? []) as Message[];
  }

  // Internal agents (title, compaction) get no system-prompt addition.
  const compacting = new Set<string>();

  // /undo and /redo step over our notices to the user's own messages (undo.ts)
  const undo = undoGuard({
    messages: (sessionID) => history(sessionID),
    revert: async (sessionID, messageID) => void (await client.session.revert({ path: { id: sessionID }, body: { messageID } })),
    unrevert: async (sessionID) => void (await client.session.unrevert({ path: { id: sessionID } })),
    setPrompt: async (text) => {
      await client.tui.clearPrompt();
      if (text) await client.tui.appendPrompt({ body: { text } });
    },
  });

  return {
    tool: (toolOn ? { [PRUNE_TOOL_NAME]: pruneTool(() => pruner, history) } : {}) as Record<string, any>,

    "experimental.session.compacting": async (input) => {
      compacting.add(input.sessionID);
    },

    // Fire and forget in the host: never let a rejection escape.
    event: async ({ event }: { event: any }) => {
      try {
        if (event?.type === "message.part.updated") notices.seen(event.properties?.part);
        if (event?.type === "session.updated") return await undo.updated(event.properties?.info);
        // session.idle names the session; session.deleted carries it whole (info)
        const sessionID: string | undefined = event?.properties?.sessionID ?? event?.properties?.info?.id;
        if (typeof sessionID !== "string" || !sessionID) return;
        if (event.type === "session.idle") await onIdle(sessionID);
        else if (event.type === "session.compacted") compacting.delete(sessionID);
        else if (event.type === "session.deleted") {
          notifier.forget(sessionID);
          lastUserOf.delete(sessionID);
          undo.forget(sessionID);
        }
      } catch (e) {
        log.error("event", e);
      }
    },

    "experimental.chat.system.transform": async (input, output) => {
      try {
        const sessionID = input.sessionID;
        if (!sessionID) return;
        if (compacting.delete(sessionID)) return; // the compaction agent's request
        if (!toolOn) return;
        if (output.system.some((s) => s.includes("You are a title generator"))) return;
        if (await child(sessionID)) return; // subagents have no context_prune (primary_tools)
        const text = pruner.systemPrompt(sessionID);
        if (text) output.system.push(text);
      } catch (e) {
        log.error("system.transform", e);
      }
    },

    config: async (cfg: any) => {
      try {
        cfg.command ??= {};
        cfg.command.acp ??= { template: "$ARGUMENTS", description: "opencode-acp: context pruning stats, context, budget, explain, restore" };
        if (toolOn) {
          cfg.experimental ??= {};
          const primary: string[] = (cfg.experimental.primary_tools ??= []);
          if (!primary.includes(PRUNE_TOOL_NAME)) primary.push(PRUNE_TOOL_NAME);
        }
      } catch (e) {
        log.error("config", e);
      }
    },

    "experimental.chat.messages.transform": async (_input, output) => {
      try {
        const messages = output.messages as unknown as Message[];
        const sessionID = messages[0]?.info?.sessionID;
        if (!sessionID) return;
        safe("config", refresh);
        if (await subagent(sessionID)) return;
        // Extras around the pruner each fail on their own: pruning must happen whatever they do.
        safe("reminders", () => stripReminders(messages)); // a second pass over an array we already extended
        safe("notify", () => rememberUser(sessionID, messages));
        const inCompaction = compacting.has(sessionID);
        // Reminder facts come from the history before pruning (rules may drop old todo calls).
        const remind = (reminders.todo.enabled || reminders.automata.enabled) && !inCompaction;
        const facts = remind ? safe("reminders", () => sessionFacts(messages)) : undefined;
        if (notifier.enabled) safe("notify", () => notifier.before(sessionID, pruner.state(sessionID), messages));
        // no id tags in what the summary is made from, nor where the agent has no prune tool (subagents)
        const pressureTokens = await pressureFor(messages).catch(() => 0); // pruning goes on without it
        pruner.transform(messages, { compaction: inCompaction, tool: !(await child(sessionID)), pressureTokens });
        if (notifier.enabled) safe("notify", () => notifier.after(sessionID, pruner.state(sessionID)));
        // Not in the copy the compaction agent summarises, nor in subagents.
        if (facts && !(await child(sessionID))) {
          const state = pruner.state(sessionID);
          const idsShown = state.introAt !== undefined || pruner.systemPrompt(sessionID) !== "";
          safe("reminders", () => applyReminders(messages, reminders, { facts, idsShown, isPruned: (id) => Boolean(state.decisions[id]?.output) }));
        }
      } catch (e) {
        log.error("messages.transform", e);
      }
    },

    // The user's message, before it is stored: configuration problems go with the session's
    // first message as an ignored part (shown, printed by `opencode run`, never sent), where a
    // notice after the turn would come after `opencode run` has exited.
    "chat.message": async (input, output) => {
      try {
        if (!input.sessionID) return;
        safe("config", refresh);
        if (!problems.length || toldAboutProblems.has(input.sessionID)) return;
        const parts = output.parts as unknown as { id?: string; type?: string; ignored?: boolean }[];
        const last = parts[parts.length - 1];
        // our own notices are no-reply messages of ignored parts: not the user's
        if (!last?.id || parts.every((p) => p.type === "text" && p.ignored) || (await child(input.sessionID))) return;
        const text = problemsFor(input.sessionID);
        if (!text) return;
        const now = Date.now();
        // an id just after the message's last part, so the notice shows below what the user wrote
        parts.push({ id: `${last.id}acp`, sessionID: input.sessionID, messageID: output.message.id, type: "text", text, ignored: true, time: { start: now, end: now } } as any);
      } catch (e) {
        log.error("chat.message", e);
      }
    },

    "command.execute.before": async (input, _output) => {
      if (input.command !== "acp") return;
      const args = input.arguments.trim();
      try {
        safe("config", refresh);
        const messages = NEEDS_HISTORY.test(args) ? await history(input.sessionID) : [];
        let limit;
        if (/^budget\b/.test(args)) {
          const usage = lastUsage(messages);
          limit = chooseLimit(await modelLimit(client, usage?.providerID, usage?.modelID), loaded.config.contextLimit);
        }
        const text = runCommand(pruner, input.sessionID, input.arguments, messages, { limit, root: labelRoot });
        const told = problemsFor(input.sessionID);
        const answer = told ? `${text}\n\n${told}` : text;
        const published = notices.expect(input.sessionID, answer);
        await notify(input.sessionID, answer);
        await published;
        await beforeFailing(); // and the event stream has carried it to the client
      } catch (e) {
        log.error("command", e);
        return; // let the command reach the model rather than fail the user's turn
      }
      throw commandHandled(handledMessage(args.split(/\s+/)[0] || "help"));
    },
  };
};

export default AcpPlugin;
