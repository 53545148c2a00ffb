import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import type { Message } from "../../src/graph/types.js";
import { fmtK, notificationText, PruneNotifier, statusLine, type PruneEntry } from "../../src/host/notify.js";
import { assistant, bigText, SID, user } from "../helpers/session.js";

function session(): Message[] {
  return [
    user("go"),
    assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st1"), id: "prt_n1" }]),
    assistant([{ tool: "read", input: { filePath: "src/a.ts" }, output: bigText("a1"), id: "prt_n2" }]),
    assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st2"), id: "prt_n3" }]),
    assistant([{ tool: "read", input: { filePath: "src/a.ts" }, output: bigText("a2"), id: "prt_n4" }]),
  ];
}

/** One model call the way the plugin runs it. */
function call(pruner: ReturnType<typeof createPruner>, notifier: PruneNotifier, history: Message[]) {
  const copy = structuredClone(history);
  notifier.before(SID, pruner.state(SID), copy);
  pruner.transform(copy);
  notifier.after(SID, pruner.state(SID));
  return copy;
}

const pruner = () => createPruner({ config: { commit: { minTokens: 0 } } });

describe("prune notifications", () => {
  it("minimal: one status line after a turn that pruned, nothing when it did not", () => {
    const p = pruner();
    const n = new PruneNotifier("minimal");
    const h = session();
    call(p, n, h.slice(0, 3));
    expect(n.take(SID)).toBeUndefined(); // nothing pruned yet
    call(p, n, h.slice(0, 4));
    call(p, n, h);
    const text = n.take(SID)!;
    expect(text).toMatch(/^「 ⚙️ 2\(\d+(\.\d)?K\) ▼ 」 acp: pruned this turn$/);
    expect(n.take(SID)).toBeUndefined(); // posted once
    call(p, n, [...h, assistant([], "done")]);
    expect(n.take(SID)).toBeUndefined();
  });

  it("a later turn reports its own prunes and the session total", () => {
    const p = pruner();
    const n = new PruneNotifier("minimal");
    const h = session();
    call(p, n, h.slice(0, 4));
    expect(n.take(SID)).toMatch(/^「 ⚙️ 1\(/);
    call(p, n, h);
    expect(n.take(SID)).toMatch(/^「 ⚙️ 1\(\d.*\) ▼ 」 acp: pruned this turn · session 「 ⚙️ 2\(.*\) ▼ 」$/);
  });

  it("detailed: one line per rule with the calls it pruned", () => {
    const p = pruner();
    const n = new PruneNotifier("detailed");
    call(p, n, session());
    const lines = n.take(SID)!.split("\n");
    expect(lines[0]).toMatch(/^「 ⚙️ 2\(.*\) ▼ 」 acp: pruned this turn$/);
    expect(lines.slice(1)).toEqual(["  identical-call    2 parts    8.6K  bash git status, read src/a.ts"]);
  });

  it("detailed: a file inside the project folder is named relative to it", () => {
    const p = pruner();
    const n = new PruneNotifier("detailed", "/home/me/proj");
    const h = session().map((m) => {
      for (const part of m.parts) if (part.type === "tool" && part.tool === "read") part.state!.input = { filePath: "/home/me/proj/src/a.ts" };
      return m;
    });
    call(p, n, h);
    expect(n.take(SID)!.split("\n").slice(1)).toEqual(["  identical-call    2 parts    8.6K  bash git status, read src/a.ts"]);
  });

  it("decisions already stored when a session is first seen are not news (a new process)", () => {
    const p = pruner();
    const h = session();
    call(p, new PruneNotifier("minimal"), h);
    const fresh = new PruneNotifier("minimal");
    call(p, fresh, [...h, assistant([], "ok")]);
    expect(fresh.take(SID)).toBeUndefined();
  });

  it("prunes requested between turns (/acp sweep, context_prune) show at the end of the next turn", () => {
    const p = pruner();
    const n = new PruneNotifier("detailed");
    const h = session().slice(0, 3);
    call(p, n, h);
    expect(n.take(SID)).toBeUndefined();
    p.sweep(SID, h, 1);
    call(p, n, [...h, assistant([], "ok")]);
    expect(n.take(SID)).toMatch(/\n {2}manual +1 part +\S+ {2}read src\/a\.ts$/);
  });

  it("off: nothing is collected or posted", () => {
    const p = pruner();
    const n = new PruneNotifier("off");
    call(p, n, session());
    expect(n.enabled).toBe(false);
    expect(n.take(SID)).toBeUndefined();
  });
});

describe("status line format", () => {
  const entries = (kind: PruneEntry["kind"], count: number, tokens: number): PruneEntry[] =>
    Array.from({ length: count }, (_, i) => ({ partId: `${kind}${i}`, slot: "output", kind, rule: "r", action: "a", tokens: tokens / count, call: 1, label: "x" }));

  it("counts parts and tokens per kind like ACP's status bar", () => {
    const all = [...entries("tool", 39, 83100), ...entries("text", 15, 7500), ...entries("reasoning", 8, 16000)];
    expect(statusLine(all)).toBe("「 💬 15(7.5K) ▼ + 🧠 8(16K) ▼ + ⚙️ 39(83.1K) ▼ 」");
  });

  it("numbers", () => {
    expect([fmtK(950), fmtK(1000), fmtK(16000), fmtK(83149)]).toEqual(["950", "1K", "16K", "83.1K"]);
  });

  it("detailed mentions prunes still waiting for a batch commit", () => {
    const text = notificationText("detailed", entries("tool", 1, 500), entries("tool", 1, 500), { pending: 3, pendingTokens: 2400 });
    expect(text!.split("\n").at(-1)).toBe("  pending: 3 more prunes (~2.4K), applied together once they free enough (to spare the prompt cache)");
    expect(notificationText("minimal", [], [])).toBeUndefined();
  });
});
