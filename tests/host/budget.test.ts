import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message } from "../../src/graph/types.js";
import { chooseLimit, compactionPressure, lastUsage, modelLimit } from "../../src/host/budget.js";
import { runCommand } from "../../src/host/commands.js";
import { assistant, bigText, SID, user } from "../helpers/session.js";

function withUsage(m: Message, input: number, read: number, write: number, output: number): Message {
  Object.assign(m.info, { providerID: "anthropic", modelID: "claude-x", tokens: { input, output, reasoning: 0, cache: { read, write } } });
  return m;
}

function session(read: number, dir = "src"): Message[] {
  return [
    user("go"),
    withUsage(assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st1"), id: "prt_b1" }]), 3000, 0, 0, 200),
    withUsage(assistant([{ tool: "read", input: { filePath: `${dir}/big.ts` }, output: bigText("big", 500), id: "prt_b2" }]), 500, 2800, 400, 150),
    withUsage(assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st2"), id: "prt_b3" }]), 1200, read, 900, 300),
  ];
}

/** Prunes the session once (as a model call would), then runs /acp budget. */
function budget(h: Message[], limit: Parameters<typeof chooseLimit>, preset?: string, root?: string) {
  const p = createPruner({ config: { commit: { minTokens: 0 }, idsFromTokens: 0 }, preset });
  p.transform(structuredClone(h));
  return runCommand(p, SID, "budget", h, { limit: chooseLimit(...limit), root });
}

describe("/acp budget", () => {
  it("usage is the newest call's input + cache read + cache write + output", () => {
    const h = session(3200);
    expect(lastUsage(h)).toEqual({ total: 1200 + 3200 + 900 + 300, input: 1200, output: 300, cacheRead: 3200, cacheWrite: 900, providerID: "anthropic", modelID: "claude-x" });
    const summary = withUsage(assistant([], "summary"), 9, 9, 9, 9);
    summary.info.summary = true;
    const aborted = withUsage(assistant([], ""), 0, 0, 0, 0);
    expect(lastUsage([...h, summary, aborted])?.total).toBe(5600);
    expect(lastUsage([user("hi")])).toBeUndefined();
  });

  it("the limit comes from the host's model list; contextLimit in acp.jsonc overrides it", async () => {
    const client = { config: { providers: async () => ({ data: { providers: [{ id: "anthropic", models: { "claude-x": { limit: { context: 200000, output: 32000 } } } }] } }) } };
    const model = await modelLimit(client, "anthropic", "claude-x");
    expect(model).toEqual({ context: 200000, output: 32000 });
    expect(await modelLimit(client, "anthropic", "other")).toBeUndefined();
    expect(await modelLimit({ config: { providers: async () => { throw new Error("down"); } } }, "anthropic", "claude-x")).toBeUndefined();
    expect(chooseLimit(model, undefined)).toEqual({ context: 200000, output: 32000, source: "model" });
    expect(chooseLimit(model, 100000)).toEqual({ context: 100000, output: 32000, source: "config", modelContext: 200000 });
    expect(chooseLimit(undefined, undefined)).toEqual({ source: "none" });
  });

  it("healthy: usage, pruning, the largest outputs, no action needed", () => {
    const text = budget(session(3200), [{ context: 200000, output: 32000 }, undefined]);
    const lines = text.split("\n");
    expect(lines[0]).toBe("acp budget: 5.6K of 200K tokens (2.8%) used by the last request (limit of anthropic/claude-x from OpenCode's model list)");
    expect(lines[1]).toBe("  input 1.2K · cache read 3.2K · cache write 900 · output 300");
    expect(lines[2]).toMatch(/^ {2}pruning: 1 part pruned, [\d.]+K tokens saved on every request \(preset balanced\)$/);
    expect(text).toContain("  OpenCode compacts the session automatically near 168K (context limit minus max output)");
    expect(text).toMatch(/largest tool outputs still sent .*\n {4}t[0-9a-z]+ +\d+(\.\d)?K tokens {2}read src\/big\.ts/);
    // three outputs carry ids; the first git status is superseded by the identical later call
    expect(text.split("\n").filter((l) => /^ {4}t[0-9a-z]+ /.test(l)).map((l) => l.replace(/^.*tokens {2}/, ""))).toEqual(["read src/big.ts", "bash git status"]);
    expect(text.endsWith("recommendations:\n  - the context is healthy; nothing to do")).toBe(true);
  });

  it("names files inside the project folder relative to it, as the agent's tools do", () => {
    const labels = (root: string | undefined, dir: string) =>
      budget(session(3200, dir), [{ context: 200000 }, undefined], undefined, root)
        .split("\n")
        .filter((l) => /^ {4}t[0-9a-z]+ /.test(l))
        .map((l) => l.replace(/^.*tokens {2}/, ""));
    expect(labels("/home/me/proj", "/home/me/proj/src")).toEqual(["read src/big.ts", "bash git status"]);
    expect(labels("/home/me/proj/", "/home/me/proj/src")).toEqual(["read src/big.ts", "bash git status"]);
    // a sibling whose name starts like the project, and a file outside it, keep their paths
    expect(labels("/home/me/proj", "/home/me/project2")).toEqual(["read /home/me/project2/big.ts", "bash git status"]);
    expect(labels("/home/me/proj", "/etc")).toEqual(["read /etc/big.ts", "bash git status"]);
    expect(labels(undefined, "/home/me/proj/src")).toEqual(["read /home/me/proj/src/big.ts", "bash git status"]);
    // the file system's root is no project folder; a path with .. is resolved before it is compared
    expect(labels("/", "/home/me/proj/src")).toEqual(["read /home/me/proj/src/big.ts", "bash git status"]);
    expect(labels("/home/me/proj", "/home/me/proj/../project2")).toEqual(["read /home/me/proj/../project2/big.ts", "bash git status"]);
  });

  it("above 70% it recommends a sweep, the compact preset, discards and /compact", () => {
    const text = budget(session(3200), [undefined, 7000]);
    expect(text.split("\n")[0]).toBe("acp budget: 5.6K of 7K tokens (80.0%) used by the last request (limit from contextLimit in acp.jsonc)");
    const rec = text.slice(text.indexOf("recommendations:"));
    expect(rec).toContain("/acp sweep discards the tool outputs since your last message");
    expect(rec).toContain('"preset": "compact"');
    expect(rec).toMatch(/ask the agent to discard large outputs it is done with: t[0-9a-z]+/);
    expect(rec).toContain("/compact summarises the session now");
    expect(rec).not.toContain("nearly full");
    expect(budget(session(3200), [undefined, 6000])).toContain("the context is nearly full");
    expect(budget(session(3200), [undefined, 7000], "compact")).not.toContain('"preset": "compact"');
  });

  it("without a known limit it says how to set one; before any call it says so", () => {
    expect(budget(session(3200), [undefined, undefined]).split("\n")[0]).toBe(
      'acp budget: 5.6K tokens used by the last request; the context limit of anthropic/claude-x is unknown (set "contextLimit" in acp.jsonc)',
    );
    const p = createPruner({ config: { idsFromTokens: 0 } });
    expect(runCommand(p, SID, "budget", [user("hi")])).toMatch(/^acp budget: no model call has reported its token usage in this session yet\.\n {2}pruning: nothing pruned yet \(preset balanced\)\nrecommendations:\n {2}- run \/acp context/);
  });
});

describe("pressure point (pending prunes go before the host compacts)", () => {
  it("is 80% of the room the host leaves before it compacts, 0 when the limit is unknown", () => {
    expect(compactionPressure({ context: 128_000, output: 4096, source: "model" })).toBe(Math.floor((128_000 - 4096) * 0.8));
    expect(compactionPressure({ context: 40_000, source: "config" })).toBe(32_000);
    expect(compactionPressure({ source: "none" })).toBe(0);
  });
});
