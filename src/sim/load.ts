// Loading recorded sessions for replay: a corpus session file (`{id, source, meta, stats, messages}`),
// an `opencode export` file (`{info, messages}`), or a folder of either.
import { readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { Message } from "../graph/types.js";
import { parse, type ParseError } from "jsonc-parser";
import { readErrorMessage, readTextFile } from "../rules/read.js";
import { lineIndex } from "../rules/source.js";

/** A session file larger than this is not read (the largest of the corpus is under 4 MB). */
export const MAX_SESSION_BYTES = 256 * 1024 * 1024;

export interface Session {
  /** Session id: the file's `id`, the export's `info.id`, the messages' sessionID, or the file name. */
  id: string;
  /** The file it was loaded from. */
  file: string;
  messages: Message[];
}

/**
 * Loads one session file, or every `*.json` file of a folder (not recursive, sorted by name).
 * With `skipped`, a folder's file that cannot be read or is not a session is left out and its
 * one-line error ("<file>: <reason>") added there; it throws only when no file could be read.
 * Without it, the first such file throws.
 */
export function loadSessions(path: string, skipped?: string[]): Session[] {
  let isFolder: boolean;
  try {
    isFolder = statSync(path).isDirectory();
  } catch (err) {
    throw new Error(`${path}: ${readErrorMessage(err)}`);
  }
  if (!isFolder) return [loadSession(path)];
  const files = readdirSync(path)
    .filter((name) => name.endsWith(".json"))
    .sort();
  if (files.length === 0) throw new Error(`${path}: folder holds no .json session files`);
  if (!skipped) return files.map((name) => loadSession(join(path, name)));
  const sessions: Session[] = [];
  for (const name of files)
    try {
      sessions.push(loadSession(join(path, name)));
    } catch (e) {
      skipped.push((e as Error).message);
    }
  if (sessions.length === 0) throw new Error(`${path}: none of the folder's ${files.length} .json file${files.length === 1 ? "" : "s"} could be read as a session`);
  return sessions;
}

/** Loads one session file; throws an Error naming the file when it is unreadable or malformed. */
export function loadSession(file: string): Session {
  // Never blocks on a FIFO, never reads a device or a huge file into memory.
  const read = readTextFile(file, MAX_SESSION_BYTES);
  if ("error" in read) throw new Error(`${file}: ${read.error}`);
  const text = read.text;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(jsonError(file, text, (err as Error).message));
  }
  return parseSession(data, file);
}

/**
 * One line for JSON that does not parse: `<file>:<line>:<col>: not valid JSON (<why>)`. The place
 * is the first error a strict jsonc-parser pass finds (V8's message has no position for some
 * errors), else V8's position, else the end of the text.
 */
function jsonError(file: string, text: string, message: string): string {
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const v8 = /at position (\d+)/.exec(message);
  const offset = errors[0]?.offset ?? (v8 ? Number(v8[1]) : text.length);
  const { line, col } = lineIndex(text)(offset);
  const why = message.replace(/ in JSON at position.*$/s, "").replace(/\s+/g, " ").slice(0, 120);
  return `${file}:${line}:${col}: not valid JSON (${why})`;
}

/** Validates the parsed JSON of a session file and removes the recording host's own pruning. */
export function parseSession(data: unknown, file: string): Session {
  if (!isObject(data) || !Array.isArray(data.messages)) {
    throw new Error(`${file}: not a session: expected an object with a "messages" array ({info, messages} or a corpus session)`);
  }
  const messages = data.messages as unknown[];
  messages.forEach((message, i) => {
    if (!isObject(message) || !isObject(message.info) || !Array.isArray(message.parts)) {
      throw new Error(`${file}: messages[${i}] is not {info, parts: [...]}`);
    }
    if (typeof message.info.role !== "string") {
      throw new Error(`${file}: messages[${i}].info.role is missing`);
    }
    message.parts.forEach((part, j) => {
      if (!isObject(part) || typeof part.type !== "string" || typeof part.id !== "string") {
        throw new Error(`${file}: messages[${i}].parts[${j}] has no string "id" and "type"`);
      }
    });
  });
  const typed = messages as Message[];
  stripCompactedMarks(typed);
  const info = isObject(data.info) ? data.info : undefined;
  const id =
    (typeof data.id === "string" && data.id) ||
    (typeof info?.id === "string" && info.id) ||
    typed[0]?.info.sessionID ||
    basename(file, ".json");
  return { id, file, messages: typed };
}

/**
 * Removes every `state.time.compacted` mark: those are the recording host's own prune, and replay
 * starts from the raw history (docs/simulate.md, Replay).
 */
export function stripCompactedMarks(messages: Message[]): void {
  for (const message of messages) {
    for (const part of message.parts) {
      const time = part.state?.time;
      if (time && "compacted" in time) delete time.compacted;
    }
  }
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
