// The pair checks of a supersede key: what keeps a newer part from superseding an older one
// (keepNewest, a line range it does not cover, text it does not replace). The session's supersede
// walk and explain (why-not.ts) ask the same functions.
import type { PartNode } from "../graph/graph.js";
import { getPath } from "../lang/path.js";
import type { CompiledRule } from "./ruleset.js";

/** Lines shorter than this (trimmed) are too common to show that two texts are the same place. */
const MIN_OVERLAP_CHARS = 8;

/** Every string under input params named `param` (at any depth: a multi-edit holds a list of edits). */
function stringsNamed(value: unknown, param: string, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) stringsNamed(item, param, out);
  else if (value !== null && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      if (k === param && typeof v === "string") out.push(v);
      else if (typeof v === "object") stringsNamed(v, param, out);
    }
  return out;
}

/** The distinct lines of a newer part's `param`; undefined when it has none (a whole-file write): it then supersedes all. */
function linesOf(n: PartNode, param: string): Set<string> | undefined {
  const texts = stringsNamed(n.part.state?.input, param);
  if (texts.length === 0) return undefined;
  const lines = new Set<string>();
  for (const t of texts) for (const raw of t.split("\n")) {
    const line = raw.trim();
    if (line.length >= MIN_OVERLAP_CHARS) lines.add(line);
  }
  return lines;
}

/** The older part's `param` has a line among `lines`: the newer part changed text the older one shows. */
function sharesLine(older: PartNode, param: string, lines: Set<string>): boolean {
  for (const t of stringsNamed(older.part.state?.input, param)) for (const raw of t.split("\n")) if (lines.has(raw.trim())) return true;
  return false;
}

/** The line range a view covers; undefined for the whole file. */
function spanOf(n: PartNode, range: { offset: string; limit: string }): [number, number] | undefined {
  const input = n.part.state?.input ?? {};
  const off = getPath(input, [range.offset]);
  const lim = getPath(input, [range.limit]);
  if (off === undefined && lim === undefined) return undefined;
  const start = typeof off === "number" ? off : 0;
  return [start, typeof lim === "number" ? start + lim : Infinity];
}

/** What keeps a newer part of a supersede key from superseding an older one (spares). */
export type Spare = "keepNewest" | "range" | "overlap";

/** What a newer part of a key brings to the supersede checks, computed once per newer part. */
export interface NewerView {
  /** keepNewest applies: the newer part is a `by`-only part, which never supersedes the newest `when` member. */
  keepNewest: boolean;
  /** Its line range (range rules). */
  span?: [number, number];
  /** The lines it replaces (overlap rules). */
  replaced?: Set<string>;
}

export function newerView(r: CompiledRule, n: PartNode, newerIsMember: boolean): NewerView {
  return { keepNewest: r.options.keepNewest === true && !newerIsMember, span: r.range ? spanOf(n, r.range) : undefined, replaced: r.overlap ? linesOf(n, r.overlap.newer) : undefined };
}

/** Why the newer part (its view) does not supersede `older`, or undefined when it does: the checks supersedeOlder and spares share. */
export function spareOf(r: CompiledRule, older: PartNode, olderIsNewest: boolean, newer: NewerView): Spare | undefined {
  if (newer.keepNewest && olderIsNewest) return "keepNewest";
  if (newer.span && !coversSpan(newer.span, older, r.range!)) return "range";
  if (newer.replaced && !sharesLine(older, r.overlap!.older, newer.replaced)) return "overlap";
  return undefined;
}

/**
 * Why `newer` (of `older`'s key, admitted by the rule's `by`) does not supersede `older` under `r`;
 * undefined when it does (explain, why-not.ts). `newerIsMember`: `newer` meets the rule's `when`;
 * `olderIsNewest`: no other `when` member of the key lies between them.
 */
export function spares(r: CompiledRule, older: PartNode, newer: PartNode, newerIsMember: boolean, olderIsNewest: boolean): Spare | undefined {
  return spareOf(r, older, olderIsNewest, newerView(r, newer, newerIsMember));
}

/** A newer view (its span) covers an older one when its line range contains the older range (no range = whole file). */
function coversSpan(a: [number, number], older: PartNode, range: { offset: string; limit: string }): boolean {
  const b = spanOf(older, range);
  if (!b) return a[0] <= 0 && a[1] === Infinity;
  return a[0] <= b[0] && a[1] >= b[1];
}
