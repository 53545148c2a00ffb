// When each part was last in use (the `idleTurns` fact): what predicts that an agent still needs an
// output is that it keeps working with its subject (scripts/quote-predictors.ts, docs/tuning.md).
// A part is in use on its own call, when a later tool call has an equal value in a field of the
// same name (the same file, command, URL, pattern...), when later text names one of its values'
// file names, and when a later assistant message quotes a line of its output. Generic: no tool
// names, only input fields, text and lines.
// Counted in tool calls (`idleCalls`, inside a turn), a later call on the same subject is a use only
// if it changes it (its input carries content: a multi-line or long string, as an edit or a write
// has) or returns little (an edit's "applied", a command that prints nothing): a call that returns
// a view of its own (a partial re-read, a grep of the same folder) takes the use over, and the agent
// quotes that one (docs/tuning.md, session 15).
import type { PartNode } from "../graph/graph.js";
import { clearedByHost } from "../graph/prompt.js";
import { forEachString, indexedLine, MIN_QUOTE_CHARS } from "../graph/quote-lines.js";

/** Input values that can name a subject: short, one line (not a file's content). */
const MAX_SUBJECT_CHARS = 300;
/** Path-like words in text: something with a dot or slash and word characters around it. */
const PATH_WORD = /[\w@~+-]*(?:[./][\w@~+-]+)+/g;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isSubject = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= MAX_SUBJECT_CHARS && !v.includes("\n");

/** An output at least this long is a view of its subject in its own right (a read, a listing, a log). */
const VIEW_CHARS = 500;

/** The call returned a view of its own: a completed output of VIEW_CHARS or more. */
function returnsView(state: { status?: string; output?: unknown } | undefined): boolean {
  return state?.status === "completed" && typeof state.output === "string" && state.output.length >= VIEW_CHARS;
}

/** An input that carries content (a string too long or too many lines to name a subject, at any depth): the call changes what it names. */
function carriesContent(input: Record<string, unknown>): boolean {
  let found = false;
  forEachString(input, (t) => {
    if (t.length > 0 && !isSubject(t)) found = true;
  });
  return found;
}

/**
 * What a tool call changes, by the measure above: undefined when nothing; else the file names its
 * input names (none: it changes something it does not name, as a long inline script may). A call
 * changes when its input carries content, or when it names a file and returns no view of it (an
 * edit's "applied", even for a one-line change).
 */
export function changedFiles(p: PartNode["part"]): string[] | undefined {
  const input = p.type === "tool" ? p.state?.input : undefined;
  if (!isObject(input)) return undefined;
  const files = subjectFiles(input);
  return carriesContent(input) || (files.length > 0 && !returnsView(p.state)) ? files : undefined;
}

/** The file names among an input's subject values (`filePath: "src/a.ts"` → `a.ts`). */
export function subjectFiles(input: unknown): string[] {
  const out: string[] = [];
  if (!isObject(input)) return out;
  for (const v of Object.values(input)) {
    const name = isSubject(v) ? fileName(v) : undefined;
    if (name !== undefined) out.push(name);
  }
  return out;
}

/** The file name a value names, if it looks like a path (has a dot or a slash), else undefined. */
function fileName(v: string): string | undefined {
  if (!/[./]/.test(v) || /\s/.test(v)) return undefined;
  const base = v.replace(/[/\\]+$/, "").split(/[/\\]/).pop();
  return base && base.length >= 3 && /\w/.test(base) ? base : undefined;
}

/** How a file named with its extension is looked up: its name, in lower case. */
const nameKey = (name: string) => "=" + name.toLowerCase();
/** How a file named without one is ("docs/project-plan" for PROJECT_PLAN.md): lower case, no extension, no separators. */
const stemKey = (name: string) => "~" + name.toLowerCase().replace(/\.[a-z0-9]+$/, "").replace(/[^a-z0-9]/g, "");

/** How useTurns keys a subject: a file by its name (a read of src/a.ts and text naming a.ts are one subject), else the field and value. */
const fileKey = (name: string) => "/" + name;
/** `touched`: the subject's field + "\0" + value; `name`: the file name the value names, if any (fileName). */
const subjectKey = (touched: string, name: string | undefined) => (name === undefined ? touched : fileKey(name));

/** A use: the part that used a subject, as its user turn and the tool calls up to and including it. */
interface Use {
  turn: number;
  calls: number;
}

const useOf = (n: PartNode): Use => ({ turn: n.turn, calls: callsThrough(n) });
function callsThrough(n: PartNode): number {
  return n.callIndex + (n.part.type === "tool" ? 1 : 0);
}

