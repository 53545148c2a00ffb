// Render: the committed decisions, id tags and echo stripping written into the copy the host
// handed over, in one pass over the nodes with something to render (render-state.ts keeps them
// and their plans). Only this file and the intro mutate host messages; every write is logged.
import { inputChars, resultText, textLength, textOf, type Graph, type PartNode } from "../graph/graph.js";
import type { IdTags } from "./id-tags.js";
import type { Message, Part } from "../graph/types.js";
import type { Patch } from "./actions/index.js";
import { PLAN_DECIDED, PLAN_DROP, PLAN_ERROR, PLAN_NONE, PLAN_OTHER, PLAN_UNSET, PLAN_WRITE, RenderState, walkable, type View } from "./render-state.js";
import { decisionsOf, type DecisionSlots } from "./state.js";
import { dropLater, setOutput, type Drops, type WriteLog } from "./write-log.js";

/** Characters the provider receives for the slot a patch replaces (for token accounting). */
export function slotChars(node: PartNode, patch: Patch): number {
  const p = node.part;
  if (patch.input !== undefined) return inputChars(node);
  if (patch.output !== undefined) return resultText(node).length;
  if (patch.text !== undefined) return (p.text ?? "").length;
  if (patch.asText !== undefined) return textOf(p.url).length;
  if (patch.drop) return p.type === "tool" ? resultText(node).length + (p.state?.input === undefined ? 0 : inputChars(node)) : textOf(p.text).length;
  return 0;
}

export function patchChars(patch: Patch): number {
  if (patch.input !== undefined) return textLength(patch.input);
  return (patch.output ?? patch.text ?? patch.asText ?? "").length;
}

// The writes below name their property: each access site sees few object shapes and stays fast,
// where one helper taking the key would make every access a megamorphic keyed lookup.
// `part` is the part at `parts[pi]` in the host's copy: never the node's own part object, which
// keeps the content as stored (rules and actions read it on later calls).
function applyPatch(node: PartNode, part: Part, parts: Part[], pi: number, patch: Patch, log: WriteLog): boolean {
  const st = part.state;
  const output = patch.output;
  if (output !== undefined && st) {
    if (st.status === "error") {
      const old = st.error;
      log.add(st, "error", old, log.owns(st, "error", old));
      st.error = output;
    } else {
      const old = st.output;
      log.add(st, "output", old, log.owns(st, "output", old));
      st.output = output;
      if (Array.isArray(st.attachments)) {
        log.add(st, "attachments", st.attachments, log.owns(st, "attachments", st.attachments));
        st.attachments = [];
      }
      // A tool node's signature ends in "c" whenever the part was compacted (graph.ts sigOf, the
      // same for every copy the node is reused for): other tool parts skip the read of state.time.
      const time = part.type === "tool" && typeof node.sig === "string" && !node.sig.endsWith("c") ? undefined : st.time;
      if (time?.compacted) {
        log.add(time, "compacted", time.compacted, true); // put back as a plain assignment, as it was read
        delete time.compacted;
      }
    }
  }
  const input = patch.input;
  if (input !== undefined && st) {
    const old = st.input;
    log.add(st, "input", old, log.owns(st, "input", old));
    st.input = input;
  }
  const text = patch.text;
  if (text !== undefined && text.length > 0) {
    const old = part.text;
    log.add(part, "text", old, log.owns(part, "text", old));
    part.text = text;
  }
  if (patch.asText !== undefined) {
    log.add(parts, pi, parts[pi], true);
    parts[pi] = { id: part.id, sessionID: part.sessionID, messageID: part.messageID, type: "text", text: patch.asText, synthetic: true };
  }
  return patch.drop === true;
}

// A plan: what rendering writes for a completed tool part (not compacted) in a fresh copy with
// tags on, the case of nearly every part of a long history. Kept in the node's view until its
// decisions or its tag suffix change (RenderState.changed): most calls then write cached values
// without reading the decisions, their patches or the copy's own output.
// The plan kinds (PLAN_*) are in render-state.ts, which says which of them the walk writes.

