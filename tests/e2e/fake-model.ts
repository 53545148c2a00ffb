// A scripted, OpenAI-compatible chat-completions server for end-to-end tests.
// It listens on 127.0.0.1 only, records every request body, and answers:
//   - main-agent requests (they carry `tools`) with the next turn of the script, streamed as SSE;
//   - auxiliary requests (no `tools`: title generation, compaction summaries) with a fixed title,
//     without consuming the script.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
  /** The tool-call id the host will see (and echo back as `tool_call_id`). */
  id: string;
  /** OpenCode tool name, e.g. `read` ({filePath}) or `bash` ({command, description}). */
  name: string;
  arguments: Record<string, unknown>;
}

export interface Turn {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Overrides the reported prompt tokens (default: about chars/4 of the request messages). */
  promptTokens?: number;
  /**
   * Reasoning ("thinking") streamed before the text as `delta.reasoning_content` (non-streaming:
   * `message.reasoning_content`). The openai-compatible provider turns it into a reasoning part.
   */
  reasoning?: string;
}

/**
 * A turn computed from the request it answers, e.g. to cite an id the plugin appended to the
 * previous tool result. If it throws, the error is recorded in `model.scriptErrors` and the model
 * answers with a text naming the error (the run goes on; assert `scriptErrors` is empty).
 */
export type TurnFn = (req: RecordedRequest) => Turn;
export type ScriptTurn = Turn | TurnFn;

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  /** Reasoning the host sends back on assistant messages (openai-compatible thinking models). */
  reasoning_content?: string;
}

export interface ChatRequestBody {
  model?: string;
  stream?: boolean;
  messages: ChatMessage[];
  tools?: { type: string; function: { name: string } }[];
  [k: string]: unknown;
}

export interface RecordedRequest {
  seq: number;
  kind: "main" | "auxiliary";
  body: ChatRequestBody;
  /** The script turn answered (main requests only); undefined when the script was exhausted. */
  turn?: Turn;
}

export const FAKE_TITLE = "Fake session title";
export const EXHAUSTED_TEXT = "Done (fake model script exhausted).";

export class FakeModel {
  readonly requests: RecordedRequest[] = [];
  /** Main requests that arrived after the script ran out (a test usually wants this to stay 0). */
  exhaustedCount = 0;
  /** Errors thrown by function turns (TurnFn), in order. */
  readonly scriptErrors: string[] = [];
  /**
   * Answers auxiliary requests (no tools: title generation, compaction summary). Return undefined
   * for the default, FAKE_TITLE. E.g. `(r) => isCompactionRequest(r) ? "SUMMARY: ..." : undefined`.
   */
  auxiliary?: (req: RecordedRequest) => Turn | undefined;
  private queue: ScriptTurn[] = [];
  private server = http.createServer((req, res) => this.handle(req, res));
  private port = 0;

  /** Starts listening on 127.0.0.1 on a free port. */
  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get baseURL(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Appends turns to the script; each main request consumes one turn, in order. */
  enqueue(...turns: ScriptTurn[]): void {
    this.queue.push(...turns);
  }

  get pending(): number {
    return this.queue.length;
  }

  get mainRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.kind === "main");
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = req.url ?? "";
      if (req.method === "GET" && /\/models\/?$/.test(url)) {
        return json(res, 200, { object: "list", data: [{ id: "fake-model", object: "model", owned_by: "fake" }] });
      }
      if (req.method !== "POST" || !/\/chat\/completions\/?$/.test(url)) {
        return json(res, 404, { error: { message: `fake model: no route ${req.method} ${url}` } });
      }
      let body: ChatRequestBody;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return json(res, 400, { error: { message: "fake model: body is not JSON" } });
      }
      const seq = this.requests.length + 1;
      const isMain = Array.isArray(body.tools) && body.tools.length > 0;
      let turn: Turn;
      if (!isMain) {
        const rec: RecordedRequest = { seq, kind: "auxiliary", body };
        this.requests.push(rec);
        turn = { text: FAKE_TITLE };
        try {
          turn = this.auxiliary?.(rec) ?? turn;
        } catch (e) {
          this.scriptErrors.push(`auxiliary request ${seq}: ${(e as Error).stack ?? e}`);
        }
      } else {
        const rec: RecordedRequest = { seq, kind: "main", body };
        this.requests.push(rec);
        const next = this.queue.shift();
        if (!next) this.exhaustedCount++;
        let computed: Turn | undefined;
        if (typeof next === "function") {
          try {
            computed = next(rec);
          } catch (e) {
            this.scriptErrors.push(`request ${seq}: ${(e as Error).stack ?? e}`);
            computed = { text: `fake model script error: ${(e as Error).message}` };
          }
        } else computed = next;
        rec.turn = computed;
        turn = computed ?? { text: EXHAUSTED_TEXT };
      }
      reply(res, body, turn, seq);
    });
  }
}

