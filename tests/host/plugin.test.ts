// The plugin's hooks with a stub host client: where reminders go, when notifications post,
// /acp budget's limit lookup, and that no hook lets an error escape.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import AcpPlugin from "../../src/host/plugin.js";
import type { Message } from "../../src/graph/types.js";
import { REMINDER_MARK } from "../../src/host/reminders.js";
import { assistant, bigText, SID, toolPart, user } from "../helpers/session.js";

const saved = { ...process.env };
let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "acp-plugin-"));
  process.env.XDG_DATA_HOME = join(root, "data");
  process.env.XDG_CONFIG_HOME = join(root, "config");
  delete process.env.OPENCODE_CONFIG_DIR;
});
afterAll(() => {
  process.env = saved;
  rmSync(root, { recursive: true, force: true });
});

interface Stub {
  posted: { path: { id: string }; body: any }[];
  client: any;
}

function stub(history: () => Message[], opts: { failPrompt?: boolean } = {}): Stub {
  const posted: Stub["posted"] = [];
  const client = {
    session: {
      prompt: async (req: any) => {
        if (opts.failPrompt) throw new Error("host gone");
        posted.push(req);
        return { data: {} };
      },
      get: async ({ path }: any) => ({ data: { id: path.id, parentID: path.id.startsWith("ses_child") ? SID : undefined } }),
      messages: async () => ({ data: history() }),
    },
    config: { providers: async () => ({ data: { providers: [{ id: "p", models: { m: { limit: { context: 10000, output: 2000 } } } }] } }) },
  };
  return { posted, client };
}

/** The project folder of the last plugin() (tests that edit its configuration). */
let lastProject = "";

async function plugin(config: Record<string, unknown>, s: Stub) {
  const project = mkdtempSync(join(root, "project-"));
  lastProject = project;
  mkdirSync(join(project, ".opencode"));
  writeFileSync(join(project, ".opencode", "acp.jsonc"), JSON.stringify(config));
  return (await AcpPlugin({ client: s.client, worktree: project, directory: project } as any)) as any;
}

const who = (m: Message) => Object.assign(m.info, { agent: "build", model: { providerID: "p", modelID: "m" } }) && m;
const step = (i: number) => assistant([{ tool: "bash", input: { command: `echo ${i}` }, output: `out ${i}` }]);

async function transform(hooks: any, history: Message[]): Promise<Message[]> {
  const copy = structuredClone(history);
  await hooks["experimental.chat.messages.transform"]({}, { messages: copy });
  return copy;
}

