// Every write rendering makes to the host's copy goes through here, so that a failure anywhere
// puts the copy back as it came: a log of property writes, and the drops applied last.
import type { Part } from "../graph/types.js";

/** Closures that put back what rendering changed, so a failure midway can leave the copy as it was. */
export type Undo = (() => void)[];

const hasOwn = Object.prototype.hasOwnProperty;
const plainProto = Object.prototype;
/** The properties render and the id tags write (see WriteLog.owns). */
const WRITTEN = ["output", "error", "attachments", "input", "text"];
const CHUNK = 4096; // entries per chunk of a write log: 32 KB, below V8's large-object size

/**
 * A record of property writes, four entries per write (object, key, old value, had own
 * property), put back in reverse by the one closure `writeLog` adds to `undo`: rendering ten
 * thousand decisions allocates no closure per write, and fixed-size chunks never grow or copy.
 */
export class WriteLog {
  private chunks: unknown[][] = [];
  private cur: unknown[] = new Array(CHUNK);
  private n = 0;
  /** No written property is inherited from Object.prototype (checked once per log). */
  private readonly clean = WRITTEN.every((k) => !(k in plainProto));

  add(obj: object, key: string | number, old: unknown, had: boolean): void {
    if (this.n === CHUNK) {
      this.chunks.push(this.cur);
      this.cur = new Array(CHUNK);
      this.n = 0;
    }
    const c = this.cur;
    const n = this.n;
    c[n] = obj;
    c[n + 1] = key;
    c[n + 2] = old;
    c[n + 3] = had;
    this.n = n + 4;
  }

  /**
   * hasOwnProperty(obj, key) for one of the WRITTEN keys, whose value reads `value`.
   * hasOwnProperty costs a few hundred ns per call on the host's objects; on a plain object over
   * a clean Object.prototype, a defined value or `key in obj` says the same.
   */
  owns(obj: object, key: string, value: unknown): boolean {
    if (!this.clean || Object.getPrototypeOf(obj) !== plainProto) return hasOwn.call(obj, key);
    return value !== undefined || key in obj;
  }

  /** Puts every recorded write back, newest first. */
  undo(): void {
    const chunks = [...this.chunks, this.cur];
    for (let c = chunks.length - 1; c >= 0; c--) {
      const log = chunks[c];
      for (let i = (c === chunks.length - 1 ? this.n : CHUNK) - 4; i >= 0; i -= 4) {
        const obj = log[i] as Record<string | number, unknown>;
        const key = log[i + 1] as string | number;
        if (log[i + 3]) obj[key] = log[i + 2];
        else delete obj[key];
      }
    }
    this.chunks = [];
    this.cur = new Array(CHUNK);
    this.n = 0;
  }
}

/** A write log whose writes are undone, in reverse, where its closure stands in `undo`. */
export function writeLog(undo: Undo): WriteLog {
  const log = new WriteLog();
  undo.push(() => log.undo());
  return log;
}

/** hasOwnProperty(obj, key) for an object whose `key` reads `value` (see WriteLog.owns). */
export function owns(obj: object, key: string, value: unknown): boolean {
  if (Object.getPrototypeOf(obj) !== plainProto || key in plainProto) return hasOwn.call(obj, key);
  return value !== undefined || key in obj;
}

/** Sets a tool state's output, recording the old one in `log` (id tags: one per tagged output). */
export function setOutput(st: { output?: unknown }, value: string, log: WriteLog): void {
  const old = st.output;
  log.add(st, "output", old, log.owns(st, "output", old));
  st.output = value;
}

/** Sets obj[key] = value, remembering the old value (or its absence) in `undo`. */
export function setUndoable<T extends object>(obj: T, key: keyof T & string, value: unknown, undo: Undo): void {
  const old = (obj as any)[key];
  const had = owns(obj, key, old);
  undo.push(() => (had ? ((obj as any)[key] = old) : delete (obj as any)[key]));
  (obj as any)[key] = value;
}

/** Parts to drop: per parts array of the copy, their indexes (applied last, so indexes stay valid). */
export type Drops = Map<Part[], number[]>;

export function dropLater(drops: Drops, parts: Part[], pi: number): void {
  const list = drops.get(parts);
  if (list) list.push(pi);
  else drops.set(parts, [pi]);
}

/** Removes dropped parts with one pass per message; one closure undoes them all. */
export function applyDrops(drops: Drops, undo: Undo): void {
  if (drops.size === 0) return;
  const saved: { parts: unknown[]; all: unknown[] }[] = [];
  undo.push(() => {
    for (let k = saved.length - 1; k >= 0; k--) {
      const { parts, all } = saved[k];
      parts.length = 0;
      for (const p of all) parts.push(p);
    }
  });
  for (const [parts, list] of drops) {
    const all = parts.slice();
    saved.push({ parts, all });
    let ascending = true;
    for (let k = 1; k < list.length && ascending; k++) ascending = list[k - 1] <= list[k];
    parts.length = 0;
    if (ascending) {
      // rendered in prompt order: walk the indexes beside the parts
      let d = 0;
      for (let i = 0; i < all.length; i++) {
        while (d < list.length && list[d] < i) d++;
        if (d < list.length && list[d] === i) continue;
        parts.push(all[i]); // no spread: 100k+ parts possible
      }
    } else {
      const set = new Set(list);
      for (let i = 0; i < all.length; i++) if (!set.has(i)) parts.push(all[i]);
    }
  }
}
