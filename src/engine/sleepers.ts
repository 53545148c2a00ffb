// Candidates of one age or reduce rule that wait for time: their time-dependent condition was false
// and cannot hold before the session's clocks reach what wake.ts derived from it. They leave the
// rule's candidate list and come back, in node order, on the first call their time may have come,
// so a call visits the candidates whose time came rather than every waiting one. A candidate whose
// condition waits for a supersede mark (wake.ts Wake.mark) waits by its part id instead, and comes
// back once the runtime reports a mark on that id (marked).
import { CLOCKS, type Clocks, type Wake } from "./wake.js";

/** Off only in tests: every candidate is then evaluated on every call, the reference the index must equal (tests/engine/sleepers.test.ts). */
export const sleeping = { on: true };

interface Sleeper {
  /** The clock value this entry waits for in its heap. */
  at: number;
  node: number;
  wake: Clocks;
}

/** The first clock still short of `wake` (undefined: all reached). */
function unmet(wake: Clocks, now: Clocks): keyof Clocks | undefined {
  for (const c of CLOCKS) if (wake[c] > now[c]) return c;
  return undefined;
}

/**
 * A binary min-heap on `at` (a few lines; the package takes no dependency for it: adding one
 * would change the lockfile for one data structure).
 */
class Heap {
  private readonly items: Sleeper[] = [];
  get size(): number {
    return this.items.length;
  }
  peek(): number {
    return this.items.length > 0 ? this.items[0].at : Infinity;
  }
  push(s: Sleeper): void {
    const a = this.items;
    let i = a.push(s) - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (a[up].at <= s.at) break;
      a[i] = a[up];
      i = up;
    }
    a[i] = s;
  }
  pop(): Sleeper {
    const a = this.items;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && a[l + 1].at < a[l].at ? l + 1 : l;
        if (a[c].at >= last.at) break;
        a[i] = a[c];
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
  nodes(out: number[]): void {
    for (const s of this.items) out.push(s.node);
  }
  drain(out: number[]): void {
    for (const s of this.items) out.push(s.node);
    this.items.length = 0;
  }
}

export class Sleepers {
  private readonly heaps: Record<keyof Clocks, Heap> = { turns: new Heap(), calls: new Heap(), tokens: new Heap() };
  /** Part id → the candidates waiting for a supersede mark on it; and those whose mark came since the last woken(). */
  private readonly byMark = new Map<string, number[]>();
  private waitingMarks = 0;
  private readonly marks: number[] = [];

  get size(): number {
    return this.heaps.turns.size + this.heaps.calls.size + this.heaps.tokens.size + this.waitingMarks + this.marks.length;
  }

  /**
   * Puts a candidate to sleep until `wake`; false when it must stay in the list (nothing in `wake` is
   * later than now). One that can never hold is dropped (true, and not kept). `partId`: the id a
   * mark it waits for names (the part's own).
   */
  sleep(node: number, wake: Wake, now: Clocks, partId?: string): boolean {
    if (wake.mark === true && typeof partId === "string") {
      if (wake.turns !== Infinity && wake.calls !== Infinity && wake.tokens !== Infinity) {
        const list = this.byMark.get(partId);
        if (list) list.push(node);
        else this.byMark.set(partId, [node]);
        this.waitingMarks++;
      }
      return true;
    }
    const c = unmet(wake, now);
    if (c === undefined) return false;
    if (wake.turns !== Infinity && wake.calls !== Infinity && wake.tokens !== Infinity) this.heaps[c].push({ at: wake[c], node, wake });
    return true;
  }

  /** A supersede mark on `partId` was made: the candidates waiting for it come back on the next woken(). */
  marked(partId: string): void {
    if (this.waitingMarks === 0) return;
    const list = this.byMark.get(partId);
    if (list === undefined) return;
    this.byMark.delete(partId);
    this.waitingMarks -= list.length;
    for (const i of list) this.marks.push(i);
  }

  /** Every sleeping candidate (node indexes, in no order). */
  nodes(): number[] {
    const out: number[] = [];
    for (const c of CLOCKS) this.heaps[c].nodes(out);
    for (const list of this.byMark.values()) for (const i of list) out.push(i);
    for (const i of this.marks) out.push(i);
    return out;
  }

  /** The candidates whose time may have come (every clock reached, or the mark they wait for made), in node order; `all`: every sleeper. */
  woken(now: Clocks, all = false): number[] {
    const out: number[] = [];
    for (const i of this.marks) out.push(i);
    this.marks.length = 0;
    if (all) {
      for (const list of this.byMark.values()) for (const i of list) out.push(i);
      this.byMark.clear();
      this.waitingMarks = 0;
    }
    for (const c of CLOCKS) {
      const heap = this.heaps[c];
      if (all) heap.drain(out);
      while (heap.peek() <= now[c]) {
        const s = heap.pop();
        const next = unmet(s.wake, now);
        if (next === undefined) out.push(s.node);
        else this.heaps[next].push({ at: s.wake[next], node: s.node, wake: s.wake });
      }
    }
    return out.sort((a, b) => a - b);
  }
}

/** `list` and `more`, both ascending, as one ascending list. */
export function mergeSorted(list: number[], more: number[]): number[] {
  if (more.length === 0) return list;
  const out = new Array<number>(list.length + more.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < list.length && j < more.length) out[k++] = list[i] <= more[j] ? list[i++] : more[j++];
  while (i < list.length) out[k++] = list[i++];
  while (j < more.length) out[k++] = more[j++];
  return out;
}
