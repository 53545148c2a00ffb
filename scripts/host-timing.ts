// npm run bench:host [-- --turns 10 --steps 3 --calls 10 --rounds 12 --json out.json]: the
// plugin's share of a request in the real host. Not part of npm test (about two minutes).
// --dump session.json writes the stored session (the host's messages) for profiling offline.
//
// One `opencode serve` (the pinned opencode-ai binary, tests/e2e/harness.ts) with the fake model
// answering at once builds a long session: `turns` user prompts, each answered by `steps` steps
// of `calls` tool calls (reads of ~8 KB files and `cat`s of them in bash), with the built plugin
// (dist/host/plugin.js, or $ACP_E2E_PLUGIN) loaded through a timing wrapper. Then `rounds` times
// two prompts on that session, one with the plugin and one without, in alternating order; each
// is answered by a single text reply. The wrapper times every call of every plugin hook in the
// serve process (epoch ms, performance.timeOrigin + now()), and skips all of them while the
// flag file exists ("without"; the context_prune tool stays registered, it is only offered).
// Per request:
//   to request  POST /session/:id/message until the main request's headers reach the fake model:
//               the host loads the session, runs the hooks, builds the provider request
//   whole       until the POST returns (the answer stored, the step closed)
//   plugin      the hooks' cost inside each window: the whole time of the chat hooks, which the
//               host awaits on the request's path, and the synchronous part of event hooks, which
//               it does not wait for (see `cost`)
// Last, the serve is restarted and one request is timed with the plugin: its first call in a new
// process is a cold pass over the whole history (after a warm-up request without it).
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage, Server } from "node:http";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ACP_PLUGIN, createWorkspace, type ServeHandle, type Workspace } from "../tests/e2e/harness.js";
import type { ScriptedToolCall, Turn } from "../tests/e2e/fake-model.js";

const args = process.argv.slice(2);
const num = (name: string, dflt: number) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : dflt;
};
const TURNS = num("--turns", 10);
const STEPS = num("--steps", 3);
const CALLS = num("--calls", 10);
const ROUNDS = num("--rounds", 12);
const FILES = 40;
const now = () => performance.timeOrigin + performance.now();
const round2 = (x: number) => Math.round(x * 100) / 100;

/** The wrapper plugin: loads the built plugin, times each hook call, passes through when `off` exists. */
function wrapperSource(plugin: string, log: string, off: string): string {
  return `import acp from ${JSON.stringify(pathToFileURL(plugin).href)};
import { appendFileSync, existsSync } from "node:fs";
const now = () => performance.timeOrigin + performance.now();
export default async (input, options) => {
  const hooks = await acp(input, options);
  const out = {};
  for (const [name, fn] of Object.entries(hooks)) {
    if (typeof fn !== "function" || name === "config") { out[name] = fn; continue; }
    out[name] = async (...a) => {
      if (existsSync(${JSON.stringify(off)})) return;
      const start = now();
      let sync = start;
      try {
        const pending = fn(...a);
        sync = now();
        return await pending;
      } finally {
        const end = now();
        const hook = name === "event" ? "event " + a[0]?.event?.type : name;
        appendFileSync(${JSON.stringify(log)}, JSON.stringify({ hook, start, sync, end }) + "\\n");
      }
    };
  }
  return out;
};
`;
}

/** ~8 KB of source-like text, different per file. */
function fileText(i: number): string {
  const lines: string[] = [];
  for (let l = 0; lines.join("\n").length < 8000; l++)
    lines.push(`export function handler${i}_${l}(request: Request, attempt = ${l}): Promise<Response> { return fetch(request, { keepalive: ${l % 2 === 0} }); }`);
  return `${lines.join("\n")}\n`;
}

interface HookCall {
  hook: string;
  start: number;
  /** When the hook function returned its promise (its synchronous part ended). */
  sync: number;
  end: number;
}
/**
 * A hook call's cost to the host: the host awaits the chat hooks in the request's path, so their
 * whole time counts; it does not wait for event hooks, so only their synchronous part holds it up
 * (their wall time also holds whatever else the host ran before their promise settled).
 */
const cost = (c: HookCall, to = Infinity) => Math.min(c.hook.startsWith("event ") ? c.sync : c.end, to) - c.start;
interface Timing {
  plugin: boolean;
  toRequest: number;
  whole: number;
  pluginToRequest: number;
  pluginWhole: number;
  transform: number;
  /** Size of the messages the model received (JSON characters). */
  promptChars: number;
  /** Hook time inside the whole request, per hook. */
  hooks: Record<string, number>;
}

class Host {
  private serve!: ServeHandle;
  /** When the fake model had parsed each main request (its turn was asked for). */
  private marks: number[] = [];
  /** When each chat request's headers reached the fake model: the host had built it and begun to send. */
  private arrivals: number[] = [];
  constructor(
    private ws: Workspace,
    private log: string,
    private off: string,
  ) {
    const server = (ws.model as unknown as { server: Server }).server;
    server.prependListener("request", (req: IncomingMessage) => {
      if (/\/chat\/completions\/?$/.test(req.url ?? "")) this.arrivals.push(now());
    });
  }