/** Only replaces the output (a string), or only the input: the common patches. */
const outputOnly = (p: Patch) => typeof p.output === "string" && p.input === undefined && p.text === undefined && p.asText === undefined && p.drop !== true;
const inputOnly = (p: Patch) => p.input !== undefined && p.output === undefined && p.text === undefined && p.asText === undefined && p.drop !== true;
const dropOnly = (p: Patch) => p.drop === true && p.output === undefined && p.input === undefined && p.text === undefined && p.asText === undefined;

function planOf(node: PartNode, v: View, slots: DecisionSlots | undefined): number {
  v.value = undefined;
  v.input = undefined;
  if (node.part.type !== "tool" || (node.sig !== "completed" && node.sig !== "error")) return PLAN_OTHER;
  const out = slots?.output?.patch;
  const inp = slots?.input?.patch;
  if (out !== undefined && inp === undefined && dropOnly(out)) return PLAN_DROP;
  if ((out !== undefined && !outputOnly(out)) || (inp !== undefined && !inputOnly(inp))) return PLAN_OTHER;
  if (node.sig === "error") {
    // an output decision replaces the error text (applyPatch); tags follow completed outputs only
    v.value = out?.output;
    v.input = inp?.input;
    return v.value === undefined && v.input === undefined ? PLAN_NONE : PLAN_ERROR;
  }
  const base = out !== undefined ? out.output : node.part.state?.output;
  if (typeof base !== "string") return PLAN_OTHER;
  v.input = inp?.input;
  // the tag follows the output, written once: tagOutput's `${output}\n${suffix}`
  v.value = v.suffix !== undefined ? `${base}\n${v.suffix}` : out !== undefined ? base : undefined;
  if (v.value === undefined && v.input === undefined) return PLAN_NONE;
  return out !== undefined ? PLAN_DECIDED : PLAN_WRITE;
}

/** Where rendering writes: the undo log, the drops to apply at the end, and whether id tags are shown. */
export interface RenderTarget {
  log: WriteLog;
  drops: Drops;
  /** Ids are on (config `tool`): echoed ids are stripped from assistant text. */
  ids: boolean;
  /** The host's id tags. */
  idTags: IdTags;
  /** Id tags are shown (ids on, and not the copy the compaction agent summarises). */
  tags: boolean;
  /**
   * The copy came from the host, not back from us (not an array this pruner rendered before): its
   * parts hold the content as stored, so no output can already end with our tag and no text with
   * its suffix. Checking would read the end of every tagged output, one cache miss each.
   */
  fresh?: boolean;
}

/** Appends `suffix` to a completed tool output (a second pass over our own output keeps it once). */
export function tagOutput(part: Part, suffix: string, log: WriteLog, fresh = false): void {
  const st = part.state;
  if (part.type === "tool" && st?.status === "completed" && typeof st.output === "string" && (fresh || !st.output.endsWith(suffix))) setOutput(st, `${st.output}\n${suffix}`, log);
}

/**
 * Assistant text: tags the model echoed are stripped, then the part's own suffix (if any) is
 * appended. Our own output coming back (a repeated transform) keeps its suffix as it is.
 */
export function renderText(part: Part, suffix: string | undefined, to: Pick<RenderTarget, "log" | "idTags">, quotes?: boolean): void {
  if (part.type !== "text" || typeof part.text !== "string") return;
  const { log, idTags } = to;
  // quotes: whether the text holds a tag's start, when the caller knows it (a fresh copy of a text seen before)
  const has = quotes ?? part.text.includes(idTags.marker);
  if (suffix === undefined && !has) return;
  const own = suffix === undefined ? "" : `\n${suffix}`;
  let base = own && quotes === undefined && part.text.endsWith(own) ? part.text.slice(0, -own.length) : part.text;
  if (has && base.includes(idTags.marker)) {
    const stripped = base.replace(idTags.all, "").replace(/[ \t]+\n/g, "\n");
    if (stripped.trim().length > 0) base = stripped; // never an empty text part
  }
  if (base + own !== part.text) {
    const old = part.text;
    log.add(part, "text", old, log.owns(part, "text", old));
    part.text = base + own;
  }
}