export async function startFakeModel(...turns: Turn[]): Promise<FakeModel> {
  const model = await new FakeModel().start();
  model.enqueue(...turns);
  return model;
}

function json(res: http.ServerResponse, status: number, obj: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(obj));
}

function reply(res: http.ServerResponse, body: ChatRequestBody, turn: Turn, seq: number): void {
  const id = `chatcmpl-${seq}`;
  const created = Math.floor(Date.now() / 1000);
  const model = body.model ?? "fake-model";
  const calls = (turn.toolCalls ?? []).map((c) => ({
    id: c.id,
    type: "function",
    function: { name: c.name, arguments: JSON.stringify(c.arguments) },
  }));
  const finish = calls.length ? "tool_calls" : "stop";
  const prompt = turn.promptTokens ?? Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
  const usage = { prompt_tokens: prompt, completion_tokens: 10, total_tokens: prompt + 10 };

  if (!body.stream) {
    const message = {
      role: "assistant",
      content: turn.text ?? null,
      ...(turn.reasoning ? { reasoning_content: turn.reasoning } : {}),
      ...(calls.length ? { tool_calls: calls } : {}),
    };
    return json(res, 200, {
      id, object: "chat.completion", created, model, usage,
      choices: [{ index: 0, finish_reason: finish, message }],
    });
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (payload: object) => res.write(`data: ${JSON.stringify(payload)}\n\n`);
  const chunk = (delta: object, finish_reason: string | null = null) =>
    send({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason }] });
  chunk({ role: "assistant", content: "" });
  if (turn.reasoning) {
    // two deltas, as a real provider streams it
    const half = Math.ceil(turn.reasoning.length / 2);
    chunk({ reasoning_content: turn.reasoning.slice(0, half) });
    if (turn.reasoning.length > half) chunk({ reasoning_content: turn.reasoning.slice(half) });
  }
  if (turn.text) chunk({ content: turn.text });
  calls.forEach((c, index) => {
    chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } }] });
    chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments } }] });
  });
  chunk({}, finish);
  // OpenCode's context-overflow check relies on reported usage, so always send it.
  send({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
  res.write("data: [DONE]\n\n");
  res.end();
}

/** The assistant messages of a request, in order. */
export function assistantMessages(req: RecordedRequest): ChatMessage[] {
  return req.body.messages.filter((m) => m.role === "assistant");
}

/** The `reasoning_content` of each assistant message of a request, in order (undefined: no field). */
export function reasoningContents(req: RecordedRequest): (string | undefined)[] {
  return assistantMessages(req).map((m) => m.reasoning_content);
}

/** The `role: "tool"` message answering `callID` in a request, if any. */
export function toolResult(req: RecordedRequest, callID: string): string | undefined {
  const msg = req.body.messages.find((m) => m.role === "tool" && m.tool_call_id === callID);
  if (!msg) return undefined;
  return typeof msg.content === "string" ? msg.content : JSON.stringify(msg.content);
}

/** The text of a message's content (a string, or the text parts of an array) joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((c) => (typeof c === "string" ? c : typeof c?.text === "string" ? c.text : JSON.stringify(c))).join("\n");
  return content === undefined || content === null ? "" : JSON.stringify(content);
}

/** All `role: "system"` texts of a request, joined. */
export function systemText(req: RecordedRequest): string {
  return req.body.messages.filter((m) => m.role === "system").map((m) => contentText(m.content)).join("\n");
}

/** Names of the tools offered in a request. */
export function toolNames(req: RecordedRequest): string[] {
  return (req.body.tools ?? []).map((t) => t.function.name);
}

/** The title-generation request (no tools, system prompt "You are a title generator"). */
export function isTitleRequest(req: RecordedRequest): boolean {
  return req.kind === "auxiliary" && systemText(req).includes("You are a title generator");
}

/** The compaction (summary) request of OpenCode's hidden compaction agent (no tools). */
export function isCompactionRequest(req: RecordedRequest): boolean {
  return req.kind === "auxiliary" && !isTitleRequest(req) && /summar/i.test(systemText(req));
}

/**
 * Tool-call pairing problems of a request: every assistant tool call needs exactly one later
 * `role: "tool"` answer, and every tool answer needs an earlier call. Empty when well-formed.
 */
export function pairingProblems(req: RecordedRequest): string[] {
  const problems: string[] = [];
  const open = new Set<string>();
  const answered = new Set<string>();
  for (const [i, m] of req.body.messages.entries()) {
    if (m.role === "assistant") for (const c of m.tool_calls ?? []) open.add(c.id);
    if (m.role === "tool") {
      const id = m.tool_call_id ?? "";
      if (!open.has(id)) problems.push(`message ${i}: tool result ${id} without an earlier call`);
      else if (answered.has(id)) problems.push(`message ${i}: second result for ${id}`);
      answered.add(id);
    }
  }
  for (const id of open) if (!answered.has(id)) problems.push(`tool call ${id} has no result`);
  return problems;
}