  async start(): Promise<void> {
    this.serve = await this.ws.serve();
  }
  async stop(): Promise<void> {
    await this.serve.stop();
  }

  private async api(method: string, route: string, body?: unknown): Promise<any> {
    const res = await fetch(`${this.serve.url}${route}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 500)}`);
    return text ? JSON.parse(text) : undefined;
  }

  /** The stored session (`opencode export` cuts long output short). */
  messages(sessionID: string): Promise<{ info: unknown; parts: unknown[] }[]> {
    return this.api("GET", `/session/${sessionID}/message`);
  }

  createSession(): Promise<{ id: string }> {
    return this.api("POST", "/session", {});
  }

  /** One prompt, answered by `turns` (the last a text); returns when the host has stored the answer. */
  async prompt(sessionID: string, text: string, turns: Turn[]): Promise<void> {
    this.ws.model.enqueue(
      ...turns.map((t) => () => {
        this.marks.push(now());
        return t;
      }),
    );
    await this.api("POST", `/session/${sessionID}/message`, { parts: [{ type: "text", text }] });
    if (this.ws.model.pending !== 0) throw new Error(`the host made fewer requests than scripted (${this.ws.model.pending} left)`);
  }

  /** A prompt answered by one text reply, timed, with the plugin on or off. */
  async timed(sessionID: string, plugin: boolean, k: number): Promise<Timing> {
    if (plugin) rmSync(this.off, { force: true });
    else writeFileSync(this.off, "");
    writeFileSync(this.log, "");
    this.marks = [];
    const t0 = now();
    await this.prompt(sessionID, `continue ${k}`, [{ text: `ok ${k}` }]);
    const t2 = now();
    await new Promise((r) => setTimeout(r, 300)); // the wrapper's last lines, and a quiet host
    // the main request's arrival: the last chat request to arrive before its turn was asked for
    const t1 = Math.max(...this.arrivals.filter((a) => a >= t0 && a <= this.marks[0]));
    if (!(t1 >= t0)) throw new Error("the main request's arrival was not seen");
    const calls = readHookCalls(this.log);
    const inside = (from: number, to: number) => calls.filter((c) => c.start >= from && c.start < to).reduce((s, c) => s + cost(c, to), 0);
    const transform = calls.filter((c) => c.hook === "experimental.chat.messages.transform" && c.start < t1).reduce((s, c) => s + c.end - c.start, 0);
    // (lines of hook calls that began before t0 belong to the previous request)
    if (!plugin && calls.some((c) => c.start >= t0)) throw new Error("the plugin ran while switched off");
    if (plugin && transform === 0) throw new Error("the plugin's transform hook did not run");
    const hooks: Record<string, number> = {};
    for (const c of calls) if (c.start >= t0 && c.start < t2) hooks[c.hook] = round2((hooks[c.hook] ?? 0) + cost(c, t2));
    const sent = this.ws.model.mainRequests.at(-1)!;
    return { plugin, promptChars: JSON.stringify(sent.body.messages).length, toRequest: t1 - t0, whole: t2 - t0, pluginToRequest: inside(t0, t1), pluginWhole: inside(t0, t2), transform, hooks };
  }
}

function readHookCalls(file: string): HookCall[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as HookCall);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? round2(s[Math.floor((s.length - 1) / 2)]) : NaN;
};