describe("plugin hooks", () => {
  it("the todo reminder rides at the end of the request on the call it is due, and only there", async () => {
    const s = stub(() => []);
    const hooks = await plugin({ pruneNotification: "off" }, s);
    const history: Message[] = [who(user("fix it"))];
    const withReminder: number[] = [];
    // what the provider receives (step-start markers are not sent; a rule drops them)
    const seen = (ms: Message[]) => ms.map((m) => ({ info: m.info, parts: m.parts.filter((p) => p.type !== "step-start") }));
    let previous: Message[] = [];
    for (let i = 0; i < 13; i++) {
      const sent = await transform(hooks, history);
      const marked = sent.filter((m) => m.parts.some((p) => p.metadata?.[REMINDER_MARK]));
      if (marked.length) {
        expect(marked).toEqual([sent.at(-1)]);
        expect(sent.at(-1)!.info).toMatchObject({ role: "user", agent: "build" });
        withReminder.push(i);
      }
      // the previous request, minus its reminder, is a prefix of this one: the cache holds
      expect(seen(sent.slice(0, previous.length))).toEqual(seen(previous));
      previous = marked.length ? sent.slice(0, -1) : sent;
      history.push(step(i));
    }
    expect(withReminder).toEqual([8, 12]);
    expect(s.posted).toEqual([]);
  });

  it("no reminder in the copy the compaction agent summarises", async () => {
    const hooks = await plugin({}, stub(() => []));
    const history = [who(user("fix it")), ...Array.from({ length: 8 }, (_, i) => step(i))];
    await hooks["experimental.session.compacting"]({ sessionID: SID }, { context: [] });
    expect(JSON.stringify(await transform(hooks, history))).not.toContain("Checkpoint");
    await hooks["experimental.chat.system.transform"]({ sessionID: SID, model: {} }, { system: ["compaction prompt"] });
    expect(JSON.stringify(await transform(hooks, history))).toContain("Checkpoint");
  });

  it("no id tags in the copy the compaction agent summarises; the main requests keep theirs", async () => {
    const hooks = await plugin({ pruneNotification: "off", idsFromTokens: 0 }, stub(() => []));
    const big = (i: number) => assistant([{ tool: "bash", input: { command: `cat ${i}` }, output: bigText(`f${i}`) }], `${"I read it. ".repeat(40)}[acp:t999]`);
    const history = [who(user("fix it")), big(1), big(2), who(user("go on")), big(3)];
    const main = JSON.stringify(await transform(hooks, history));
    expect(main).toMatch(/\[acp:t\w+\]/);
    expect(main).toMatch(/\[acp:m\w+\]/);
    expect(main).not.toContain("[acp:t999]"); // the model's echo
    await hooks["experimental.session.compacting"]({ sessionID: SID }, { context: [] });
    const summarised = JSON.stringify(await transform(hooks, history));
    expect(summarised).not.toMatch(/\[acp:/);
    await hooks["experimental.chat.system.transform"]({ sessionID: SID, model: {} }, { system: ["compaction prompt"] });
    expect(JSON.stringify(await transform(hooks, history))).toBe(main);
  });

  it("after a turn that pruned, one ignored no-reply message on session.idle; none while the loop runs", async () => {
    const s = stub(() => []);
    const hooks = await plugin({ commit: { minTokens: 0 }, pruneNotification: "minimal", todoReminder: { enabled: false } }, s);
    const history: Message[] = [
      who(user("go")),
      assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("a") }]),
      assistant([{ tool: "bash", input: { command: "git status" }, output: bigText("b") }]),
    ];
    const sent = await transform(hooks, history);
    expect(JSON.stringify(sent)).toContain("superseded");
    expect(s.posted).toEqual([]); // not from inside the transform
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: SID } } });
    expect(s.posted).toHaveLength(1);
    const [req] = s.posted;
    expect(req.path.id).toBe(SID);
    expect(req.body).toMatchObject({ noReply: true, agent: "build", model: { providerID: "p", modelID: "m" } });
    expect(req.body.parts).toEqual([{ type: "text", ignored: true, time: { start: expect.any(Number), end: expect.any(Number) }, text: expect.stringMatching(/^「 ⚙️ 1\(\d+(\.\d)?K\) ▼ 」 acp: pruned this turn$/) }]);
    expect(req.body.tools).toBeUndefined(); // would change the session's permissions
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: SID } } });
    expect(s.posted).toHaveLength(1); // nothing new
  });

  it("subagent sessions get neither reminders nor notifications", async () => {
    const s = stub(() => []);
    const hooks = await plugin({ subagents: true, commit: { minTokens: 0 } }, s);
    const sid = "ses_child1";
    const m = (x: Message) => {
      x.info.sessionID = sid;
      for (const p of x.parts) p.sessionID = sid;
      return x;
    };
    const history = [m(user("sub task")), m(assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("a") }])), m(assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("b") }])), ...Array.from({ length: 8 }, (_, i) => m(step(i)))];
    const sent = await transform(hooks, history);
    expect(JSON.stringify(sent)).toContain("superseded"); // pruned (subagents: true)
    expect(JSON.stringify(sent)).not.toContain("Checkpoint");
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: sid } } });
    expect(s.posted).toEqual([]);
  });

  it("a subagent has no context_prune, so with subagents: true it is pruned without ids, tags or note", async () => {
    const hooks = await plugin({ subagents: true, pruneNotification: "off", idsFromTokens: 0, commit: { minTokens: 0 } }, stub(() => []));
    const inSession = (sid: string) => (x: Message) => {
      x.info.sessionID = sid;
      for (const p of x.parts) p.sessionID = sid;
      return x;
    };
    const history = (sid: string) => [who(user("look")), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("a") }]), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("b") }]), assistant([{ tool: "bash", input: { command: "cat x" }, output: bigText("c") }])].map(inSession(sid));
    const child = JSON.stringify(await transform(hooks, history("ses_child2")));
    expect(child).toContain("superseded"); // pruned
    expect(child).not.toMatch(/\[acp:/);
    const system = { system: ["agent prompt"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "ses_child2", model: {} }, system);
    expect(system.system).toEqual(["agent prompt"]);
    // the main agent, which has the tool, gets both
    expect(JSON.stringify(await transform(hooks, history(SID)))).toMatch(/\[acp:t\w+\]/);
    await hooks["experimental.chat.system.transform"]({ sessionID: SID, model: {} }, system);
    expect(system.system).toHaveLength(2);
  });

  it("/acp ends with a readable error the host passes through, after the answer is stored where `opencode run` prints it", async () => {
    const s = stub(() => []);
    const hooks = await plugin({}, s);
    const err = await hooks["command.execute.before"]({ command: "acp", sessionID: SID, arguments: "stats" }, { parts: [] }).catch((e: unknown) => e);
    expect(s.posted).toHaveLength(1);
    expect(s.posted[0].body.parts).toEqual([{ type: "text", ignored: true, time: { start: expect.any(Number), end: expect.any(Number) }, text: expect.stringMatching(/^acp stats/) }]);
    // OpenCode 1.18.33 answers a failure named like one of its config errors with the error's toObject() (no log)
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe("ConfigFrontmatterError");
    const message = "acp: /acp stats answered (the reply is above and in the session). OpenCode ends a plugin's command this way: it has no other means to skip the model call.";
    expect(err.message).toBe(message);
    expect(err.toObject()).toEqual({ name: "UnknownError", _tag: "CliError", message, data: { message } });
    // other commands pass
    await expect(hooks["command.execute.before"]({ command: "review", sessionID: SID, arguments: "" }, { parts: [] })).resolves.toBeUndefined();
  });

  it("configuration problems go with the session's first message (an ignored part opencode run prints), once", async () => {
    const s = stub(() => []);
    const project = mkdtempSync(join(root, "project-"));
    mkdirSync(join(project, ".opencode"));
    writeFileSync(join(project, ".opencode", "acp.jsonc"), '{ "protectedFile": [] }');
    const hooks = (await AcpPlugin({ client: s.client, worktree: project, directory: project } as any)) as any;
    const message = (text: string, extra: Record<string, unknown> = {}) => ({ message: { id: "msg_u1", sessionID: SID, role: "user" }, parts: [{ id: "prt_u1", sessionID: SID, messageID: "msg_u1", type: "text", text, ...extra }] });
    const ours = message("a notice", { ignored: true });
    await hooks["chat.message"]({ sessionID: SID }, ours);
    expect(ours.parts).toHaveLength(1); // the plugin's own notices are left alone
    const first = message("fix the bug");
    await hooks["chat.message"]({ sessionID: SID }, first);
    expect(first.parts[1]).toEqual({ id: "prt_u1acp", sessionID: SID, messageID: "msg_u1", type: "text", ignored: true, time: { start: expect.any(Number), end: expect.any(Number) }, text: expect.stringContaining(`${join(project, ".opencode", "acp.jsonc")}:1:3`) });
    expect(first.parts[1].text).toMatch(/^acp: configuration problems/);
    const second = message("go on");
    await hooks["chat.message"]({ sessionID: SID }, second);
    expect(second.parts).toHaveLength(1);
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: SID } } });
    expect(s.posted).toEqual([]); // told already
    // a session told nothing yet hears it with its first /acp reply
    await hooks["command.execute.before"]({ command: "acp", sessionID: "ses_other", arguments: "protected" }, { parts: [] }).catch(() => {});
    expect(s.posted[0].body.parts[0].text).toMatch(/^acp protected[\s\S]*\n\nacp: configuration problems/);
  });

  it("/acp budget reads the model's limit through the client", async () => {
    const last = assistant([], "done");
    Object.assign(last.info, { providerID: "p", modelID: "m", tokens: { input: 500, output: 100, reasoning: 0, cache: { read: 7000, write: 400 } } });
    const s = stub(() => [who(user("go")), last]);
    const hooks = await plugin({}, s);
    await expect(hooks["command.execute.before"]({ command: "acp", sessionID: SID, arguments: "budget" }, { parts: [] })).rejects.toThrow("acp: /acp budget answered");
    const text: string = s.posted[0].body.parts[0].text;
    expect(text.split("\n")[0]).toBe("acp budget: 8K of 10K tokens (80.0%) used by the last request (limit of p/m from OpenCode's model list)");
    expect(text).toContain("/acp sweep");
  });

  it("hooks fail open: a host that rejects every post does not break the turn or the event loop", async () => {
    const s = stub(() => [], { failPrompt: true });
    const hooks = await plugin({ commit: { minTokens: 0 } }, s);
    const history = [who(user("go")), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("a") }]), assistant([{ tool: "bash", input: { command: "ls" }, output: bigText("b") }])];
    expect(JSON.stringify(await transform(hooks, history))).toContain("superseded");
    await expect(hooks.event({ event: { type: "session.idle", properties: { sessionID: SID } } })).resolves.toBeUndefined();
    await expect(hooks.event({ event: { type: "session.idle" } })).resolves.toBeUndefined();
    await expect(hooks["experimental.chat.messages.transform"]({}, { messages: [{ info: null, parts: null }] })).resolves.toBeUndefined();
  });
});