export class UseTracker {
  /** field + "\0" + value → the last tool call that had it. */
  private readonly touched = new Map<string, Use>();
  /** The same, for calls that change their subject (their input carries content) or return no view of their own (idleCalls reads these). */
  private readonly changed = new Map<string, Use>();
  /** file name → the last text that named it. */
  private readonly named = new Map<string, Use>();
  /** nameKey or stemKey of a file a user's own text named → that user turn. */
  private readonly userNamed = new Map<string, number>();
  /** subject (file name, else field + value) → the user turns it was in use in: the last one and how many. */
  private readonly turnsInUse = new Map<string, { turn: number; count: number }>();
  /** The same, counting only the turns in which a call changed the subject (changeTurns). */
  private readonly turnsChanged = new Map<string, { turn: number; count: number }>();
  /** node index → the last assistant message that quoted a line of its output. */
  private readonly quoted = new Map<number, Use>();
  /** output line → the newest node whose output holds it. */
  private readonly lines = new Map<string, number>();

  /** work[k]: how many of the first k tool calls brought something (idleWorkCalls; briefCall). */
  private readonly work: number[] = [0];

  /** Records one part, in history order (each node once). */
  see(n: PartNode): void {
    const p = n.part;
    const assistant = n.message.info?.role === "assistant";
    if (p.type === "tool") {
      if (this.work.length === n.callIndex + 1) this.work.push(this.work[n.callIndex] + (briefCall(p) ? 0 : 1));
      const input = p.state?.input;
      if (isObject(input)) {
        const use = useOf(n);
        const changes = carriesContent(input) || !returnsView(p.state);
        for (const k of Object.keys(input)) {
          const v = input[k];
          if (!isSubject(v)) continue;
          const key = k + "\0" + v;
          this.touched.set(key, use);
          const subject = subjectKey(key, fileName(v));
          if (changes) {
            this.changed.set(key, use);
            // a call that failed (a read too large, an edit whose oldString was not found) changed
            // nothing: it does not make its file working set (docs/tuning.md, session 24)
            if (p.state?.status !== "error") countTurn(this.turnsChanged, subject, n.turn);
          }
          countTurn(this.turnsInUse, subject, n.turn);
        }
        if (assistant) this.quotes(input, use);
      }
      const output = p.state?.status === "completed" ? p.state.output : undefined;
      if (typeof output === "string" && !clearedByHost(p)) {
        let last = ""; // the line set just before: setting it again changes nothing
        for (const raw of output.split("\n")) {
          const line = indexedLine(raw);
          if (line.length < MIN_QUOTE_CHARS || line === last) continue;
          this.lines.set(line, n.index);
          last = line;
        }
      }
    } else if (p.type === "text" && typeof p.text === "string" && !p.ignored) {
      const use = useOf(n);
      const byUser = n.message.info?.role === "user" && !p.synthetic;
      for (const m of p.text.matchAll(PATH_WORD)) {
        const word = m[0];
        const name = fileName(word);
        if (name) {
          this.named.set(name, use);
          countTurn(this.turnsInUse, fileKey(name), n.turn);
        }
        // a file the user names (not a folder: "src/" names many files), by its name or, written
        // without an extension, by its stem
        if (name && byUser && p.text[m.index! + word.length] !== "/") {
          const key = /\.\w+$/.test(name) ? nameKey(name) : stemKey(name);
          if (key.length >= 4) this.userNamed.set(key, n.turn);
        }
      }
      if (assistant) this.quotes(p.text, use);
    }
  }

  /** Lines an assistant writes (text or any string of a tool input) that earlier outputs hold. */
  private quotes(value: unknown, use: Use): void {
    forEachString(value, (text) => {
      if (text.length < MIN_QUOTE_CHARS) return;
      let last = ""; // the line looked up just before: the same answer, set again to the same use
      for (const raw of text.split("\n")) {
        const line = raw.trim();
        if (line.length < MIN_QUOTE_CHARS || line === last) continue;
        last = line;
        const src = this.lines.get(line);
        if (src !== undefined) this.quoted.set(src, use);
      }
    });
  }

  /** User turns since the part was last in use (0: in use this turn). */
  idleTurns(n: PartNode): number {
    this.lastUse(n, this.touched);
    return Math.max(0, n.turn + n.ageTurns - this.lastTurn);
  }

  /** Tool calls since the part was last in use (its own call counts as a use). */
  idleCalls(n: PartNode): number {
    this.lastUse(n, this.changed);
    return Math.max(0, callsThrough(n) + n.ageCalls - this.lastCalls);
  }

  /** idleCalls, counting only the calls that brought something (not briefCall). */
  idleWorkCalls(n: PartNode): number {
    this.lastUse(n, this.changed);
    return Math.max(0, this.workThrough(callsThrough(n) + n.ageCalls) - this.workThrough(this.lastCalls));
  }

