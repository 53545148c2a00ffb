// End-to-end harness: runs the REAL opencode binary headless (`opencode run`) in an isolated
// HOME/XDG sandbox against the scripted fake model (fake-model.ts) on 127.0.0.1.
//
//   const ws = await createWorkspace({ files: { "notes.txt": "..." }, plugins: [pluginPath] });
//   try {
//     ws.model.enqueue({ toolCalls: [...] }, { text: "done" });
//     const run = await ws.run("Please read notes.txt");
//     run.requests[1]  // what the model received on its second call
//   } finally { await ws.dispose(); }
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { FakeModel, type RecordedRequest } from "./fake-model.js";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NODE_MODULES = path.join(REPO_ROOT, "node_modules");
/** `opencode` from the opencode-ai devDependency, unless OPENCODE_BIN points elsewhere. */
export const OPENCODE_BIN = process.env.OPENCODE_BIN ?? path.join(NODE_MODULES, ".bin", "opencode");
/**
 * The built plugin the scenario tests load: dist/host/plugin.js (`npm run build`), unless
 * ACP_E2E_PLUGIN points at another build (e.g. a snapshot of a known-good commit).
 */
export const ACP_PLUGIN = process.env.ACP_E2E_PLUGIN ?? path.join(REPO_ROOT, "dist", "host", "plugin.js");
/** Any npm install opencode attempts goes here and fails at once (nothing listens on port 9). */
const DEAD_REGISTRY = "http://127.0.0.1:9/";
const DEFAULT_TIMEOUT_MS = 90_000;
/** Process groups of running opencode children, killed if the test process exits early. */
const live = new Set<number>();
process.on("exit", () => live.forEach(killGroup));

export interface WorkspaceOptions {
  /** Project files, relative path -> content. Files under `.opencode/` make it a config dir (seeded too). */
  files?: Record<string, string>;
  /** Files in the global config dir ($XDG_CONFIG_HOME/opencode), e.g. `acp.jsonc`. */
  globalFiles?: Record<string, string>;
  /** Plugins for the `plugin` array: absolute paths (file or package dir) become file:// URLs, other strings are kept. */
  plugins?: (string | [string, Record<string, unknown>])[];
  /** Extra top-level keys merged into the project's opencode.json. */
  config?: Record<string, unknown>;
  /** Context limit of the fake model (default 128000). */
  contextLimit?: number;
  /**
   * Extra keys of the fake model's entry in `provider.fake.models["fake-model"]`, e.g.
   * `{ reasoning: true }`, or `limit` to replace the whole limit object.
   */
  modelConfig?: Record<string, unknown>;
  /** Extra environment for every opencode process of this workspace. */
  env?: Record<string, string>;
}

export interface RunOptions {
  /** Continue this session (`--session`). */
  session?: string;
  /** Run a slash command (`--command`); the prompt words become its arguments. */
  command?: string;
  /** Run as a thin client of a long-lived `opencode serve` (`--attach <url>`, see `Workspace.serve`). */
  attach?: string;
  timeoutMs?: number;
  env?: Record<string, string>;
}

export interface RunResult {
  /** Main-agent requests (they carry `tools`) received during this run, in order. */
  requests: RecordedRequest[];
  /** Every request received during this run, including title generation. */
  allRequests: RecordedRequest[];
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Parsed `--format json` events from stdout. */
  events: Record<string, any>[];
  sessionID: string | undefined;
}

export interface ServeHandle {
  /** e.g. http://127.0.0.1:41234, for `run(…, { attach: url })`. */
  url: string;
  /** Kills the server's process group and waits for it to exit. */
  stop(): Promise<void>;
  /** Everything the server printed so far (stdout + stderr, with --print-logs). */
  output(): string;
}

export interface ProcResult {
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

export class Workspace {
  readonly home: string;
  readonly projectDir: string;
  private pids = new Set<number>();

