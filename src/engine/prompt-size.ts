// The `promptTokens` fact: the whole prompt as the provider receives it before pruning, counted as
// `acp simulate` counts a prompt (docs/simulate.md), so a rule that waits for the prompt to reach a
// size acts on exactly the calls where the replay measures that size.
import type { Graph } from "../graph/graph.js";
import { lastUserIndex, partTokens } from "../graph/prompt.js";

export function promptTokensOf(graph: Graph): number {
  // Node parts are the parts as the host stored them (the engine renders into the copy, not into them).
  const host = graph.clock!.host;
  const last = lastUserIndex(graph.messages, host);
  let tokens = 0;
  for (const n of graph.nodes) tokens += partTokens(n.part, n.message, n.msgIndex > last, host);
  return tokens;
}
