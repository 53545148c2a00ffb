// idleTurns: user turns since a part was last in use (engine/use.ts).
import { describe, expect, it } from "vitest";
import { buildGraph } from "../../src/graph/graph.js";
import type { Message } from "../../src/graph/types.js";
import { UseTracker } from "../../src/engine/use.js";
import { OPENCODE } from "../../src/host/profile.js";

const S = "ses_use";
let k = 0;
const msg = (role: string, parts: Record<string, unknown>[]): Message => {
  const id = `msg_${String(++k).padStart(4, "0")}`;
  return { info: { id, sessionID: S, role }, parts: parts.map((p, i) => ({ id: `prt_${id}_${i}`, sessionID: S, messageID: id, ...p })) } as Message;
};
const tool = (name: string, input: Record<string, unknown>, output = "") => ({ type: "tool", tool: name, callID: `c${k}`, state: { status: "completed", input, output } });
const LONG = (s: string) => `${s} ${"and a line long enough to count as a quote".repeat(1)}`;

/** A measure of the first part of message `at`, read from a use tracker that saw the whole history. */
function measured(measure: "idleTurns" | "idleCalls" | "idleWorkCalls" | "userNamedTurns" | "useTurns" | "changeTurns", history: Message[], at: number): number {
  const g = buildGraph(history, undefined, { host: OPENCODE });
  const use = new UseTracker();
  for (const n of g.nodes) use.see(n);
  return use[measure](g.nodes.find((n) => n.message === history[at])!);
}
const idle = (history: Message[], at: number) => measured("idleTurns", history, at);

describe("idleTurns", () => {
  const read = () => msg("assistant", [tool("read", { filePath: "/src/app.ts" }, `1: ${LONG("export const app = 1")}\n2: short`)]);

  it("counts the user turns since the part's own call when nothing uses it again", () => {
    const h = [msg("user", [{ type: "text", text: "look" }]), read(), msg("user", [{ type: "text", text: "next" }]), msg("assistant", [{ type: "text", text: "ok" }]), msg("user", [{ type: "text", text: "and then" }])];
    expect(idle(h, 1)).toBe(2);
  });

  it("a later tool call with the same value in a field of the same name is a use", () => {
    const h = [msg("user", [{ type: "text", text: "look" }]), read(), msg("user", [{ type: "text", text: "fix it" }]), msg("assistant", [tool("edit", { filePath: "/src/app.ts", oldString: "x", newString: "y" })]), msg("user", [{ type: "text", text: "thanks" }])];
    expect(idle(h, 1)).toBe(1);
    // the same value under another field name is not
    const other = [msg("user", [{ type: "text", text: "look" }]), read(), msg("user", [{ type: "text", text: "fix it" }]), msg("assistant", [tool("bash", { command: "/src/app.ts" })]), msg("user", [{ type: "text", text: "thanks" }])];
    expect(idle(other, 1)).toBe(2);
  });

  it("text naming the file is a use (user or assistant)", () => {
    const h = [msg("user", [{ type: "text", text: "look" }]), read(), msg("user", [{ type: "text", text: "now change app.ts please" }])];
    expect(idle(h, 1)).toBe(0);
  });

  it("an assistant quoting a line of the output is a use; a short line is not a quote", () => {
    const quoted = [msg("user", [{ type: "text", text: "look" }]), read(), msg("user", [{ type: "text", text: "go on" }]), msg("assistant", [tool("write", { filePath: "/src/other.ts", content: `${LONG("export const app = 1")}\n` })]), msg("user", [{ type: "text", text: "done?" }])];
    expect(idle(quoted, 1)).toBe(1);
    const short = [msg("user", [{ type: "text", text: "look" }]), read(), msg("user", [{ type: "text", text: "go on" }]), msg("assistant", [{ type: "text", text: "short" }]), msg("user", [{ type: "text", text: "done?" }])];
    expect(idle(short, 1)).toBe(2);
  });

  it("a file's content (a long or multi-line value) is not a subject", () => {
    const body = "line\n".repeat(3);
    const h = [msg("user", [{ type: "text", text: "a" }]), msg("assistant", [tool("write", { filePath: "/a.txt", content: body })]), msg("user", [{ type: "text", text: "b" }]), msg("assistant", [tool("write", { filePath: "/b.txt", content: body })]), msg("user", [{ type: "text", text: "c" }])];
    expect(idle(h, 1)).toBe(2);
  });
});

