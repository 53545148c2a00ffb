// The fast paths behind `npm run bench` (docs/bench.md) against the plain definitions they replace.
import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { buildGraph, textOf, tokensOf, type Graph } from "../../src/graph/graph.js";
import { compileKey, inputFingerprint, KEY_FILTERS, sameJson } from "../../src/engine/key.js";
import { createPruner } from "../../src/index.js";
import { assistant, bigText, toolPart, user } from "../helpers/session.js";
import { textLength } from "../../src/graph/graph.js";
import { Pass, render, type RenderTarget } from "../../src/engine/render.js";
import { RenderState } from "../../src/engine/render-state.js";
import type { DecisionSlots } from "../../src/engine/state.js";
import { applyDrops, writeLog, type Undo } from "../../src/engine/write-log.js";
import { appendStep, deepCopy, generateSession } from "./session-gen.js";
import { OPENCODE } from "../../src/host/profile.js";
import { idTags } from "../../src/engine/id-tags.js";

/** The definitions before the fast paths. */
function stableJsonRef(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map(stableJsonRef).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableJsonRef(o[k])}`)
    .join(",")}}`;
}
const pathRef = (v: string) => v.replace(/\\/g, "/").replace(/\/{2,}/g, "/").replace(/^(\.\/)+/, "").replace(/(.)\/$/, "$1");
const outcome = <T>(f: () => T): T | "throws" => {
  try {
    return f();
  } catch {
    return "throws";
  }
};

/** Dynamic facts recomputed eagerly, as buildGraph did with a backward pass. */
function eagerFacts(g: Graph) {
  let newer = 0;
  const out: [number, number, number][] = [];
  for (let i = g.nodes.length - 1; i >= 0; i--) {
    const n = g.nodes[i];
    out.push([g.turns - n.turn, g.calls - n.callIndex - (n.part.type === "tool" ? 1 : 0), newer]);
    if (n.part.type === "tool" && n.part.state?.status === "completed") newer += tokensOf(n.outputChars);
  }
  return out.reverse();
}

const anything = fc.anything({ withSparseArray: true, withBoxedValues: true, withNullPrototype: true, withDate: true, maxDepth: 4 });