  constructor(
    readonly root: string,
    readonly model: FakeModel,
    private readonly extraEnv: Record<string, string>,
  ) {
    this.home = path.join(root, "home");
    this.projectDir = path.join(root, "project");
  }

  /** The isolated environment: nothing from the caller's HOME, config or API keys leaks in. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const h = this.home;
    return {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      LANG: "C.UTF-8",
      TMPDIR: path.join(this.root, "tmp"),
      HOME: h,
      XDG_CONFIG_HOME: path.join(h, ".config"),
      XDG_DATA_HOME: path.join(h, ".local/share"),
      XDG_CACHE_HOME: path.join(h, ".cache"),
      XDG_STATE_HOME: path.join(h, ".local/state"),
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_SHARE: "1",
      npm_config_registry: DEAD_REGISTRY,
      ...this.extraEnv,
      ...extra,
    };
  }

  /** Runs `opencode run --format json` with the prompt split into words (see docs/e2e.md). */
  async run(prompt: string, opts: RunOptions = {}): Promise<RunResult> {
    const before = this.model.requests.length;
    const args = ["run", "--format", "json", "--print-logs", "--log-level", "INFO"];
    if (opts.attach) args.push("--attach", opts.attach);
    if (opts.session) args.push("--session", opts.session);
    if (opts.command) args.push("--command", opts.command);
    args.push(...prompt.split(/\s+/).filter(Boolean));
    const proc = await this.exec(args, opts.timeoutMs, opts.env);
    const events = parseEvents(proc.stdout);
    const allRequests = this.model.requests.slice(before);
    return {
      ...proc,
      events,
      allRequests,
      requests: allRequests.filter((r) => r.kind === "main"),
      sessionID: events.find((e) => typeof e.sessionID === "string")?.sessionID,
    };
  }

  /**
   * `opencode export <id>`: the stored session as `{info, messages: [{info, parts}]}`. Its stdout
   * goes to a file: through a pipe, the export of a large session often came back cut short.
   */
  async exportSession(sessionID: string, timeoutMs?: number): Promise<{ info: any; messages: { info: any; parts: any[] }[] }> {
    const proc = await this.exec(["export", sessionID], timeoutMs, undefined, "file");
    if (proc.exitCode !== 0) throw new Error(`opencode export failed (${proc.exitCode}): ${proc.stderr.slice(-2000)}`);
    return JSON.parse(proc.stdout);
  }