/**
 * Renders a node into `part`, the part at `parts[pi]` of the host's copy: its committed decisions,
 * then its id tags and the stripping of echoed ids (assistant text). Drops are collected.
 */
function renderNode(node: PartNode, v: View, slots: DecisionSlots | undefined, part: Part, parts: Part[], pi: number, to: RenderTarget): void {
  if (to.tags && to.fresh === true) {
    let kind = v.kind;
    if (kind === PLAN_UNSET) v.kind = kind = planOf(node, v, slots);
    if (kind === PLAN_DROP) return dropLater(to.drops, parts, pi);
    if (kind === PLAN_WRITE || kind === PLAN_DECIDED || kind === PLAN_ERROR) return writePlan(kind, v.value, v.input, part, to.log);
    if (kind === PLAN_NONE) return;
  }
  renderSlow(node, v, slots, part, parts, pi, to);
}

/** A planned write (PLAN_WRITE, PLAN_DECIDED, PLAN_ERROR) of a completed or failed tool part: the plan's value and input. */
function writePlan(kind: number, output: string | undefined, input: unknown, part: Part, log: WriteLog): void {
  const st = part.state!;
  if (input !== undefined) {
    const old = st.input;
    log.add(st, "input", old, log.owns(st, "input", old));
    st.input = input as typeof st.input;
  }
  if (output !== undefined && kind === PLAN_ERROR) {
    const old = st.error;
    log.add(st, "error", old, log.owns(st, "error", old));
    st.error = output;
  } else if (output !== undefined) {
    const old = st.output;
    log.add(st, "output", old, log.owns(st, "output", old));
    st.output = output;
    // an output decision also empties the attachments (applyOutput)
    if (kind === PLAN_DECIDED && Array.isArray(st.attachments)) {
      log.add(st, "attachments", st.attachments, log.owns(st, "attachments", st.attachments));
      st.attachments = [];
    }
  }
}

/** Off only in tests: every node is then rendered by the pass, the reference the walk's rendering must equal (tests/engine/render.test.ts). */
export const walkRendering = { on: true };

/**
 * The walk's visitor (BuildOptions.carried) that renders a carried-over node whose plan is made
 * and unchanged (its view clean: RenderState.planned) while the walk holds its part: the pass after the walk would write the same
 * values, and reading the part and its state again there costs a cache miss each (docs/bench.md).
 * The pass visits only the views whose kind is not walkable (RenderState.unwalked): the nodes it
 * rendered keep theirs unless their plan changed since (RenderState.changed, which clears it), and
 * those the pass renders from the node's own part as before (rewrite).
 * Writes go to `log`, which the caller undoes when the pass is not incremental after all (the
 * caches were rebuilt, or another process's decisions merged): a full pass renders every node of
 * the copy as it came. Only for a fresh copy with tags shown, where the pass takes the plans.
 */
export function carriedRenderer(rs: RenderState, to: Pick<RenderTarget, "tags" | "fresh">, log: WriteLog): ((i: number, part: Part) => void) | undefined {
  if (!to.tags || to.fresh !== true || !walkRendering.on) return undefined;
  rs.walk = ++rs.walks;
  // the plans as flat arrays by position (RenderState.planned): no view object is read here
  const { kinds, values, inputs } = rs;
  return (i, part) => {
    if (i >= kinds.length) return;
    const kind = kinds[i];
    if (kind === PLAN_WRITE || kind === PLAN_DECIDED || kind === PLAN_ERROR) writePlan(kind, values[i], inputs[i], part, log);
  };
}