describe("fast paths agree with the definitions they replace", () => {
  test.prop([anything], { numRuns: 3000 })("json key filter: stable JSON", (v) => {
    if (v === undefined) return;
    expect(outcome(() => KEY_FILTERS.json.apply(v))).toEqual(outcome(() => stableJsonRef(v)));
  });

  test.prop([fc.stringMatching(/^[a-z./\\]{0,10}$/)], { numRuns: 3000 })("path key filter", (s) => {
    expect(KEY_FILTERS.path.apply(s)).toBe(pathRef(s));
  });

  test.prop([fc.oneof(anything, fc.jsonValue(), fc.string({ unit: "binary" }).map((s) => ({ s, l: [s, `${s}\n"\\`] })))], { numRuns: 3000 })(
    "textLength is textOf(v).length",
    (v) => {
      expect(textLength(v)).toBe(textOf(v).length);
    },
  );

  // group names decide supersede groups: equal exactly when the keys are equal
  const long = ["L".repeat(64), "L".repeat(65), "\n".repeat(70), '{"a":1}'.repeat(10)];
  const str = fc.oneof(fc.string({ maxLength: 3 }), fc.constantFrom(...long, "{", "}", ":", '"', "#0", "#1"));
  const val = fc.letrec((tie) => ({
    v: fc.oneof({ depthSize: "small" }, str, fc.integer(), fc.constant(null), fc.constant(undefined), fc.array(tie("v"), { maxLength: 3 }), fc.dictionary(fc.constantFrom("a", "b", "#0", "{"), tie("v"), { maxKeys: 3 })),
  })).v;
  const tool = fc.oneof(fc.constantFrom("read", "a:{", 'a:{"b":1}', "{", ""), fc.string({ maxLength: 3 }));
  const node = fc.record({ tool, input: fc.oneof(fc.dictionary(fc.constantFrom("a", "b", "filePath"), val, { maxKeys: 3 }), val) }).map(({ tool, input }) => ({ part: { type: "tool", tool, state: { input } }, message: { info: {} } }));
  const templates = ["{tool}:{input|json}", "{input|json}", "x:{tool}:{input|json?}", "{input|json}z", "file:{input.filePath|path}", "{tool}", "todo", "{input.a?}", "{tool}:{input.filePath|path}"].map(compileKey);
  test.prop([fc.array(node, { minLength: 2, maxLength: 5 })], { numRuns: 400 })("key group names", (nodes) => {
    for (const k of templates) {
      const strings = new Map<string, number>();
      const g = nodes.map((n) => outcome(() => k.group(n as never, {} as never, strings)));
      const r = nodes.map((n) => outcome(() => k.get(n as never, {} as never)));
      for (let i = 0; i < nodes.length; i++) {
        expect(g[i] === undefined, k.template).toBe(r[i] === undefined);
        for (let j = 0; j < nodes.length; j++) expect(g[i] === g[j], `${k.template}: ${JSON.stringify(nodes[i])} / ${JSON.stringify(nodes[j])}`).toBe(r[i] === r[j]);
      }
    }
  });

  /** A copy with object keys in reverse order and -0 for 0: the same stable JSON. */
  const reordered = (v: unknown): unknown => {
    if (v === 0) return -0;
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) return v.map(reordered);
    return Object.fromEntries(Object.keys(v).reverse().map((k) => [k, reordered((v as Record<string, unknown>)[k])]));
  };
  // supersede groups of whole-input keys: bucketed by prefix and fingerprint, told apart by sameJson (session.ts groupOf)
  test.prop([fc.array(node, { minLength: 2, maxLength: 5 })], { numRuns: 400 })("whole-input keys: prefixes, fingerprints and sameJson agree with the keys", (nodes) => {
    for (const k of templates.filter((t) => t.input)) {
      const r = nodes.map((n) => outcome(() => k.get(n as never, {} as never)));
      for (let i = 0; i < nodes.length; i++)
        for (let j = 0; j < nodes.length; j++) {
          if (r[i] === undefined || r[j] === undefined || r[i] === "throws" || r[j] === "throws") continue;
          const [a, b] = [nodes[i], nodes[j]].map((n) => ({ prefix: k.prefix!(n as never, {} as never)!, input: k.input!(n as never, {} as never) }));
          if (a.prefix.includes("{") || b.prefix.includes("{")) continue; // those share one bucket and compare full keys
          const why = `${k.template}: ${JSON.stringify(nodes[i])} / ${JSON.stringify(nodes[j])}`;
          const same = a.prefix === b.prefix && sameJson(a.input, b.input, 0);
          expect(same, why).toBe(r[i] === r[j]);
          if (r[i] === r[j]) expect(inputFingerprint(a.input, 0), why).toBe(inputFingerprint(b.input, 0));
        }
    }
  });

  it("sameJson and fingerprints: a lone hole writes as an empty array (CI, seed 728199100)", () => {
    // eslint-disable-next-line no-sparse-arrays
    const hole = [,];
    expect(stableJsonRef(hole)).toBe(stableJsonRef([]));
    expect(sameJson(hole, [], 0)).toBe(true);
    expect(inputFingerprint(hole, 0)).toBe(inputFingerprint([], 0));
    // eslint-disable-next-line no-sparse-arrays
    expect(sameJson([1, , 2], [1, 2], 0)).toBe(false);
  });

  test.prop([anything, anything], { numRuns: 3000 })("sameJson is stable JSON equality", (a, b) => {
    const [x, y] = [outcome(() => stableJsonRef(a)), outcome(() => stableJsonRef(b))];
    const same = sameJson(a, b, 0);
    if (same !== undefined && x !== "throws" && y !== "throws") expect(same).toBe(x === y);
    const c = reordered(a);
    if (x !== "throws" && sameJson(a, c, 0) !== undefined) expect(sameJson(a, c, 0)).toBe(true);
  });

  test.prop([fc.jsonValue({ maxDepth: 4 })], { numRuns: 1000 })("fingerprints ignore key order", (v) => {
    expect(inputFingerprint(reordered(v), 0)).toBe(inputFingerprint(v, 0));
  });

  it("sameJson on the values stable JSON writes alike or apart", () => {
    // eslint-disable-next-line no-sparse-arrays
    const pairs: [unknown, unknown][] = [[[, 1], [null, 1]], [[, 1], [undefined, 1]], [{ a: undefined }, {}], [{ a: undefined }, { a: null }], [NaN, null], [-0, 0], [{ a: 1, b: [2] }, { b: [2], a: 1 }], [[1], { 0: 1 }], ["1", 1], [new Date(0), {}]];
    for (const [a, b] of pairs) expect(sameJson(a, b, 0), `${String(a)} / ${String(b)}`).toBe(stableJsonRef(a) === stableJsonRef(b));
  });

  it("inputs whose fingerprints collide are still told apart by their full keys", () => {
    // longer than a string fingerprinted whole, the same length and the same first, middle and last
    // characters: the same fingerprint
    const [a, b] = [{ command: `cat ${"1".repeat(61)}z` }, { command: `cat ${"1".repeat(30)}2${"1".repeat(30)}z` }];
    expect(inputFingerprint(a, 0)).toBe(inputFingerprint(b, 0));
    expect(inputFingerprint({ command: "cat a1b2c" }, 0)).not.toBe(inputFingerprint({ command: "cat a9b8c" }, 0)); // short: whole
    const history = [
      user("go"),
      assistant([{ tool: "bash", input: a, output: bigText("a"), id: "prt_fa" }]),
      assistant([{ tool: "bash", input: b, output: bigText("b"), id: "prt_fb" }]),
      assistant([{ tool: "bash", input: { command: a.command }, output: bigText("a2"), id: "prt_fa2" }]),
      assistant([], "done"),
    ];
    const p = createPruner({ config: { preset: "verbose", commit: { minTokens: 0 }, tool: false } });
    const out = deepCopy(history);
    p.transform(out);
    expect(String(toolPart(out, "prt_fa")?.state?.output)).toBe(`bash({command: ${JSON.stringify(a.command)}}) → superseded by a later bash`);
    expect(toolPart(out, "prt_fb")?.state?.output).toBe(bigText("b"));
    expect(toolPart(out, "prt_fa2")?.state?.output).toBe(bigText("a2"));
  });

  it("dynamic facts derived from shared totals equal an eager pass, call after call", () => {
    let history = generateSession({ seed: 5, turns: 30, stepsPerTurn: 2, toolsPerStep: 4, odd: true });
    let g = buildGraph(deepCopy(history), undefined, { host: OPENCODE });
    for (let k = 0; k < 12; k++) {
      history = appendStep(history, 300 + k, 3, k % 3 === 0);
      const copy = deepCopy(history);
      // a signature that hides a status change: a stateless tool part turned into text
      if (k === 5) for (const m of copy) for (const p of m.parts) if (p.type === "tool" && !p.state) Object.assign(p, { type: "text", text: "x" });
      g = buildGraph(copy, g, { host: OPENCODE });
      const eager = eagerFacts(g);
      g.nodes.forEach((n, i) => expect([n.ageTurns, n.ageCalls, n.toolTokensNewer]).toEqual(eager[i]));
    }
  });

  it("render's write log puts every write back, and the nodes' own parts are never written", () => {
    const history = generateSession({ seed: 7, turns: 20, stepsPerTurn: 1, toolsPerStep: 5 });
    const first = deepCopy(history);
    const g = buildGraph(first, undefined, { host: OPENCODE });
    const slots: (DecisionSlots | undefined)[] = [];
    const rs = new RenderState();
    g.nodes.forEach((n, i) => {
      if (n.part.type === "tool" && i % 3 === 0) slots[i] = { output: { rule: "r", action: "clear", patch: { output: "x" }, tokens: 1, call: 0 } };
      else if (n.part.type === "step-start") slots[i] = { output: { rule: "r", action: "drop", patch: { drop: true }, tokens: 0, call: 0 } };
      else return;
      rs.changed(n);
      if (n.part.type === "tool" && i % 2 === 0) rs.of(n).suffix = "[acp:t123]";
    });
    const own = JSON.stringify(first);
    const renderInto = (copy: typeof history, undo: Undo) => {
      const to: RenderTarget = { log: writeLog(undo), drops: new Map(), idTags: idTags(OPENCODE.idTag), ids: true, tags: true };
      render(copy, g, slots, rs, to, Pass.Full);
      applyDrops(to.drops, undo);
    };
    // the call that built the nodes: their parts are in the copy, so rendering writes to fresh copies of them
    const undo1: Undo = [];
    renderInto(first, undo1);
    expect(JSON.stringify(g.nodes.map((n) => n.part))).toBe(JSON.stringify(JSON.parse(own).flatMap((m: { parts: unknown[] }) => m.parts)));
    expect(JSON.stringify(first)).not.toBe(own);
    // a later call on a new copy writes into the copy's parts; the undo log puts every write back
    const copy = deepCopy(history);
    const before = JSON.stringify(copy);
    const undo: Undo = [];
    renderInto(copy, undo);
    const log = writeLog(undo);
    log.add(copy[0].info, "id", copy[0].info.id, true);
    copy[0].info.id = "changed";
    expect(JSON.stringify(copy)).not.toBe(before);
    expect(JSON.stringify(copy)).toContain("[acp:t123]");
    for (let i = undo.length - 1; i >= 0; i--) undo[i]();
    expect(JSON.stringify(copy)).toBe(before);
    for (let i = undo1.length - 1; i >= 0; i--) undo1[i]();
    expect(JSON.stringify(first)).toBe(own);
  });
});