  /** Calls among the first k that brought something; a call not seen yet (the tracker lags the graph) counts as one. */
  private workThrough(k: number): number {
    const seen = this.work.length - 1;
    return k <= seen ? this.work[k] : this.work[seen] + k - seen;
  }

  /** User turns its subject was in use in so far (its own included): the most of any subject. */
  useTurns(n: PartNode): number {
    return mostTurns(this.turnsInUse, this.subjectsOf(n).inUse);
  }

  /** User turns in which a call changed its subject so far (by idleCalls's measure): the most of any subject. */
  changeTurns(n: PartNode): number {
    return mostTurns(this.turnsChanged, this.subjectsOf(n).inUse);
  }

  /** User turns since a user message last named the part's file (Infinity: never). */
  userNamedTurns(n: PartNode): number {
    const keys = this.subjectsOf(n).userKeys;
    let last = -Infinity;
    for (let k = 0; k < keys.length; k++) {
      const t = this.userNamed.get(keys[k]);
      if (t !== undefined && t > last) last = t;
    }
    return last === -Infinity ? Infinity : Math.max(0, n.turn + n.ageTurns - last);
  }

  /** Per node index: the keys its input's subjects are looked up by (made once: the age rules ask on every call). */
  private readonly subjects = new Map<number, Subjects>();
  /** lastUse's answer (fields, so the hot path allocates nothing). */
  private lastTurn = 0;
  private lastCalls = 0;

  private subjectsOf(n: PartNode): Subjects {
    let s = this.subjects.get(n.index);
    if (s) return s;
    s = { touched: [], named: [], userKeys: [], inUse: [] };
    const input = n.part.type === "tool" ? n.part.state?.input : undefined;
    if (isObject(input))
      for (const k of Object.keys(input)) {
        const v = input[k];
        if (!isSubject(v)) continue;
        const key = k + "\0" + v;
        const name = fileName(v);
        s.touched.push(key);
        s.inUse.push(subjectKey(key, name));
        if (name === undefined) continue;
        s.named.push(name);
        s.userKeys.push(nameKey(name), stemKey(name));
      }
    this.subjects.set(n.index, s);
    return s;
  }

  /** The latest use of the part (its own call, or a later use of a subject, touches read from `touches`): sets lastTurn and lastCalls. */
  private lastUse(n: PartNode, touches: Map<string, Use>): void {
    let turn = n.turn;
    let calls = callsThrough(n);
    const s = this.subjectsOf(n);
    for (let k = 0; k < s.touched.length + s.named.length + 1; k++) {
      const u = k < s.touched.length ? touches.get(s.touched[k]) : k < s.touched.length + s.named.length ? this.named.get(s.named[k - s.touched.length]) : this.quoted.get(n.index);
      if (u !== undefined && (u.turn > turn || (u.turn === turn && u.calls > calls))) {
        turn = u.turn;
        calls = u.calls;
      }
    }
    this.lastTurn = turn;
    this.lastCalls = calls;
  }
}

/** Under this many characters, an output that names no file and carries no content adds nothing the agent reads. */
const BRIEF_CHARS = 100;

/**
 * A call that brought nothing to work from: it names no file, carries no content and returns a line
 * or two (mkdir, git add, a task update). The agent's attention did not move to anything new, so
 * such calls do not make other outputs idle (idleWorkCalls; docs/tuning.md, session 23).
 */
function briefCall(p: PartNode["part"]): boolean {
  const input = p.state?.input;
  const out = p.state?.output;
  if (p.state?.status !== "completed" || typeof out !== "string" || out.length >= BRIEF_CHARS) return false;
  return isObject(input) && !carriesContent(input) && subjectFiles(input).length === 0;
}

/** Counts `turn` for `key` once (turns arrive in order). */
function countTurn(turns: Map<string, { turn: number; count: number }>, key: string, turn: number): void {
  const u = turns.get(key);
  if (u === undefined) turns.set(key, { turn, count: 1 });
  else if (u.turn !== turn) {
    u.turn = turn;
    u.count++;
  }
}

/** The most turns counted for any of `keys`. */
function mostTurns(turns: Map<string, { turn: number; count: number }>, keys: string[]): number {
  let most = 0;
  for (let k = 0; k < keys.length; k++) {
    const u = turns.get(keys[k]);
    if (u !== undefined && u.count > most) most = u.count;
  }
  return most;
}

/** What lastUse looks a part's subjects up by: `field\0value` of its input's subjects, and the file names they name. */
interface Subjects {
  touched: string[];
  named: string[];
  /** The keys a user's naming of its files is looked up by (nameKey, stemKey). */
  userKeys: string[];
  /** The keys useTurns looks its subjects up by (subjectKey). */
  inUse: string[];
}