/** The general case: each decision's patch, then tags and echoes, as written. */
function renderSlow(node: PartNode, v: View, slots: DecisionSlots | undefined, part: Part, parts: Part[], pi: number, to: RenderTarget): void {
  const log = to.log;
  if (slots !== undefined) {
    if ((slots.input !== undefined && applyPatch(node, part, parts, pi, slots.input.patch, log)) || (slots.output !== undefined && applyPatch(node, part, parts, pi, slots.output.patch, log))) return dropLater(to.drops, parts, pi);
    part = parts[pi]; // a mask replaces the part
  }
  if (!to.ids) return;
  const suffix = to.tags ? v.suffix : undefined;
  if (part.type === "tool") {
    if (suffix !== undefined) tagOutput(part, suffix, log, to.fresh === true && slots === undefined);
    return;
  }
  if ((suffix !== undefined || v.echo || slots !== undefined) && part.type === "text" && v.assistantText) {
    // a fresh copy of the text the node was built from: whether it quotes ids is known (attach)
    const known = to.fresh === true && slots === undefined && part.text?.length === node.textLen;
    renderText(part, suffix, to, known ? v.echo : undefined);
  }
}

/** A copy of a part that writes can go to (the part, its tool state, and its times if a compaction mark may be removed). */
function writable(part: Part): Part {
  const copy: Part = { ...part };
  const st = part.state;
  if (st && typeof st === "object") {
    const s = { ...st };
    if (s.time && typeof s.time === "object" && s.time.compacted) s.time = { ...s.time };
    copy.state = s;
  }
  return copy;
}

/** How a pass finds the part to write for a node (see render). */
export const Pass = {
  /** The graph carried nodes over from the last call, which this state rendered: the walk found their parts in the copy. */
  Incremental: 0,
  /** Every node anew (the caches were rebuilt, or another process's decisions were merged). */
  Full: 1,
  /** A graph built from the copy itself (a repeated call): its nodes' parts are the copy's, written in place. */
  InPlace: 2,
} as const;
export type Pass = (typeof Pass)[keyof typeof Pass];

/**
 * The one render pass: every node `rs` has a view of, in prompt order, gets its decisions
 * (`decisions`, by position), id tags and echo stripping written into `messages`, the copy the
 * host handed over; parts to drop are collected in `to.drops` (applyDrops, after the intro).
 *
 * A node's own part (a node built from this copy) is never written: it keeps the content as
 * stored, which rules read on later calls, so the node renders into a fresh copy of it. On an
 * incremental pass, a carried-over node whose plan changed since the last pass renders from its
 * own part too, so that nothing of what an earlier pass showed (our own output coming back)
 * stays in it. Returns how many nodes it skipped because the walk rendered them.
 */
export function render(messages: Message[], graph: Graph, decisions: readonly (DecisionSlots | undefined)[], rs: RenderState, to: RenderTarget, pass: Pass): number {
  // after a walk that rendered the carried-over nodes with a walkable plan (carriedRenderer), the
  // rest: the views whose kind is not walkable (their plan changed since, or the walk does not
  // write it), the new nodes' among them
  const walk = pass === Pass.Incremental ? rs.walk : 0;
  const unwalked = rs.unwalked();
  const positions = walk !== 0 ? unwalked : rs.positions();
  const views = rs.views;
  const nodes = graph.nodes;
  const reused = pass === Pass.Incremental ? graph.reused : 0;
  const current = rs.pass;
  rs.walk = 0;
  const skipped = walk !== 0 ? rs.count - positions.length : 0;
  for (let k = 0; k < positions.length; k++) {
    const i = positions[k];
    const node = nodes[i];
    const v = views[i]!;
    if (node === undefined) continue;
    renderAt(node, v, decisions[i], messages[v.mi]?.parts, i < reused, current, pass, to);
    rs.planned(i, v); // what the next walk writes, in its flat arrays
  }
  rs.pass++;
  return skipped;
}

