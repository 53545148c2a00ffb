import { describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { defaultConfig } from "../../src/rules/config.js";
import type { Message } from "../../src/graph/types.js";
import {
  applyReminders,
  insertReminder,
  prunableOutputs,
  reminderSettings,
  reminderText,
  sessionFacts,
  stripReminders,
  tagInOutput,
  REMINDER_MARK,
} from "../../src/host/reminders.js";
import { assistant, bigText, user } from "../helpers/session.js";

const settings = reminderSettings({});
const todo = (todos: { id: string; content: string; status: string }[]) => assistant([{ tool: "todowrite", input: { todos }, output: "Todos updated" }]);
const step = (i: number) => assistant([{ tool: "bash", input: { command: `echo ${i}` }, output: `out ${i}` }]);
const steps = (n: number, from = 0) => Array.from({ length: n }, (_, i) => step(from + i));

/** The calls (counted as model calls since the last todo update) at which a reminder is due. */
function dueCalls(history: Message[], upTo: number): number[] {
  const due: number[] = [];
  const msgs = [...history];
  for (let k = 0; k <= upTo; k++) {
    if (reminderText(msgs, settings)) due.push(sessionFacts(msgs).sinceTodo);
    msgs.push(step(k));
  }
  return due;
}

describe("reminder settings", () => {
  it("take what a layer leaves out from presets/defaults.jsonc", () => {
    const d = defaultConfig();
    expect(reminderSettings({})).toEqual({ todo: d.todoReminder, automata: d.automata, tool: true });
    expect(reminderSettings({ todoReminder: { repeatTurns: 2 } }).todo).toEqual({ ...d.todoReminder, repeatTurns: 2 });
  });
});

describe("todo reminder", () => {
  it("fires after initialTurns model calls without a todo update, then every repeatTurns", () => {
    expect(dueCalls([user("fix the bug")], 20)).toEqual([8, 12, 16, 20]);
  });

  it("each todo update resets the count", () => {
    const history = [user("go"), ...steps(6), todo([{ id: "1", content: "A", status: "in_progress" }])];
    expect(sessionFacts(history).sinceTodo).toBe(0);
    expect(reminderText([...history, ...steps(7)], settings)).toBeUndefined();
    expect(reminderText([...history, ...steps(8)], settings)).toContain("8 model calls since the todo list was last updated");
  });

  it("summarises the list and asks for an update", () => {
    const history = [user("go"), todo([{ id: "1", content: "A", status: "completed" }, { id: "2", content: "B", status: "in_progress" }, { id: "3", content: "C", status: "pending" }]), ...steps(8)];
    const text = reminderText(history, settings)!;
    expect(text).toMatch(/^<system-reminder>\n🔖 Checkpoint from the opencode-acp plugin \(not from the user\)/);
    expect(text).toContain("Todo list: 1 in progress, 1 pending, 1 completed.");
    expect(text).toContain("Update the list with todowrite");
    expect(text.endsWith("</system-reminder>")).toBe(true);
  });

  it("without a list it suggests one; with everything done it says so", () => {
    expect(reminderText([user("go"), ...steps(8)], settings)).toContain("8 model calls without a todo list");
    expect(reminderText([user("go"), ...steps(8)], settings)).toContain("write a todo list with todowrite");
    const done = [user("go"), todo([{ id: "1", content: "A", status: "completed" }]), ...steps(8)];
    expect(reminderText(done, settings)).toContain("Every task is done");
  });

  it("flags a task in progress for stuckTaskTurns calls, even while the list is being updated", () => {
    const a = { id: "1", content: "Refactor parser", status: "in_progress" };
    // the list is rewritten every 4 calls (so the plain reminder never fires) but task 1 stays in progress
    const history: Message[] = [user("go")];
    const stuckAt: number[] = [];
    for (let call = 0; call < 30; call++) {
      history.push(call % 4 === 0 ? todo([a, { id: "2", content: `t${call}`, status: "pending" }]) : step(call));
      const text = reminderText(history, settings);
      if (text) {
        expect(text).toContain('⚠ "Refactor parser" has been in progress for');
        stuckAt.push(sessionFacts(history).stuck[0].turns);
      }
    }
    expect(stuckAt).toEqual([12, 16, 20, 24, 28]);
  });

  it("a task that leaves in_progress is no longer tracked", () => {
    const history = [user("go"), todo([{ id: "1", content: "A", status: "in_progress" }]), ...steps(5), todo([{ id: "1", content: "A", status: "completed" }, { id: "2", content: "B", status: "in_progress" }]), ...steps(3)];
    expect(sessionFacts(history).stuck).toEqual([{ todo: { id: "2", content: "B", status: "in_progress", priority: undefined }, turns: 3 }]);
  });

  it("compaction summaries are not model calls of the agent", () => {
    const summary = assistant([], "summary of the work");
    summary.info.summary = true;
    expect(sessionFacts([user("go"), ...steps(3), summary, ...steps(2)]).turns).toBe(5);
  });

  it("lists the largest not-yet-pruned outputs by id", () => {
    const pruner = createPruner({ config: { preset: "verbose", tool: true, commit: { minTokens: 0 }, idsFromTokens: 0 } }); // no age or size rules
    const history = [
      user("go"),
      assistant([{ tool: "read", input: { filePath: "src/big.ts" }, output: bigText("big", 400), id: "prt_big" }]),
      assistant([{ tool: "grep", input: { pattern: "needle" }, output: bigText("grep", 100), id: "prt_grep" }]),
      assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st", 50), id: "prt_st1" }]),
      assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("st", 60), id: "prt_st2" }]),
      ...steps(4),
    ];
    const copy = structuredClone(history);
    pruner.transform(copy);
    const state = pruner.state(copy[0].info.sessionID);
    expect(state.decisions.prt_st1?.output).toBeDefined(); // superseded by the identical call
    const text = reminderText(copy, settings, { isPruned: (id) => Boolean(state.decisions[id]?.output) })!;
    const listed = text.split("\n").filter((l) => /^ {2}t[0-9a-z]+ /.test(l));
    const ids = listed.map((l) => l.trim().split(/\s+/)[0]);
    expect(ids.map((id) => state.ids?.[id])).toEqual(["prt_big", "prt_grep", "prt_st2"]); // the older git status is pruned
    expect(listed[0]).toMatch(/^ {2}t[0-9a-z]+ {2}\s*\d+\.\dK tokens {2}read src\/big\.ts$/);
    expect(text).toContain("discard or distill the ones you no longer need with context_prune");
    expect(reminderText(copy, reminderSettings({ tool: false }))).not.toContain("context_prune");
  });

  it("finds an output's own id behind the ids of the reasoning it carries", () => {
    const out = `${bigText("x", 20)}\n[acp:r1ab] [acp:t2cd]`;
    const part = { id: "p", type: "tool", tool: "bash", state: { status: "completed", input: { command: "ls" }, output: out } };
    expect(tagInOutput(part)).toBe("t2cd");
    expect(prunableOutputs([{ info: { id: "m", sessionID: "s", role: "assistant" }, parts: [part] }], tagInOutput)).toEqual([{ id: "t2cd", partId: "p", tokens: Math.ceil(bigText("x", 20).length / 4), label: "bash ls" }]);
  });
});