async function main() {
  if (!existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: npm run build`);
  const aux = mkdtempSync(path.join(tmpdir(), "acp-host-timing-"));
  const wrapper = path.join(aux, "timing-plugin.mjs");
  const log = path.join(aux, "hooks.jsonl");
  const off = path.join(aux, "off");
  appendFileSync(wrapper, wrapperSource(ACP_PLUGIN, log, off));
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[`src/mod${i}.ts`] = fileText(i);
  const ws = await createWorkspace({ files, plugins: [wrapper], contextLimit: 4_000_000 });
  const host = new Host(ws, log, off);
  try {
    await host.start();
    const session = await host.createSession();
    const loadStart = loadavg().map(round2);
    // the long session, with the plugin on
    let n = 0;
    const t = now();
    for (let u = 0; u < TURNS; u++) {
      const steps: Turn[] = [];
      for (let s = 0; s < STEPS; s++) {
        const toolCalls: ScriptedToolCall[] = [];
        for (let c = 0; c < CALLS; c++, n++) {
          const file = path.join(ws.projectDir, `src/mod${(n * 7) % FILES}.ts`);
          toolCalls.push(
            n % 3 === 2
              ? { id: `call_${n}`, name: "bash", arguments: { command: `cat ${file}`, description: `show mod ${n}` } }
              : { id: `call_${n}`, name: "read", arguments: { filePath: file } },
          );
        }
        steps.push({ toolCalls });
      }
      await host.prompt(session.id, `work on part ${u}`, [...steps, { text: `part ${u} done` }]);
    }
    const buildSeconds = round2((now() - t) / 1000);
    const stored = await host.messages(session.id);
    const parts = stored.reduce((s, m) => s + m.parts.length, 0);
    const jsonMB = round2(JSON.stringify(stored).length / 1024 / 1024);
    const dump = args.indexOf("--dump");
    if (dump >= 0) writeFileSync(args[dump + 1], JSON.stringify(stored)); // for offline profiling of the pruner
    // warm request each way, then the timed rounds, alternating which goes first
    await host.timed(session.id, true, 0);
    await host.timed(session.id, false, 0);
    const timings: Timing[] = [];
    for (let r = 0; r < ROUNDS; r++) for (const on of r % 2 === 0 ? [true, false] : [false, true]) timings.push(await host.timed(session.id, on, r + 1));
    // a new serve: the plugin's first call is a cold pass (the host warmed up without it first)
    await host.stop();
    await host.start();
    await host.timed(session.id, false, 100);
    const cold = await host.timed(session.id, true, 101);
    await host.stop();
    if (ws.model.scriptErrors.length) throw new Error(ws.model.scriptErrors.join("\n"));

    const on = timings.filter((x) => x.plugin);
    const offs = timings.filter((x) => !x.plugin);
    const m = (xs: Timing[], k: keyof Omit<Timing, "plugin" | "hooks">) => median(xs.map((x) => x[k]));
    const result = {
      node: process.version,
      loadavgStart: loadStart,
      loadavgEnd: loadavg().map(round2),
      session: { turns: TURNS, toolCalls: n, messages: stored.length, parts, jsonMB, buildSeconds },
      rounds: ROUNDS,
      with: { promptChars: m(on, "promptChars"), toRequest: m(on, "toRequest"), whole: m(on, "whole"), plugin: m(on, "pluginToRequest"), pluginWhole: m(on, "pluginWhole"), transform: m(on, "transform") },
      without: { promptChars: m(offs, "promptChars"), toRequest: m(offs, "toRequest"), whole: m(offs, "whole") },
      hooks: Object.fromEntries([...new Set(on.flatMap((x) => Object.keys(x.hooks)))].map((h) => [h, median(on.map((x) => x.hooks[h] ?? 0))])),
      pluginShareToRequest: round2(m(on, "pluginToRequest") / m(on, "toRequest")),
      pluginShareWhole: round2(m(on, "pluginWhole") / m(on, "whole")),
      cold: { toRequest: round2(cold.toRequest), whole: round2(cold.whole), plugin: round2(cold.pluginToRequest), transform: round2(cold.transform) },
      timings,
    };
    const ms = (x: number) => `${x}`.padStart(9);
    console.log(`real host (opencode serve, ${ACP_PLUGIN}), node ${process.version}, load average ${result.loadavgStart.join(" ")} → ${result.loadavgEnd.join(" ")}`);
    console.log(`session: ${TURNS} prompts, ${n} tool calls, ${result.session.messages} messages, ${parts} parts, ${jsonMB} MB of JSON (built in ${buildSeconds} s)`);
    console.log(`ms per request, median of ${ROUNDS} each    to request     whole   plugin (to request / whole)   of which transform`);
    console.log(`  with the plugin                     ${ms(result.with.toRequest)} ${ms(result.with.whole)}   ${ms(result.with.plugin)} / ${ms(result.with.pluginWhole)}        ${ms(result.with.transform)}`);
    console.log(`  without                             ${ms(result.without.toRequest)} ${ms(result.without.whole)}`);
    console.log(`  first call of a new serve (cold)    ${ms(result.cold.toRequest)} ${ms(result.cold.whole)}   ${ms(result.cold.plugin)}                    ${ms(result.cold.transform)}`);
    console.log(`  per hook, whole request (median): ${Object.entries(result.hooks).map(([h, v]) => `${h} ${v}`).join(", ")}`);
    console.log(`plugin's share: ${Math.round(100 * result.pluginShareToRequest)} % of the time to the request, ${Math.round(100 * result.pluginShareWhole)} % of the whole request`);
    console.log(`with − without (medians): ${round2(result.with.toRequest - result.without.toRequest)} ms to the request, ${round2(result.with.whole - result.without.whole)} ms whole; the model received ${result.with.promptChars} against ${result.without.promptChars} characters of messages`);
    const at = args.indexOf("--json");
    if (at >= 0) {
      writeFileSync(args[at + 1], `${JSON.stringify(result, null, 2)}\n`);
      console.log(`wrote ${args[at + 1]}`);
    }
  } finally {
    await ws.dispose();
    rmSync(aux, { recursive: true, force: true });
  }
}

await main();