describe("idleCalls", () => {
  const idleCalls = (history: Message[], at: number) => measured("idleCalls", history, at);
  const read = () => msg("assistant", [tool("read", { filePath: "/src/app.ts" }, `1: ${LONG("export const app = 1")}`)]);
  const other = (i: number) => msg("assistant", [tool("bash", { command: `echo ${i}` }, "ok")]);

  it("counts the tool calls after the part's own call, within a turn and across turns", () => {
    const h = [msg("user", [{ type: "text", text: "look" }]), read(), other(1), other(2), msg("user", [{ type: "text", text: "more" }]), other(3)];
    expect(idleCalls(h, 1)).toBe(3);
    expect(idleCalls(h.slice(0, 2), 1)).toBe(0); // the newest call is its own
  });

  it("a later call that changes the same subject, or a quote of its output, restarts the count", () => {
    const edit = msg("assistant", [tool("edit", { filePath: "/src/app.ts", oldString: "a\nb", newString: "c" }, "12: line\n".repeat(60))]);
    expect(idleCalls([msg("user", [{ type: "text", text: "look" }]), read(), other(1), edit, other(2)], 1)).toBe(1);
    const quote = msg("assistant", [tool("write", { filePath: "/src/b.ts", content: LONG("export const app = 1") })]);
    expect(idleCalls([msg("user", [{ type: "text", text: "look" }]), read(), other(1), other(2), quote, other(3), other(4)], 1)).toBe(2);
    // text naming the file: its position counts (no call of its own), the calls after it are idle
    const named = msg("assistant", [{ type: "text", text: "app.ts is next" }]);
    expect(idleCalls([msg("user", [{ type: "text", text: "look" }]), read(), other(1), other(2), named, other(3)], 1)).toBe(1);
  });

  it("another view of the same subject (no content in its input, an output of its own) takes the use over: a use by turns, not by calls", () => {
    const partial = () => msg("assistant", [tool("read", { filePath: "/src/app.ts", offset: 40, limit: 20 }, "40: more\n".repeat(80))]);
    const h = [msg("user", [{ type: "text", text: "look" }]), read(), other(1), msg("user", [{ type: "text", text: "go on" }]), partial(), other(2)];
    expect(idleCalls(h, 1)).toBe(3);
    expect(idle(h, 1)).toBe(0);
    // a one-line edit that returns little is a use; one that returns a view of its own (a snippet) is not
    const small = msg("assistant", [tool("edit", { filePath: "/src/app.ts", oldString: "a", newString: "b" }, "Edit applied successfully.")]);
    expect(idleCalls([msg("user", [{ type: "text", text: "look" }]), read(), other(1), small, other(2)], 1)).toBe(1);
    const snippet = msg("assistant", [tool("edit", { filePath: "/src/app.ts", oldString: "a", newString: "b" }, "12: line\n".repeat(60))]);
    expect(idleCalls([msg("user", [{ type: "text", text: "look" }]), read(), other(1), snippet, other(2)], 1)).toBe(3);
    // a long single-line string is content: a use whatever it returns
    const long = msg("assistant", [tool("edit", { filePath: "/src/app.ts", oldString: "x".repeat(301), newString: "y" }, "12: line\n".repeat(60))]);
    expect(idleCalls([msg("user", [{ type: "text", text: "look" }]), read(), other(1), long, other(2)], 1)).toBe(1);
  });
});