describe("automata mode", () => {
  it("reflects every initialTurns calls after a user message containing the keyword", () => {
    const history: Message[] = [user("Automata: improve the test suite")];
    const at: number[] = [];
    for (let call = 1; call <= 24; call++) {
      history.push(todo([{ id: "1", content: `t${call}`, status: "in_progress" }])); // keeps the todo reminder quiet
      if (reminderText(history, settings)?.includes("🔄 Reflection (automata mode")) at.push(call);
    }
    expect(at).toEqual([8, 16, 24]);
  });

  it("stays on for the session and counts from the user's last message", () => {
    const history = [user("run in automata mode"), ...steps(3), user("also fix the docs"), todo([]), ...steps(7)];
    expect(sessionFacts(history)).toMatchObject({ automata: true, sinceUser: 8 });
    expect(reminderText(history, settings)).toContain("8 model calls since the user's last message");
  });

  it("needs the word in a message the user wrote", () => {
    const notice = user("acp: automata", []);
    notice.parts[0].ignored = true;
    const synthetic = user("automata");
    synthetic.parts[0].synthetic = true;
    expect(sessionFacts([user("go"), notice, synthetic, ...steps(8)]).automata).toBe(false);
    expect(sessionFacts([user("automatable things")]).automata).toBe(false);
  });

  it("todo reminder first, reflection second, in one message", () => {
    const text = reminderText([user("automata please"), ...steps(8)], settings)!;
    expect(text.indexOf("🔖 Checkpoint")).toBeLessThan(text.indexOf("🔄 Reflection"));
    expect(text.match(/<system-reminder>/g)).toHaveLength(1);
  });

  it("asks the model to prune only once ids exist", () => {
    const history = [user("automata please"), ...steps(8)];
    const PRUNE = "Prune tool outputs you no longer need with context_prune";
    expect(reminderText(history, settings)).not.toContain(PRUNE); // no output carries an id yet
    expect(reminderText(history, settings, { idsShown: false })).not.toContain(PRUNE);
    expect(reminderText(history, settings, { idsShown: true })).toContain(PRUNE);
    expect(reminderText(history, settings, { idsShown: false })).toContain("2. Then continue working on your own");
  });

  it("can be switched off", () => {
    const s = reminderSettings({ automata: { enabled: false }, todoReminder: { enabled: false } });
    expect(reminderText([user("automata please"), ...steps(8)], s)).toBeUndefined();
  });
});