// acp.jsonc and rule files edited while one host runs (`opencode serve`, the TUI): re-read within a
// second, applied through the commit policy, problems told once; a broken edit never stops pruning.
describe("configuration changes while the host runs", () => {
  afterEach(() => vi.useRealTimers());
  const CLEAR_BASH = `rules:
  clear-bash:
    phase: reduce
    description: Clears every bash output
    when:
      all:
        - { fact: tool, operator: equal, value: bash }
        - { fact: status, operator: equal, value: completed }
    then: { action: clear }
`;
  const BROKEN = `rules:
  broken:
    phase: reduce
    description: misspelt fact
    when:
      all:
        - { fact: tol, operator: equal, value: bash }
    then: { action: clear }
`; // line 7, column 19: unknown fact "tol"
  const bash = (i: number) => assistant([{ tool: "bash", input: { command: `cat log${i}` }, output: bigText(`log${i}`), id: `prt_bash${i}` }]);
  const later = (ms: number) => vi.setSystemTime(Date.now() + ms);
  const outputOf = (ms: Message[], i: number) => String(toolPart(ms, `prt_bash${i}`)?.state?.output);

  it("a rule file added applies to new outputs at once; the sent ones wait for the commit policy", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const s = stub(() => []);
    // commit.minTokens far above what is pending: changes to the sent prefix wait
    const hooks = await plugin({ pruneNotification: "off", todoReminder: { enabled: false }, commit: { minTokens: 1_000_000 } }, s);
    const project = lastProject;
    const history: Message[] = [who(user("read the logs")), bash(1)];
    const first = await transform(hooks, history);
    expect(outputOf(first, 1)).toContain("log1 line 299");

    const rules = join(project, ".opencode", "acp", "rules");
    mkdirSync(rules, { recursive: true });
    writeFileSync(join(rules, "clear-bash.yaml"), CLEAR_BASH);
    later(1500);
    history.push(bash(2));
    const second = await transform(hooks, history);
    expect(outputOf(second, 2)).not.toContain("log2 line"); // new: the rule applies at once
    expect(outputOf(second, 2)).toContain("cleared");
    expect(outputOf(second, 1)).toBe(outputOf(first, 1)); // sent: unchanged, pending

    // a broken file beside it: told once, with file:line:col; the valid rule keeps applying
    writeFileSync(join(rules, "typo.yaml"), BROKEN);
    later(1500);
    const parts: any[] = [{ id: "prt_u2", type: "text", text: "go on" }];
    await hooks["chat.message"]({ sessionID: SID }, { message: { id: "msg_u2" }, parts });
    expect(parts).toHaveLength(2);
    expect(parts[1]).toMatchObject({ ignored: true });
    expect(parts[1].text).toContain(`${join(rules, "typo.yaml")}:7:19`);
    expect(parts[1].text).not.toContain("clear-bash.yaml");
    const again: any[] = [{ id: "prt_u3", type: "text", text: "and more" }];
    await hooks["chat.message"]({ sessionID: SID }, { message: { id: "msg_u3" }, parts: again });
    expect(again).toHaveLength(1); // once per session
    history.push(bash(3));
    const third = await transform(hooks, history);
    expect(outputOf(third, 3)).toContain("cleared");
    expect(outputOf(third, 1)).toBe(outputOf(first, 1));
  });
});
