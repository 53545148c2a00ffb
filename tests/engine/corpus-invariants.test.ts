// Invariants of the pruner on the real corpus, replayed as OpenCode calls it (docs/simulate.md,
// "Replay"): for each assistant message i, a fresh deep copy of messages[0..i) goes through
// transform (deepCopy: what structuredClone gives on JSON data, 7× faster); one pruner per session
// keeps its state between calls. Violations are collected per property (deduplicated by session
// and part, with the first call and a count) and each property fails on its own.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { isIntroPart } from "../../src/engine/intro.js";
import type { Message, Part } from "../../src/graph/types.js";
import { callIndexes, corpusFiles, corpusSession, deepCopy } from "./session-gen.js";
import { MAX_NOTE_GROWTH } from "../property/invariants.js";

const PROPS = ["errors", "a", "b", "c", "d", "e", "f", "g1", "g2", "h"] as const;
type Prop = (typeof PROPS)[number];

class Violations {
  private readonly seen = new Map<Prop, Map<string, { first: string; count: number }>>(PROPS.map((p) => [p, new Map()]));
  readonly stats = { calls: 0, decided: 0, restored: 0, restartCalls: 0, twiceCalls: 0, tagged: 0, maxTagBytes: 0 };
  /** Records a violation; `key` (session + part) deduplicates repeats over later calls. */
  add(prop: Prop, key: string, message: string) {
    const m = this.seen.get(prop)!;
    const e = m.get(key);
    if (e) e.count++;
    else m.set(key, { first: message, count: 1 });
  }
  expectNone(prop: Prop) {
    const list = [...this.seen.get(prop)!.values()];
    const text = list.slice(0, 8).map((e) => `${e.first}${e.count > 1 ? ` (and ${e.count - 1} more times)` : ""}`);
    expect(list.length, `${list.length} violations:\n${text.join("\n")}`).toBe(0);
  }
}

const DROPPED = "<dropped>";
const bytes = (s: string) => Buffer.byteLength(s, "utf8");
const clip = (s: string | undefined, n = 200) => (s === undefined ? "undefined" : s.length > n ? `${s.slice(0, n)}…` : s);

// Tool outputs and long assistant texts carry short ids the model can cite ("\n[acp:t12]",
// "\n[acp:r3] [acp:m4]" with the id of the step's reasoning first; src/engine/ids.ts). They are an
// addition, not pruning: comparisons with the input remove them, and their stability is checked apart.
const TAG_SUFFIX = /\n(?:\[acp:[tmr][0-9a-z]+\] )*\[acp:[tmr][0-9a-z]+\]$/;
const shownText = (p: Part): string | undefined => (p.type === "tool" ? (typeof p.state?.output === "string" ? p.state.output : undefined) : p.type === "text" ? p.text : undefined);
const tagOf = (p: Part): string | undefined => {
  const t = shownText(p);
  return t === undefined ? undefined : TAG_SUFFIX.exec(t)?.[0];
};

/** The JSON of what one decision slot governs: a tool call's input, or everything else. */
function slotJson(p: Part, slot: "output" | "input"): string {
  if (slot === "input") return JSON.stringify(p.state?.input ?? null);
  return p.state ? JSON.stringify({ ...p, state: { ...p.state, input: undefined } }) : JSON.stringify(p);
}

/** The part's JSON without its id tags (cut out of the JSON text when they occur there once). */
function untag(p: Part, json: string): string {
  const tag = tagOf(p);
  if (!tag) return json;
  const escaped = `${JSON.stringify(tag).slice(1, -1)}"`;
  const at = json.indexOf(escaped);
  if (at >= 0 && json.indexOf(escaped, at + 1) < 0) return json.slice(0, at) + json.slice(at + escaped.length - 1);
  const cut = shownText(p)!.slice(0, -tag.length);
  return JSON.stringify(p.type === "tool" ? { ...p, state: { ...p.state, output: cut } } : { ...p, text: cut });
}

// The lanes that replay with extra pruners run on slices: a new pruner per call pays createPruner
// (~30 ms: YAML + ajv) every call, and the double-transform lane doubles the work. The restart
// slice holds the sessions with the most user turns per call (commits across turns, batching,
// sentUpTo) from all three origins, 235 calls; the double-transform slice adds the large Claude
// Code session 3cfce0ff (92 calls).
const RESTART_SLICE = new Set([
  "f551142a-ef6a-46fd-a3bf-14a924370fb0",
  "b675c665-d678-4c00-9bca-43c772f3b260",
  "3bd9cf18-3c9b-42f5-8fd1-47f5456c1fec",
  "ses_39b9a333bffeVNXMK6bSZru9Uq",
  "8914a511-2982-4b5b-886b-cb526da278b1",
  "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68",
  "ea6b9704-440b-478b-bcc7-3705480cec17",
  "swe_katy",
]);
const TWICE_SLICE = new Set([...RESTART_SLICE, "3cfce0ff-0725-47be-a572-f8af8122b71e"]);