describe("idleWorkCalls", () => {
  const work = (history: Message[], at: number) => measured("idleWorkCalls", history, at);
  const calls = (history: Message[], at: number) => measured("idleCalls", history, at);
  const read = () => msg("assistant", [tool("read", { filePath: "/src/app.ts" }, `1: ${LONG("export const app = 1")}`)]);
  const listing = (i: number) => msg("assistant", [tool("bash", { command: `ls dir${i}` }, "a.ts\n".repeat(40))]);
  const brief = (i: number) => msg("assistant", [tool("bash", { command: `git add part${i}` }, "")]);
  const update = (i: number) => msg("assistant", [tool("taskupdate", { taskId: String(i), status: "completed" }, "Updated task #" + i)]);

  it("counts only the calls that brought something: a call naming no file, carrying no content and returning a line or two does not count", () => {
    const h = [msg("user", [{ type: "text", text: "look" }]), read(), brief(1), update(2), listing(3), update(4), listing(5)];
    expect(calls(h, 1)).toBe(5);
    expect(work(h, 1)).toBe(2);
  });

  it("a brief call that names a file, carries content or failed still counts, and a use restarts the count as for idleCalls", () => {
    const touch = msg("assistant", [tool("bash", { command: "true", path: "/src/other.ts" }, "")]);
    const script = msg("assistant", [tool("bash", { command: "python3 -c '\nprint(1)\n'" }, "1")]);
    const failed = msg("assistant", [{ type: "tool", tool: "bash", callID: "cf", state: { status: "error", input: { command: "make" }, error: "exit 2" } }]);
    expect(work([msg("user", [{ type: "text", text: "look" }]), read(), touch, script, failed, brief(1)], 1)).toBe(3);
    const quote = msg("assistant", [tool("write", { filePath: "/src/b.ts", content: LONG("export const app = 1") })]);
    expect(work([msg("user", [{ type: "text", text: "look" }]), read(), listing(1), quote, brief(2), listing(3)], 1)).toBe(1);
  });
});

describe("userNamedTurns", () => {
  const named = (history: Message[], at: number) => measured("userNamedTurns", history, at);
  const user = (text: string, synthetic = false) => msg("user", [{ type: "text", text, ...(synthetic ? { synthetic: true } : {}) }]);
  const read = (filePath: string) => msg("assistant", [tool("read", { filePath }, "1: x")]);

  it("counts the user turns since a user message named the file, by its name with the extension", () => {
    const h = [user("fix src/Charm.py, it crashes"), read("/repo/src/charm.py"), user("go on"), msg("assistant", [{ type: "text", text: "ok" }]), user("and then")];
    expect(named(h, 1)).toBe(2);
    // a later naming restarts the count
    expect(named([...h, user("look at charm.py again")], 1)).toBe(0);
  });

  it("a name written without an extension matches the file's stem, whatever its case and separators", () => {
    expect(named([user("read docs/project-plan first"), read("/repo/docs/PROJECT_PLAN.md")], 1)).toBe(0);
    // with an extension, only that file: product_api.proto does not name product_api.ts
    expect(named([user("extend schemas/product_api.proto"), read("/repo/gen/product_api.ts")], 1)).toBe(Infinity);
  });

  it("is Infinity for files only the assistant, a synthetic part or a folder named", () => {
    expect(named([user("go"), msg("assistant", [{ type: "text", text: "I will read src/app.ts" }]), read("/repo/src/app.ts")], 2)).toBe(Infinity);
    expect(named([user("Called the Read tool with src/app.ts", true), read("/repo/src/app.ts")], 1)).toBe(Infinity);
    // "docs/duckdb/" names a folder of many files, not a file called duckdb
    expect(named([user("use @docs/duckdb/ for this"), read("/repo/docs/duckdb")], 1)).toBe(Infinity);
    expect(named([user("use @docs/duckdb for this"), read("/repo/docs/duckdb")], 1)).toBe(0);
  });
});

describe("useTurns", () => {
  const turns = (history: Message[], at: number) => measured("useTurns", history, at);
  const user = (text: string) => msg("user", [{ type: "text", text }]);
  const say = (text: string) => msg("assistant", [{ type: "text", text }]);
  const read = (filePath: string) => msg("assistant", [tool("read", { filePath }, "1: x")]);

  it("counts the user turns its subject was in use in, its own included, each turn once", () => {
    expect(turns([user("look"), read("/repo/src/app.ts")], 1)).toBe(1);
    // named twice and edited in turn 2, named in turn 3: three turns
    const h = [user("look"), read("/repo/src/app.ts"), user("why?"), say("app.ts does it, see src/app.ts"), msg("assistant", [tool("edit", { filePath: "/repo/src/app.ts", oldString: "a", newString: "b" })]), user("and?"), say("app.ts again")];
    expect(turns(h, 1)).toBe(3);
    // a turn that only names other files adds nothing
    expect(turns([...h, user("then"), say("see util.ts")], 1)).toBe(3);
  });

  it("counts a file by its name: another path to the same name, or the user naming it, is the same subject", () => {
    const h = [user("look"), read("/repo/src/app.ts"), user("open lib/app.ts"), say("ok"), user("x"), read("/repo/lib/app.ts")];
    expect(turns(h, 1)).toBe(3);
  });

  it("counts subjects that are not files by field and value", () => {
    const run = (command: string) => msg("assistant", [tool("bash", { command }, "ok")]);
    const h = [user("test"), run("npm test"), user("again"), run("npm test"), user("lint"), run("npm run lint")];
    expect(turns(h, 1)).toBe(2);
    expect(turns(h, 5)).toBe(1);
  });
});