describe("settings", () => {
  it("a partial object keeps the other defaults; enabled:false turns both off", () => {
    expect(reminderSettings({ todoReminder: { initialTurns: 3 } }).todo).toEqual({ enabled: true, initialTurns: 3, repeatTurns: 4, stuckTaskTurns: 12 });
    expect(reminderSettings({ automata: { initialTurns: 0 } }).automata.initialTurns).toBe(8);
    const off = reminderSettings({ enabled: false });
    expect([off.todo.enabled, off.automata.enabled, off.tool]).toEqual([false, false, false]);
  });
});

describe("placement", () => {
  it("appends one synthetic user message after the newest message and leaves the rest untouched", () => {
    const history = [user("go"), ...steps(8)];
    const before = structuredClone(history);
    const text = applyReminders(history, settings)!;
    expect(history).toHaveLength(before.length + 1);
    expect(history.slice(0, -1)).toEqual(before);
    const r = history.at(-1)!;
    expect(r.info).toMatchObject({ role: "user", sessionID: before[0].info.sessionID });
    expect(r.parts).toEqual([expect.objectContaining({ type: "text", text, synthetic: true, metadata: { [REMINDER_MARK]: true } })]);
    expect(r.parts[0].ignored).toBeUndefined(); // it is for the model
  });

  it("a second pass over the same array keeps one reminder", () => {
    const history = [user("go"), ...steps(8)];
    applyReminders(history, settings);
    applyReminders(history, settings);
    expect(history.filter((m) => m.parts.some((p) => p.metadata?.[REMINDER_MARK]))).toHaveLength(1);
    expect(stripReminders(history)).toBe(1);
    expect(history).toHaveLength(9);
  });

  it("moves with the tail: the next request starts with the previous one minus the reminder", () => {
    const history = [user("go"), ...steps(8)];
    const call8 = structuredClone(history);
    applyReminders(call8, settings);
    const call9 = structuredClone([...history, step(8)]);
    expect(applyReminders(call9, settings)).toBeUndefined();
    expect(call9.slice(0, call8.length - 1)).toEqual(call8.slice(0, -1));
    expect(JSON.stringify(call9)).not.toContain("Checkpoint");
  });

  it("keeps the agent and model of the user's last message", () => {
    const u = user("go");
    u.info.agent = "build";
    u.info.model = { providerID: "p", modelID: "m" };
    const history = [u, ...steps(2)];
    const r = insertReminder(history, "x")!;
    expect(r.info).toMatchObject({ agent: "build", model: { providerID: "p", modelID: "m" } });
  });
});