interface PartInfo {
  json: string;
  part: Part;
  msgIndex: number;
}

/** Part JSON by id, in prompt order (the first part wins on duplicate ids, as in buildGraph). */
function partsById(messages: Message[]): Map<string, PartInfo> {
  const out = new Map<string, PartInfo>();
  messages.forEach((msg, msgIndex) => {
    for (const part of msg.parts) if (!out.has(part.id)) out.set(part.id, { json: JSON.stringify(part), part, msgIndex });
  });
  return out;
}

/** Where two texts first differ, with some context from each. */
function around(a: string, b: string): string {
  let k = 0;
  while (k < a.length && a[k] === b[k]) k++;
  const win = (s: string) => JSON.stringify(s.slice(Math.max(0, k - 60), k + 140));
  return `at char ${k}: ${win(a)} vs ${win(b)}`;
}

function firstDifference(a: Message[], b: Message[]): string {
  const pa = partsById(a);
  const pb = partsById(b);
  for (const [id, x] of pa) if (pb.get(id)?.json !== x.json) return `part ${id} ${around(x.json, pb.get(id)?.json ?? DROPPED)}`;
  for (const id of pb.keys()) if (!pa.has(id)) return `part ${id} only in the second`;
  return "message-level difference (info or order)";
}

/** The opt-in code-block collapse may replace fenced blocks only: all text outside them is kept, in order. */
function outsideFencesKept(before: string, after: string): boolean {
  let at = 0;
  for (const seg of before.split(/```[\w+-]*\n[\s\S]*?```/)) {
    const k = after.indexOf(seg, at);
    if (k < 0) return false;
    at = k + seg.length;
  }
  return true;
}

const isObject = (x: unknown) => x !== null && typeof x === "object" && !Array.isArray(x);