describe("changeTurns", () => {
  const turns = (history: Message[], at: number) => measured("changeTurns", history, at);
  const user = (text: string) => msg("user", [{ type: "text", text }]);
  const say = (text: string) => msg("assistant", [{ type: "text", text }]);
  const view = "x".repeat(600);
  const read = (filePath: string) => msg("assistant", [tool("read", { filePath }, view)]);
  const edit = (filePath: string, oldString: string, output = "Edit applied successfully.") => msg("assistant", [tool("edit", { filePath, oldString, newString: "b" }, output)]);

  it("is 0 for a file that was only read, named and read again", () => {
    expect(turns([user("look"), read("/repo/src/app.ts"), user("why?"), say("see src/app.ts"), user("again"), read("/repo/src/app.ts")], 1)).toBe(0);
  });

  it("counts the user turns in which a call changed the file, each turn once, by the file's name", () => {
    const h = [user("look"), read("/repo/src/app.ts"), edit("/repo/src/app.ts", "a"), edit("/repo/src/app.ts", "c"), user("more"), say("ok"), user("again"), edit("/repo/lib/app.ts", "d")];
    expect(turns(h, 1)).toBe(2);
    // a file of another name changed: not this one
    expect(turns([user("look"), read("/repo/src/app.ts"), edit("/repo/src/util.ts", "a")], 1)).toBe(0);
  });

  it("counts a call whose input carries content, even when it returns a view of its own", () => {
    const multiLine = "line one\nline two";
    expect(turns([user("look"), read("/repo/src/app.ts"), edit("/repo/src/app.ts", multiLine, view)], 1)).toBe(1);
    // a call with a short one-line input returning a view is a view, not a change
    expect(turns([user("look"), read("/repo/src/app.ts"), edit("/repo/src/app.ts", "a", view)], 1)).toBe(0);
  });

  it("does not count a call that failed: a read too large, an edit whose oldString was not found", () => {
    const failed = (name: string, input: Record<string, unknown>) => msg("assistant", [{ type: "tool", tool: name, callID: `c${k}`, state: { status: "error", input, error: "failed" } }]);
    expect(turns([user("look"), failed("read", { filePath: "/repo/data.jsonl" }), read("/repo/data.jsonl")], 2)).toBe(0);
    expect(turns([user("look"), read("/repo/src/app.ts"), failed("edit", { filePath: "/repo/src/app.ts", oldString: "a\nb", newString: "c" })], 1)).toBe(0);
    // the same edit, applied, does
    expect(turns([user("look"), read("/repo/src/app.ts"), edit("/repo/src/app.ts", "a\nb")], 1)).toBe(1);
  });
});

describe("use tracking in the runtime", () => {
  it("is on for a rule that reads idleTurns only as a fact reference in a value (the parsed tree decides, not the rule text)", async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { createPruner } = await import("../../src/index.js");
    const { assistant, bigText, user } = await import("../helpers/session.js");
    const dir = mkdtempSync(join(tmpdir(), "acp-use-"));
    const file = join(dir, "used-again.yaml");
    // true only when the part was used after its own call (idle < age): never, if use were not tracked
    writeFileSync(file, `rules:\n  used-again:\n    phase: age\n    description: test\n    when:\n      all:\n        - { fact: tool, operator: equal, value: read }\n        - { fact: ageTurns, operator: greaterThan, value: { fact: idleTurns } }\n    then: { action: clear }\n`);
    const h = [user("look"), assistant([{ tool: "read", input: { filePath: "/src/app.ts" }, output: bigText("app"), id: "prt_first" }]), user("fix it"), assistant([{ tool: "edit", input: { filePath: "/src/app.ts", oldString: "a", newString: "b" }, output: "Edit applied", id: "prt_second" }]), user("thanks")];
    const p = createPruner({ preset: "verbose", rules: [file], config: { commit: { minTokens: 0 } } });
    const copy = structuredClone(h);
    p.transform(copy);
    const out = copy[1].parts.find((x) => x.id === "prt_first")?.state?.output;
    expect(String(out)).toContain("output cleared");
  });
});