/** One node of the pass: `carried` when the walk found its part at its place (same id, status, text length). */
function renderAt(node: PartNode, v: View, slots: DecisionSlots | undefined, parts: Part[], carried: boolean, current: number, pass: Pass, to: RenderTarget): void {
  const pi = v.pi;
  if (carried) {
    if (v.dirty && v.since < current) rewrite(node, v, slots, parts, pi, to);
    else renderNode(node, v, slots, parts[pi], parts, pi, to);
    v.dirty = false;
    return;
  }
  v.dirty = false;
  const part = parts?.[pi];
  if (!part || part.id !== node.part.id) return;
  if (pass !== Pass.InPlace && part === node.part) {
    if (!wanted(v, slots, to)) return;
    const fresh = writable(node.part);
    to.log.add(parts, pi, part, true);
    parts[pi] = fresh;
    renderNode(node, v, slots, fresh, parts, pi, to);
  } else if (wanted(v, slots, to)) renderNode(node, v, slots, part, parts, pi, to);
}

/** Something to write: decisions, tags shown, or echoed ids to strip. */
const wanted = (v: View, slots: DecisionSlots | undefined, to: RenderTarget) => slots !== undefined || (to.tags && v.suffix !== undefined) || (to.ids && v.echo);

/** A carried-over node whose plan changed: rendered from its own part, or given its own part back when nothing is left to write. */
function rewrite(node: PartNode, v: View, slots: DecisionSlots | undefined, parts: Part[], pi: number, to: RenderTarget): void {
  to.log.add(parts, pi, parts[pi], true);
  if (!wanted(v, slots, to)) {
    parts[pi] = node.part; // the same content as the host's copy of it
    return;
  }
  const fresh = writable(node.part);
  parts[pi] = fresh;
  renderNode(node, v, slots, fresh, parts, pi, to);
}

/** Decisions that take the part out of the prompt. */
export const isDropped = (slots: DecisionSlots | undefined) => slots?.output?.patch.drop === true || slots?.input?.patch.drop === true;

/**
 * A repeated call (the same history again, or our own output coming back): a graph of the copy
 * gets, by part id, the committed decisions of the state record and the tag suffixes `rs` holds
 * for the runtime's graph, and is rendered in place by the same pass.
 */
/** The node of `graph` for a part that shares its id with an earlier one: the same id, type and message. */
function repeatedIn(graph: Graph, n: PartNode): PartNode | undefined {
  const message = n.message.info?.id;
  return graph.nodes.find((r) => r !== graph.byId.get(r.part.id) && r.part.id === n.part.id && r.part.type === n.part.type && r.message.info?.id === message);
}

export function renderRepeat(copy: Graph, decisions: Record<string, DecisionSlots>, runtime: Graph | undefined, rs: RenderState, to: RenderTarget): void {
  const views = new RenderState();
  const slots: (DecisionSlots | undefined)[] = [];
  for (const n of copy.nodes) {
    const d = decisionsOf(decisions, n.part);
    // decisions and tags name the first part with an id: a later part sharing it gets neither
    const first = copy.byId.get(n.part.id) === n;
    // our own output again: its dropped parts are gone, and the part found by their id is another
    const skip = isDropped(d) && !(first && to.fresh === true);
    slots.push(skip || !first ? undefined : d);
    if (skip || !to.ids) {
      if (slots[n.index] !== undefined) views.of(n);
      continue;
    }
    // the runtime's node for the part: by its id, or, for a part that repeats an earlier part's id
    // (it may carry the tags of reasoning before it), by its message too
    const own = runtime === undefined ? undefined : first ? runtime.byId.get(n.part.id) : repeatedIn(runtime, n);
    const suffix = to.tags && own !== undefined && own.part.type === n.part.type ? rs.views[own.index]?.suffix : undefined;
    const v = slots[n.index] !== undefined || suffix !== undefined || n.message.info?.role === "assistant" ? views.of(n) : undefined;
    if (v === undefined) continue;
    v.suffix = suffix;
    v.echo = v.assistantText; // renderText looks for echoed tags itself (a repeat knows nothing of the text)
  }
  // tags may be in the copy already (our own output): never the fresh-copy shortcuts
  render(copy.messages, copy, slots, views, { ...to, fresh: false }, Pass.InPlace);
}