/** Replays one session; (a)–(d), (h) on every call, (f), (g) on the slice, (e) after the replay. */
function replaySession(file: string, preset: string, v: Violations, stateDir: string): void {
  const { messages: raw } = corpusSession(file);
  const name = basename(file, ".json");
  const restart = preset === "balanced" && RESTART_SLICE.has(name);
  const onError = (lane: string) => (e: unknown, where: string) => v.add("errors", `${name} ${lane}`, `${name} ${lane} ${where}: ${(e as Error)?.stack ?? e}`);
  const pruner = createPruner({ preset, onError: onError("A") });
  const twice = preset === "balanced" && TWICE_SLICE.has(name) ? createPruner({ preset, onError: onError("twice") }) : undefined;
  const rawParts = partsById(raw); // the recording never changes: its JSON once per session
  const decidedAt = new Map<string, { call: number; json: string }>();
  const tags = new Map<string, string>();
  let introSeen: string | undefined;
  const sid = raw[0].info.sessionID;

  for (const i of callIndexes(raw)) {
    v.stats.calls++;
    const where = `${name} call ${i}`;
    const out = deepCopy(raw.slice(0, i));
    pruner.transform(out);
    const outParts = partsById(out);
    const decisions = pruner.state(sid).decisions;
    let lastUser = -1;
    for (let m = 0; m < i; m++) if (raw[m].info.role === "user") lastUser = m;

    for (const [id, r] of rawParts) {
      if (r.msgIndex >= i) continue;
      const rp = r.part;
      const key = `${name} ${id}`;
      const o = outParts.get(id);
      const rendered = o?.json ?? DROPPED;
      const untagged = o ? untag(o.part, o.json) : DROPPED;
      // (a) a part with a decision renders identically in every later call; a part without one
      //     renders as the input, apart from its id tag, which never changes once given
      //     (per slot: a call's input may be stripped at a later call than its output was cleared)
      const slots = decisions[id];
      if (!slots) {
        if (untagged !== r.json) v.add("a", key, `${where} ${id}: changed without a decision: ${clip(r.json)} → ${clip(rendered)}`);
      } else
        for (const slot of ["output", "input"] as const) {
          const now = o ? slotJson(o.part, slot) : DROPPED;
          const first = decidedAt.get(`${id} ${slot}`);
          if (first) {
            if (first.json !== now) v.add("a", `${key} ${slot}`, `${where} ${id}: ${slot} decided at call ${first.call} as ${clip(first.json)}, now ${clip(now)}`);
          } else if (slots[slot]) decidedAt.set(`${id} ${slot}`, { call: i, json: now });
          else if (o && slotJson(JSON.parse(untagged) as Part, slot) !== slotJson(rp, slot)) v.add("a", `${key} ${slot}`, `${where} ${id}: ${slot} changed without a decision: ${clip(now)}`);
        }
      const tag = o ? tagOf(o.part) : undefined;
      const firstTag = tags.get(id);
      if (firstTag !== undefined && firstTag !== tag) v.add("a", `${key} tag`, `${where} ${id}: id tag ${JSON.stringify(firstTag)} became ${JSON.stringify(tag)}`);
      if (firstTag === undefined && tag) tags.set(id, tag);
      // (c) user text is byte-identical (compact's opt-in collapse-code-blocks may only touch fences)
      if (rp.type === "text" && raw[r.msgIndex].info.role === "user" && !rp.synthetic && rendered !== r.json) {
        const d = decisions[id]?.output;
        if (d?.action !== "collapse-code-blocks" || !o || !outsideFencesKept(rp.text ?? "", o.part.text ?? ""))
          v.add("c", key, `${where} ${id}: user text ${clip(r.json)} became ${clip(rendered)} (decision ${d?.rule ?? "none"})`);
      }
      // (d) the current turn's reasoning is byte-identical
      if (rp.type === "reasoning" && r.msgIndex > lastUser && rendered !== r.json) v.add("d", key, `${where} ${id}: current-turn reasoning became ${clip(rendered)}`);
      if (!o) continue;
      // (b) tool parts keep their call and their result; pruning creates no empty text
      if (rp.type === "tool" && rp.state) {
        const rs = rp.state;
        const os = o.part.state;
        if (o.part.type !== "tool" || !os) v.add("b", key, `${where} ${id}: tool part lost its type or state`);
        else {
          if (isObject(rs.input) && !isObject(os.input)) v.add("b", key, `${where} ${id}: call input lost (${clip(JSON.stringify(os.input))})`);
          if (os.status !== rs.status) v.add("b", key, `${where} ${id}: status ${rs.status} → ${os.status}`);
          if (rs.status === "completed" && typeof rs.output === "string" && typeof os.output !== "string") v.add("b", key, `${where} ${id}: completed result lost`);
          if (rs.status === "error" && rs.error && !os.error) v.add("b", key, `${where} ${id}: error result lost`);
        }
      }
      if (o.part.type === "text" && (o.part.text ?? "").trim() === "" && !(rp.type === "text" && (rp.text ?? "").trim() === ""))
        v.add("b", key, `${where} ${id}: pruning left an empty text part, was ${clip(r.json)}`);
      // (h) never larger than the input part (id tags aside: counted in stats)
      if (rendered !== untagged) {
        v.stats.tagged++;
        const count = (tagOf(o!.part)?.match(/\[acp:/g) ?? []).length || 1;
        v.stats.maxTagBytes = Math.max(v.stats.maxTagBytes, (bytes(rendered) - bytes(untagged)) / count);
      }
      if (bytes(untagged) > bytes(r.json)) {
        const d = decisions[id]?.output ?? decisions[id]?.input;
        // the one exception: a small older view replaced beside its newer view (never stale over
        // fresh), a note, not content (the engine caps it at 160 chars)
        const besideNewer = d?.by !== undefined && decisions[d.by]?.output !== undefined && bytes(untagged) - bytes(r.json) <= MAX_NOTE_GROWTH;
        if (!besideNewer) v.add("h", key, `${where} ${id} (${rp.type}${rp.tool ? `:${rp.tool}` : ""}, rule ${d?.rule ?? "none"}, ${d?.tokens ?? 0} tokens counted as saved): ${bytes(r.json)} → ${bytes(untagged)} bytes; now ${clip(o.json, 400)}`);
      }
    }
    // the only part the plugin adds: the prune tool's instructions, at one fixed place once they start
    for (const [id, o] of outParts) {
      if (rawParts.has(id)) continue;
      if (!isIntroPart(o.part)) v.add("b", `${name} ${id}`, `${where} ${id}: part not in the input`);
      else if ((introSeen ??= id) !== id) v.add("a", `${name} intro`, `${where}: instructions moved from ${introSeen} to ${id}`);
    }
    if (introSeen !== undefined && !outParts.has(introSeen)) v.add("a", `${name} intro`, `${where}: instructions ${introSeen} disappeared`);

    const json = restart || twice ? JSON.stringify(out) : "";
    // (f) a new pruner per call, with its state restored from disk, renders the same bytes
    if (restart) {
      v.stats.restartCalls++;
      const fresh = createPruner({ preset, stateDir: join(stateDir, name), onError: onError("restart") });
      const copy = deepCopy(raw.slice(0, i));
      fresh.transform(copy);
      if (JSON.stringify(copy) !== json) v.add("f", name, `${where}: the restart replay differs at ${firstDifference(out, copy)}`);
    }
    if (!twice) continue;
    // (g1) transforming the already-pruned copy again (same call, same pruner) changes nothing;
    // (g2) and leaves no trace: a pruner that always transforms twice renders what one transform renders
    v.stats.twiceCalls++;
    const copy2 = deepCopy(raw.slice(0, i));
    twice.transform(copy2);
    const once = JSON.stringify(copy2);
    if (once !== json) v.add("g2", name, `${where}: after double transforms in earlier calls, the output differs from the single-transform replay at ${firstDifference(out, copy2)}`);
    twice.transform(copy2);
    if (JSON.stringify(copy2) !== once) v.add("g1", name, `${where}: a second transform of the pruned copy changed it at ${firstDifference(JSON.parse(once), copy2)}`);
  }

  // (e) restore gives back the original bytes (id tag aside): three decisions one at a time, then the rest at once
  const ids = Object.keys(pruner.state(sid).decisions);
  v.stats.decided += decidedAt.size;
  v.stats.restored += ids.length;
  const check = (restored: string[], label: string) => {
    const full = deepCopy(raw);
    pruner.transform(full);
    const outParts = partsById(full);
    for (const id of restored) {
      const o = outParts.get(id);
      const got = o ? untag(o.part, o.json) : DROPPED;
      if (got !== rawParts.get(id)!.json) v.add("e", `${name} ${id}`, `${name} ${label} ${id}: the restored part renders ${clip(got)} instead of ${clip(rawParts.get(id)!.json)}`);
    }
  };
  // a restore brings the part's pruned newer views of the same thing back with it: they render the
  // original bytes too, and a later restore of one of them finds nothing to do
  const restore = (id: string): string[] => {
    if (!pruner.state(sid).decisions[id]) return []; // restored already, as a newer view
    const r = pruner.restoreReport(sid, id);
    if (!r.restored) v.add("e", `${name} ${id}`, `${name} ${id}: restore returned false`);
    return [id, ...r.newer];
  };
  for (const id of ids.slice(0, 3)) {
    const back = restore(id);
    if (back.length > 0) check(back, "one-by-one");
  }
  ids.slice(3).forEach(restore);
  if (ids.length > 3) check(ids.slice(3), "all-at-once");
}

const FILES = corpusFiles();

for (const preset of ["balanced", "compact"]) {
  describe(`corpus replay, ${preset} preset (${FILES.length} sessions)`, () => {
    const v = new Violations();
    const dir = mkdtempSync(join(tmpdir(), "acp-restart-"));
    beforeAll(() => {
      for (const file of FILES) replaySession(file, preset, v, dir);
    }, 120_000);
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("replays every call and prunes parts (the checks are not vacuous)", () => {
      expect(v.stats.calls).toBe(1502);
      expect(v.stats.decided).toBeGreaterThan(400); // decided slots: balanced 506, compact 941 when written (step markers are kept)
      expect(v.stats.restored).toBeGreaterThan(300);
      expect(v.stats.restartCalls).toBe(preset === "balanced" ? 235 : 0);
      expect(v.stats.twiceCalls).toBe(preset === "balanced" ? 327 : 0);
    });
    it("transform never swallows an error", () => v.expectNone("errors"));
    it("(a) a decided part renders identically in every later call; others render as the input", () => v.expectNone("a"));
    it("(b) tool parts keep call and result; no empty text parts are created", () => v.expectNone("b"));
    it("(c) user text parts are byte-identical", () => v.expectNone("c"));
    it("(d) the current turn's reasoning is byte-identical", () => v.expectNone("d"));
    it("(e) restore renders the original bytes again", () => v.expectNone("e"));
    it("(h) no part grows (UTF-8 bytes of its JSON, id tag aside)", () => v.expectNone("h"));
    it("id tags add at most 16 bytes each to a part", () => expect(v.stats.maxTagBytes).toBeLessThanOrEqual(16));
    if (preset === "balanced") {
      it("(f) a new pruner per call (state from disk) renders identical prompts", () => v.expectNone("f"));
      it("(g1) transforming the pruned copy again changes nothing", () => v.expectNone("g1"));
      it("(g2) a repeated transform leaves no trace in later calls", () => v.expectNone("g2"));
    }
  });
}