  /**
   * Spawns opencode in the project dir: stdin closed, own process group, killed on timeout.
   * `stdout: "file"` sends its stdout to a temp file in the sandbox, read after exit and deleted.
   * Use it for large output: the Bun binary can exit before a big write to a pipe is drained (8 of
   * 10 exports of a 1.4 MB session came back cut, at 219 KB to 1.1 MB); a file gets all of it.
   */
  exec(args: string[], timeoutMs = DEFAULT_TIMEOUT_MS, env?: Record<string, string>, stdout: "pipe" | "file" = "pipe"): Promise<ProcResult> {
    return new Promise((resolve, reject) => {
      const outFile = stdout === "file" ? path.join(this.root, "tmp", `stdout-${randomUUID()}`) : undefined;
      const outFd = outFile === undefined ? "pipe" : fs.openSync(outFile, "wx");
      let child: ChildProcess;
      try {
        child = spawn(OPENCODE_BIN, args, {
          cwd: this.projectDir,
          env: this.env(env),
          stdio: ["ignore", outFd, "pipe"],
          detached: true,
        });
      } finally {
        if (typeof outFd === "number") fs.closeSync(outFd); // the child has its own copy
      }
      const pid = child.pid;
      if (pid === undefined) {
        if (outFile !== undefined) takeFile(outFile);
        return reject(new Error(`could not spawn ${OPENCODE_BIN}`));
      }
      live.add(pid);
      this.pids.add(pid);
      let piped = "";
      let stderr = "";
      let timedOut = false;
      child.stdout?.on("data", (d: Buffer) => (piped += d.toString("utf8")));
      child.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(pid);
      }, timeoutMs);
      child.on("error", (err) => {
        clearTimeout(timer);
        live.delete(pid);
        this.pids.delete(pid);
        if (outFile !== undefined) takeFile(outFile);
        reject(err);
      });
      child.on("close", (code) => {
        clearTimeout(timer);
        killGroup(pid); // helpers opencode left behind in its group
        live.delete(pid);
        this.pids.delete(pid);
        resolve({ exitCode: code, timedOut, stdout: outFile === undefined ? piped : takeFile(outFile), stderr });
      });
    });
  }

  /**
   * Starts `opencode serve` on 127.0.0.1 (a free port) in this workspace's environment and waits
   * until it listens. Runs with `{ attach: server.url }` then share one host process, so plugin
   * memory survives between prompts (as in the TUI). `stop()` kills it; `dispose()` does too.
   */
  async serve(opts: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<ServeHandle> {
    const port = await freePort();
    const child = spawn(OPENCODE_BIN, ["serve", "--hostname", "127.0.0.1", "--port", String(port), "--print-logs", "--log-level", "INFO"], {
      cwd: this.projectDir,
      env: this.env(opts.env),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not spawn ${OPENCODE_BIN} serve`);
    live.add(pid);
    this.pids.add(pid);
    let output = "";
    const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
    const stop = async () => {
      killGroup(pid);
      await closed;
      live.delete(pid);
      this.pids.delete(pid);
    };
    const url = await new Promise<string>((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        killGroup(pid);
        reject(new Error(`opencode serve ${why}:\n${output.slice(-3000)}`));
      };
      const timer = setTimeout(() => fail("did not listen in time"), opts.timeoutMs ?? 60_000);
      const onData = (d: Buffer) => {
        output += d.toString("utf8");
        const m = /listening on (http:\/\/[^\s]+)/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(m[1].replace(/\/$/, ""));
        }
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
      child.on("error", (e) => fail(`failed: ${e.message}`));
      child.on("close", (code) => fail(`exited (${code})`));
    });
    return { url, stop, output: () => output };
  }

  /** The plugin's per-session state file ($XDG_DATA_HOME/opencode/storage/plugin/acp/<id>.json). */
  acpStateFile(sessionID: string): string {
    return path.join(this.home, ".local/share/opencode/storage/plugin/acp", `${sessionID}.json`);
  }

  /** Kills this workspace's running opencode, stops the fake model, deletes the sandbox (unless E2E_KEEP). */
  async dispose(): Promise<void> {
    for (const pid of this.pids) killGroup(pid);
    await this.model.close();
    if (!process.env.E2E_KEEP) fs.rmSync(this.root, { recursive: true, force: true, maxRetries: 3 });
    else {
      // every request the fake model received, one JSON object a line, for inspection
      fs.writeFileSync(path.join(this.root, "requests.jsonl"), this.model.requests.map((r) => JSON.stringify(r)).join("\n") + "\n");
      console.log(`[e2e] kept ${this.root} (requests.jsonl: what the model received)`);
    }
  }
}

/** Creates the sandbox (home, project, config, seeded deps) and starts the fake model. */
export async function createWorkspace(opts: WorkspaceOptions = {}): Promise<Workspace> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "acp-e2e-"));
  const model = await new FakeModel().start();
  const ws = new Workspace(root, model, opts.env ?? {});
  try {
    fs.mkdirSync(path.join(root, "tmp"));
    for (const [rel, content] of Object.entries(opts.files ?? {})) write(path.join(ws.projectDir, rel), content);
    fs.mkdirSync(ws.projectDir, { recursive: true });
    write(path.join(ws.projectDir, "opencode.json"), JSON.stringify(projectConfig(model, opts), null, 2));
    const globalDir = path.join(ws.home, ".config", "opencode");
    for (const [rel, content] of Object.entries(opts.globalFiles ?? {})) write(path.join(globalDir, rel), content);
    seedPluginDependency(globalDir);
    const projectConfigDir = path.join(ws.projectDir, ".opencode");
    if (fs.existsSync(projectConfigDir)) seedPluginDependency(projectConfigDir);
    // opencode snapshots through git; a repo without commits is enough.
    spawnSync("git", ["init", "-q", "."], { cwd: ws.projectDir, stdio: "ignore" });
  } catch (err) {
    await ws.dispose();
    throw err;
  }
  return ws;
}

function projectConfig(model: FakeModel, opts: WorkspaceOptions): Record<string, unknown> {
  const plugins = (opts.plugins ?? []).map((p) => (Array.isArray(p) ? [pluginSpec(p[0]), p[1]] : pluginSpec(p)));
  return {
    $schema: "https://opencode.ai/config.json",
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible", // bundled in the binary, never installed
        name: "Fake (scripted, loopback)",
        options: { baseURL: model.baseURL, apiKey: "fake-key" },
        models: {
          "fake-model": {
            name: "Fake Model",
            tool_call: true,
            limit: { context: opts.contextLimit ?? 128_000, output: 4096 },
            ...opts.modelConfig,
          },
        },
      },
    },
    model: "fake/fake-model",
    small_model: "fake/fake-model",
    autoupdate: false,
    share: "disabled",
    permission: { bash: "allow", edit: "allow", read: "allow", external_directory: "allow" },
    ...(plugins.length ? { plugin: plugins } : {}),
    ...opts.config,
  };
}

function pluginSpec(p: string): string {
  return path.isAbsolute(p) ? pathToFileURL(p).href : p;
}

/**
 * At every start opencode runs `npm install @opencode-ai/plugin@<host version>` in each config
 * dir whose package-lock.json does not list it. Seed package.json, package-lock.json and
 * node_modules (a symlink to the repo's copy) so no install is attempted.
 */
export function seedPluginDependency(configDir: string): void {
  const src = path.join(NODE_MODULES, "@opencode-ai", "plugin");
  const version: string = JSON.parse(fs.readFileSync(path.join(src, "package.json"), "utf8")).version;
  const dep = { "@opencode-ai/plugin": version };
  write(path.join(configDir, "package.json"), JSON.stringify({ dependencies: dep }, null, 2));
  const lock = {
    name: "opencode",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { dependencies: dep },
      "node_modules/@opencode-ai/plugin": { version },
    },
  };
  write(path.join(configDir, "package-lock.json"), JSON.stringify(lock, null, 2));
  fs.mkdirSync(path.join(configDir, "node_modules", "@opencode-ai"), { recursive: true });
  fs.symlinkSync(src, path.join(configDir, "node_modules", "@opencode-ai", "plugin"), "dir");
}

/** Log lines in which opencode reports a plugin that failed to load (it carries on silently). */
export function pluginLoadErrors(stderr: string): string[] {
  return stderr.split("\n").filter((l) => /failed to load plugin|Plugin export is not a function|does not expose a server entrypoint/i.test(l));
}

function parseEvents(stdout: string): Record<string, any>[] {
  const out: Record<string, any>[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // not an event line
    }
  }
  return out;
}

/** A port that was free a moment ago on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** Reads and deletes a file; "" if it is gone. */
function takeFile(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  } finally {
    fs.rmSync(file, { force: true });
  }
}

function write(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

type ExportedSession = { info: any; messages: { info: any; parts: any[] }[] };

/**
 * Texts of `ignored: true` user text parts in an exported session: what a plugin showed the user
 * without the model seeing it (`/acp` replies, notifications).
 */
export function ignoredTexts(exported: ExportedSession): string[] {
  return exported.messages
    .filter((m) => m.info.role === "user")
    .flatMap((m) => m.parts)
    .filter((p) => p.type === "text" && p.ignored === true)
    .map((p) => String(p.text));
}
