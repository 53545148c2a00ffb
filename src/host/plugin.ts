// The OpenCode plugin entry. This module exports the plugin function only: the host treats
// every export as a plugin and drops the whole module if one is not.
import type { Plugin } from "@opencode-ai/plugin";
import { join } from "node:path";
import { homedir } from "node:os";
import { createPruner } from "../engine/pruner.js";
import type { Message } from "../graph/types.js";
import { loadConfig } from "../rules/config.js";
import { formatProblem } from "../rules/problems.js";
import { runCommand } from "./commands.js";
import { pruneTool, PRUNE_TOOL_NAME } from "./prune-tool.js";
import { createLogger } from "./log.js";

/** Thrown from command.execute.before so the host does not call the model for /acp. */
const HANDLED = "__ACP_COMMAND_HANDLED__";

const AcpPlugin: Plugin = async (input) => {
  const dataHome = process.env.XDG_DATA_HOME ?? join(homedir(), ".local", "share");
  const pluginDir = join(dataHome, "opencode", "storage", "plugin", "acp");
  const loaded = loadConfig({ projectDir: input.worktree || input.directory });
  const log = createLogger(join(pluginDir, "log"), loaded.config.debug);
  const pruner = createPruner({
    config: loaded.config,
    layers: loaded.layers,
    ruleDirs: loaded.ruleDirs,
    stateDir: pluginDir,
    manualTool: PRUNE_TOOL_NAME,
    onError: (e, where) => log.error(where, e),
  });
  const problems = [...loaded.problems, ...pruner.problems].filter((p) => p.severity === "error");
  for (const p of problems) log.error("config", formatProblem(p));
  const toldAboutProblems = new Set<string>();
  const isSubagent = new Map<string, boolean>();
  const client = input.client as any;

  async function notify(sessionID: string, text: string) {
    await client.session.prompt({ path: { id: sessionID }, body: { noReply: true, parts: [{ type: "text", text, ignored: true }] } });
  }

  async function subagent(sessionID: string): Promise<boolean> {
    if (loaded.config.subagents) return false;
    let known = isSubagent.get(sessionID);
    if (known === undefined) {
      try {
        const res = await client.session.get({ path: { id: sessionID } });
        known = Boolean((res?.data ?? res)?.parentID);
      } catch {
        known = false;
      }
      isSubagent.set(sessionID, known);
    }
    return known;
  }

  /** The session's stored history (the tool context carries it; otherwise ask the host). */
  async function history(sessionID: string, ctx?: { messages?: unknown }): Promise<Message[]> {
    if (Array.isArray(ctx?.messages)) return ctx.messages as Message[];
    return ((await client.session.messages({ path: { id: sessionID } }))?.data ?? []) as Message[];
  }

  // Internal agents (title, compaction) get no system-prompt addition.
  const compacting = new Set<string>();
  const toolOn = loaded.config.enabled && loaded.config.tool;

  return {
    tool: (toolOn ? { [PRUNE_TOOL_NAME]: pruneTool(pruner, history) } : {}) as Record<string, any>,

    "experimental.session.compacting": async (input) => {
      compacting.add(input.sessionID);
    },

    "experimental.chat.system.transform": async (input, output) => {
      try {
        const sessionID = input.sessionID;
        if (!sessionID || !toolOn) return;
        if (compacting.delete(sessionID)) return;
        if (output.system.some((s) => s.includes("You are a title generator"))) return;
        if (await subagent(sessionID)) return;
        const text = pruner.systemPrompt(sessionID);
        if (text) output.system.push(text);
      } catch (e) {
        log.error("system.transform", e);
      }
    },

    config: async (cfg: any) => {
      try {
        cfg.command ??= {};
        cfg.command.acp ??= { template: "$ARGUMENTS", description: "opencode-acp: context pruning stats, context, explain, restore" };
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
        if (!sessionID || (await subagent(sessionID))) return;
        pruner.transform(messages);
        if (problems.length && !toldAboutProblems.has(sessionID)) {
          toldAboutProblems.add(sessionID);
          const text = `acp: configuration problems, using defaults where needed:\n${problems.map(formatProblem).join("\n")}`;
          notify(sessionID, text).catch((e) => log.error("notify", e));
        }
      } catch (e) {
        log.error("messages.transform", e);
      }
    },

    "command.execute.before": async (input, _output) => {
      if (input.command !== "acp") return;
      let text: string;
      try {
        const needsHistory = /^(context|sweep)\b/.test(input.arguments.trim());
        text = runCommand(pruner, input.sessionID, input.arguments, needsHistory ? await history(input.sessionID) : []);
        await notify(input.sessionID, text);
      } catch (e) {
        log.error("command", e);
        return; // let the command reach the model rather than fail the user's turn
      }
      throw new Error(HANDLED);
    },
  };
};

export default AcpPlugin;
