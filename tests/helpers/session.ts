// Builders for small OpenCode-shaped sessions used across tests.
import type { Message, Part } from "../../src/graph/types.js";

export const SID = "ses_test";
let n = 0;
const id = (p: string) => `${p}_${String(++n).padStart(5, "0")}`;

export function user(text: string, extra: Partial<Part>[] = []): Message {
  const mid = id("msg");
  return { info: { id: mid, sessionID: SID, role: "user" }, parts: [{ id: id("prt"), sessionID: SID, messageID: mid, type: "text", text }, ...extra.map((e) => ({ id: id("prt"), sessionID: SID, messageID: mid, type: "text", ...e }) as Part)] };
}

export interface ToolSpec {
  tool: string;
  input: Record<string, unknown>;
  output?: string;
  error?: string;
  id?: string;
}

export function assistant(tools: ToolSpec[], text?: string): Message {
  const mid = id("msg");
  const parts: Part[] = [{ id: id("prt"), sessionID: SID, messageID: mid, type: "step-start" }];
  if (text) parts.push({ id: id("prt"), sessionID: SID, messageID: mid, type: "text", text });
  for (const t of tools)
    parts.push({
      id: t.id ?? id("prt"),
      sessionID: SID,
      messageID: mid,
      type: "tool",
      tool: t.tool,
      callID: id("call"),
      state: t.error !== undefined ? { status: "error", input: t.input, error: t.error, time: { start: 1, end: 2 } } : { status: "completed", input: t.input, output: t.output ?? "ok", title: "", metadata: {}, time: { start: 1, end: 2 } },
    });
  return { info: { id: mid, sessionID: SID, role: "assistant" }, parts };
}

export const bigText = (label: string, lines = 300) => Array.from({ length: lines }, (_, i) => `${i + 1}: ${label} line ${i} ${"x".repeat(40)}`).join("\n");

/**
 * User turn `t` of other work: two checks that each bring a few lines (calls that count for
 * idleWorkCalls, too short for stale-shell-output), so earlier reads age as in a working session.
 */
export const workTurn = (t: number): Message[] => [
  user(`t${t}`),
  assistant([{ tool: "bash", input: { command: `make check-${t}` }, output: bigText(`check ${t}`, 3) }]),
  assistant([{ tool: "bash", input: { command: `make lint-${t}` }, output: bigText(`lint ${t}`, 3) }]),
  assistant([], "done"),
];

/**
 * `count` turns of other work (workTurn), turns `from` to `from + count - 1`. A read made before
 * turn `from` and not used since is out of use for `count` turns then, with 2 x `count` calls that
 * brought something since: balanced's stale-read clears it from 10 such turns (idleTurns 10, workCalls 10).
 */
export const workTurns = (from: number, count: number): Message[] => Array.from({ length: count }, (_, i) => workTurn(from + i)).flat();

/** Replays `messages` call by call like the host: a fresh copy of messages[0..i) per assistant message i. */
export function replay(messages: Message[], transform: (m: Message[]) => void): Message[][] {
  const out: Message[][] = [];
  for (let i = 0; i < messages.length; i++) {
    if (messages[i].info.role !== "assistant") continue;
    const ctx = structuredClone(messages.slice(0, i));
    transform(ctx);
    out.push(ctx);
  }
  const last = structuredClone(messages);
  transform(last);
  out.push(last);
  return out;
}

export const toolPart = (ms: Message[], partId: string) => ms.flatMap((m) => m.parts).find((p) => p.id === partId);

/** An edit (part prt_edit, its result `output`) in the first turn, and a second turn after it: the edit's result is from an earlier turn. */
export const editLastTurn = (output = "Edit applied successfully."): Message[] => [
  user("fix it"),
  assistant([{ tool: "edit", input: { filePath: "/w/src/a.ts", oldString: "a", newString: "b" }, output, id: "prt_edit" }]),
  assistant([], "done"),
  user("next"),
  assistant([{ tool: "bash", input: { command: "ls" }, output: "x" }]),
  assistant([], "ok"),
];
