// The context_prune tool: the model's way to discard, distill, replace or restore tool outputs,
// its own earlier messages and reasoning, by id.
import { z } from "zod";
import type { AcpPruner } from "../engine/pruner.js";
import type { Message } from "../graph/types.js";
import { OPENCODE } from "./profile.js";

export const PRUNE_TOOL_NAME = OPENCODE.pruneTool;

const target = z.union([
  z.string().describe("an id such as t12"),
  z.object({
    id: z.string().describe("an id such as t12"),
    summary: z.string().optional().describe("distill: the text that replaces the output"),
    start: z.string().optional().describe("replace: literal text where the cut starts"),
    end: z.string().optional().describe("replace: literal text where the cut ends"),
    replacement: z.string().optional().describe("replace: text put in place of the cut"),
  }),
  z.array(z.string()).min(1).describe("a tuple: [id], [id, summary] to distill, [id, start, end, replacement] or [start, end, replacement] to replace"),
]);

/**
 * The description is the same on every request: it is part of the tools list, which the provider
 * caches before the whole conversation, so one that changed when ids start would re-bill the
 * entire prompt once. It therefore says when ids exist rather than assuming they do.
 */
export function pruneTool(pruner: () => AcpPruner, history: (sessionID: string, ctx: any) => Promise<Message[]>) {
  return {
    description:
      "Prune your own context: discard outputs you no longer need, distill them to a summary, cut a span between two literal markers, or restore an earlier prune. Targets are the ids in [acp:…] tags, which the opencode-acp plugin adds once the conversation is long enough to be worth pruning (a note from the plugin says when they start); until you see such tags there is nothing to prune. t… ends a tool output, m… ends one of your earlier messages, r… names your reasoning in that step (shown after it, on the step's text or first tool output). Reasoning can be pruned only after the user's next message. Several targets can go in one call.",
    args: {
      action: z.enum(["discard", "distill", "replace", "restore"]).describe("what to do with the targets"),
      targets: z.array(target).describe("ids, objects with an id and options, or tuples"),
    },
    async execute(args: { action: "discard" | "distill" | "replace" | "restore"; targets: any[] }, ctx: any): Promise<string> {
      const messages = await history(ctx.sessionID, ctx);
      const result = pruner().manual(ctx.sessionID, { action: args.action, targets: args.targets }, messages);
      return result.ok ? result.text : `Some targets were not pruned:\n${result.text}`;
    },
  };
}
