// What rendering keeps of a session between calls, by node position: the id tags the runtime
// gave, and a view of every node with something to render (decisions, tags, echoed ids), holding
// the plan render.ts made for it. A node keeps its position while it is carried over from call to
// call, and the runtime starts a new RenderState whenever it rebuilds its caches, so a position
// always names the same node. Graph nodes hold facts only.
import type { PartNode } from "../graph/graph.js";

/** Render's record of one node. */
export interface View {
  /** The node's place in the copy (the same for as long as the node is carried over), so a pass can find its part without reading the node. */
  readonly mi: number;
  readonly pi: number;
  /** The part's own id tag (ids.ts), if it has one. */
  tag?: string;
  /** The id tags shown after the part's output or text: its own, and the reasoning tags it carries. */
  suffix?: string;
  /** Assistant text that quotes an id tag: rendering strips it. */
  echo: boolean;
  /** A text part of an assistant message. */
  assistantText: boolean;
  /** render.ts planOf, cached: PLAN_UNSET until planned; reset whenever the decisions or the suffix change. */
  kind: number;
  value?: string;
  input?: unknown;
  /** The decisions or the suffix changed since the last pass rendered it. */
  dirty: boolean;
  /** The pass (RenderState.pass) during which the view was made. */
  since: number;
}

/** A view's kind before render planned it. */
export const PLAN_UNSET = -1;

// The plans render.ts makes (planOf): what rendering writes for a completed or failed tool part.
export const PLAN_OTHER = 0; // anything else: the general path (renderSlots)
export const PLAN_WRITE = 1; // write rInput as the input (if set), rValue as the output (if set)
export const PLAN_DROP = 2; // one output decision whose patch only drops the part
export const PLAN_NONE = 3; // nothing to write
export const PLAN_DECIDED = 4; // PLAN_WRITE for an output decision: the attachments are emptied too
export const PLAN_ERROR = 5; // a failed call (not compacted): rValue as its error (if set), rInput as the input (if set); no tag

/** The plans the walk writes itself (render.ts carriedRenderer); a view of any other kind is rendered by the pass. */
export const walkable = (kind: number): boolean => kind === PLAN_WRITE || kind === PLAN_NONE || kind === PLAN_DECIDED || kind === PLAN_ERROR;

export class RenderState {
  /** By node position; undefined for a node with nothing to render. */
  readonly views: (View | undefined)[] = [];
  /** Positions with a view, ascending (what a pass visits), and those made since the last pass. */
  private order: number[] = [];
  private added: number[] = [];
  /** Render passes begun (render.ts renderSession); views remember the one they were made in. */
  pass = 0;
  /**
   * Positions whose plan the walk does not write (their kind is not walkable): at least every such
   * view, with repeats and positions planned since (unwalked() sorts them out). A pass after a walk
   * renders these alone, since a carried-over node with a walkable kind was rendered by the walk
   * (nothing but the pass makes a kind walkable, and whatever changes a plan clears its kind).
   */
  private todo: number[] = [];
  /** Views made. */
  count = 0;
  /**
   * By node position, what the last pass planned for a clean view (its kind, value and input: the
   * walk writes them without reading the view object); PLAN_UNSET once the plan changes.
   */
  readonly kinds: number[] = [];
  readonly values: (string | undefined)[] = [];
  readonly inputs: unknown[] = [];
  /** Walks with a carried renderer begun, and the one of the current call (0: none, the pass renders every node). */
  walks = 0;
  walk = 0;

  /** Room for `count` nodes: positions stay dense (a sparse array would be a slow dictionary). */
  reserve(count: number): void {
    const views = this.views;
    while (views.length < count) {
      views.push(undefined);
      this.kinds.push(PLAN_UNSET);
      this.values.push(undefined);
      this.inputs.push(undefined);
    }
  }

  /** The pass rendered the view at `i`: its plan, as the next walk reads it. */
  planned(i: number, v: View): void {
    const kind = v.dirty ? PLAN_UNSET : v.kind;
    this.kinds[i] = kind;
    this.values[i] = v.value;
    this.inputs[i] = v.input;
    if (!walkable(kind)) this.todo.push(i);
  }

  /** The positions with a view whose kind is not walkable, ascending; the pass plans them again (planned lists those that stay so). */
  unwalked(): number[] {
    const todo = this.todo;
    this.todo = [];
    todo.sort((a, b) => a - b);
    const kinds = this.kinds;
    let n = 0;
    for (let k = 0; k < todo.length; k++) {
      const i = todo[k];
      if ((n > 0 && todo[n - 1] === i) || walkable(kinds[i])) continue;
      todo[n++] = i;
    }
    todo.length = n;
    return todo;
  }

  /** The view of a node, made (and listed for rendering) if it has none. */
  of(node: PartNode): View {
    const i = node.index;
    let v = this.views[i];
    if (v === undefined) {
      this.reserve(i + 1);
      v = { mi: node.msgIndex, pi: node.partIndex, tag: undefined, suffix: undefined, echo: false, assistantText: node.part.type === "text" && node.message.info?.role === "assistant", kind: PLAN_UNSET, value: undefined, input: undefined, dirty: true, since: this.pass };
      this.views[i] = v;
      this.added.push(i);
      this.todo.push(i);
      this.count++;
    }
    return v;
  }

  /** A node's decisions or suffix changed: plan it again, and render it afresh on the next pass. */
  changed(node: PartNode): void {
    const v = this.of(node);
    v.kind = PLAN_UNSET;
    v.dirty = true;
    this.kinds[node.index] = PLAN_UNSET;
    this.todo.push(node.index);
  }

  /** Every position with a view, ascending. */
  positions(): number[] {
    const added = this.added;
    if (added.length === 0) return this.order;
    let ascending = true;
    for (let k = 1; k < added.length && ascending; k++) ascending = added[k - 1] < added[k];
    if (!ascending) added.sort((a, b) => a - b);
    const order = this.order;
    if (order.length === 0 || added[0] > order[order.length - 1]) for (const i of added) order.push(i);
    else {
      // views made for older nodes (a first decision on a part seen before): one merge
      const merged: number[] = new Array(order.length + added.length);
      let a = 0;
      let b = 0;
      let n = 0;
      while (a < order.length || b < added.length) merged[n++] = b >= added.length || (a < order.length && order[a] < added[b]) ? order[a++] : added[b++];
      this.order = merged;
    }
    this.added = [];
    return this.order;
  }
}
