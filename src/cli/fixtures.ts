// Semgrep-style rule tests. A fixture is a short session written compactly in YAML; comments
// right above a part say what the rule under test must do to it:
//   # ruleid: <id>      the rule must decide this part          (TP, or FN when it does not)
//   # ok: <id>          the rule must leave this part alone     (TN, or FP when it decides it)
//   # todoruleid: <id>  known gap: should decide but does not   (counted as todo; fails once fixed)
//   # todook: <id>      known gap: decides but should not       (counted as todo; fails once fixed)
// The runner builds real OpenCode messages, enables only the rule under test plus the protect
// rules, runs createPruner's transform (commit batching off) and compares explain() with the
// annotations. Comments are read from the yaml package's Document (which node they belong to)
// and CST (where they are), never by scanning the raw text.
import { readdirSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { isMap, isScalar, isSeq, visit, type Document, type Node as YamlNode, type YAMLMap, type YAMLSeq } from "yaml";
import { createPruner } from "../engine/pruner.js";
import { partResultText } from "../graph/graph.js";
import { OPENCODE } from "../host/profile.js";
import type { Message, Part } from "../graph/types.js";
import { defaultConfig } from "../rules/config.js";
import { didYouMean, type Problem } from "../rules/problems.js";
import { readErrorMessage, readTextFile } from "../rules/read.js";
import { schemaProblems } from "../rules/schemas.js";
import { parseYamlDocument } from "../rules/source.js";
import type { AcpConfig, RuleSetting } from "../rules/types.js";

// ── Types ────────────────────────────────────────────────────────────────────────────────

export const ANNOTATION_KINDS = ["ruleid", "ok", "todoruleid", "todook"] as const;
export type AnnotationKind = (typeof ANNOTATION_KINDS)[number];

export interface Where {
  file: string;
  line: number;
  col: number;
}

export interface Annotation extends Where {
  kind: AnnotationKind;
  rule: string;
  partId: string;
}

/** Expected rendering of one part after the last call (inline `expect:` or the .fixed file). */
export interface PartExpectation extends Where {
  partId: string;
  output?: string; // tool result text as sent (output, or error for failed calls)
  input?: unknown; // tool input
  text?: string; // text/reasoning text (also a file part turned into text)
  type?: string; // part type after rendering
  dropped?: boolean; // part removed from the request
}

export interface Fixture {
  file: string;
  rule: string;
  ruleWhere: Where;
  description?: string;
  preset: string;
  /** Param/option overrides for the rule under test, as a preset's `with`. */
  with?: Record<string, unknown>;
  /** Extra per-rule settings (on/off/{with}) applied last, e.g. to enable a rule a protect rule guards against. */
  rules: Record<string, { setting: RuleSetting; where: Where }>;
  config: Partial<AcpConfig>;
  ruleFiles: string[];
  /** Number of transform calls replayed over growing prefixes (message by message), ending with the whole session. */
  calls: number | "all";
  messages: Message[];
  partWhere: Map<string, Where>;
  annotations: Annotation[];
  expect: PartExpectation[];
}

/** A fixture that cannot be read or understood (exit code 2), located at file:line:col. */
export class FixtureError extends Error {
  constructor(
    readonly where: Where,
    readonly detail: string,
  ) {
    super(`${where.file}:${where.line}:${where.col}: ${detail}`);
  }
}

export interface Counts {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  todo: number;
}

export type MismatchKind = "FP" | "FN" | "todo-fixed" | "expect" | "engine-error" | "todo";

export interface Mismatch extends Where {
  kind: MismatchKind;
  rule: string;
  partId?: string;
  message: string;
}

export interface FixtureResult {
  file: string;
  rule: string;
  counts: Record<string, Counts>;
  /** Failures: FP, FN, todo annotations whose gap closed, wrong renderings, engine errors. */
  mismatches: Mismatch[];
  /** Known gaps (todoruleid/todook still behaving as recorded): reported, not failing. */
  todos: Mismatch[];
}

// ── Parsing ──────────────────────────────────────────────────────────────────────────────

const ANNOTATION_LINE = /^\s*(todoruleid|todook|ruleid|ok)\s*:\s*(.*?)\s*$/;

interface CommentToken {
  offset: number;
  source: string;
}

/**
 * Parse state of one YAML (or JSON) file: the rules' bounded YAML reader (src/rules/source.ts) gives
 * the Document and locations, schemas/fixture.schema.json the shape; this keeps the comments still
 * unclaimed by a part.
 */
class Source {
  readonly doc: Document;
  /** Every comment in the file with its offset, from the CST. */
  readonly comments: CommentToken[] = [];
  /** Nodes whose annotation comments were attached to a part (others are misplaced). */
  readonly claimed = new Set<unknown>();
  /** Characters of {lines, width} text generated so far (capped at MAX_GENERATED_CHARS). */
  generated = 0;
  private readonly position: (offset: number) => { line: number; col: number };

  /** `shape`: the schema the file's data must match (a fixture, or the map of a .fixed file). */
  constructor(
    readonly file: string,
    text: string,
    shape: "fixture" | "fixed",
  ) {
    const parsed = parseYamlDocument(file, text);
    const bad = parsed.source.problems.find((p) => p.severity === "error");
    if (bad || !parsed.doc) throw new FixtureError({ file, line: bad?.line ?? 1, col: bad?.col ?? 1 }, `YAML: ${bad?.message ?? "could not be parsed"}`);
    this.doc = parsed.doc;
    this.position = parsed.position;
    const wrong = firstShapeProblem(schemaProblems(shape === "fixture" ? "fixture" : "fixture.schema.json#/definitions/fixed", parsed.source));
    if (wrong) throw new FixtureError(wrong, wrong.message);
    for (const token of parsed.tokens) collectComments(token, this.comments);
    this.comments.sort((a, b) => a.offset - b.offset);
  }

  pos(offset: number): Where {
    return { file: this.file, ...this.position(offset) };
  }

  at(node: unknown): Where {
    const range = (node as YamlNode | undefined)?.range;
    return range ? this.pos(range[0]) : { file: this.file, line: 1, col: 1 };
  }

  fail(node: unknown, message: string): never {
    throw new FixtureError(this.at(node), message);
  }

  js(node: unknown): unknown {
    return node === undefined || node === null ? undefined : (node as YamlNode).toJS(this.doc);
  }

  /** The nearest comment reading `#<text>` that starts before `offset`. */
  commentAt(text: string, offset: number): CommentToken | undefined {
    for (let i = this.comments.length - 1; i >= 0; i--) {
      const c = this.comments[i];
      if (c.offset < offset && c.source.slice(1) === text) return c;
    }
    return undefined;
  }
}

/** CST tokens are plain objects; comments appear in item.start, item.sep, document.start, … */
function collectComments(token: unknown, out: CommentToken[]): void {
  if (Array.isArray(token)) {
    for (const t of token) collectComments(t, out);
    return;
  }
  if (!token || typeof token !== "object") return;
  const t = token as { type?: string; offset?: number; source?: string };
  if (t.type === "comment" && typeof t.offset === "number" && typeof t.source === "string") {
    out.push({ offset: t.offset, source: t.source });
    return;
  }
  for (const v of Object.values(token)) if (v && typeof v === "object") collectComments(v, out);
}

/**
 * The schema problem to report: the deepest one (a wrong key or value inside a part, not "the turn
 * must be a string" from the alternative the value did not take), an unknown key first.
 */
function firstShapeProblem(problems: Problem[]): Problem | undefined {
  const depth = (p: Problem) => (p.pointer ?? "").split("/").length + (p.ruleId === "schema/additionalProperties" ? 0.5 : 0);
  return [...problems].sort((a, b) => depth(b) - depth(a))[0];
}

const get = (map: YAMLMap, key: string): YamlNode | undefined => map.get(key, true) as YamlNode | undefined;

/** All the {lines, width} text of one fixture: far more than any rule needs to be tested, far less than the heap. */
export const MAX_GENERATED_CHARS = 4 * 1024 * 1024;

/** Strings may be written out or generated: `{lines: 200, width: 60}` (numbered filler lines; the schema checks both). */
function stringValue(src: Source, node: YamlNode | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (isMap(node)) {
    const { lines, width = 40 } = src.js(node) as { lines: number; width?: number };
    // each line is at least its number, ": " and a newline
    src.generated += lines * (Math.max(width, String(lines).length + 2) + 1);
    if (src.generated > MAX_GENERATED_CHARS)
      src.fail(node, `generated text too large: {lines: ${lines}, width: ${width}} brings this fixture's generated text over ${MAX_GENERATED_CHARS / (1024 * 1024)} MiB (lines × width)`);
    return generateLines(lines, width);
  }
  return src.js(node) as string;
}

const FILLER = "the quick brown fox jumps over the lazy dog ";
export function generateLines(lines: number, width: number): string {
  const out: string[] = [];
  for (let i = 1; i <= lines; i++) {
    const head = `${i}: `;
    out.push(head + FILLER.repeat(Math.ceil(width / FILLER.length)).slice(0, Math.max(0, width - head.length)));
  }
  return out.join("\n");
}

/** Annotation lines of a comment block, located via the CST comment tokens. */
function annotationsIn(src: Source, comment: string | undefined | null, nodeStart: number, partId: string): Annotation[] {
  if (!comment) return [];
  const groups: Annotation[][] = [];
  let limit = nodeStart;
  const lines = comment.split("\n");
  // Walk bottom-up so each line is matched to the nearest comment token above the previous one.
  for (let i = lines.length - 1; i >= 0; i--) {
    const token = src.commentAt(lines[i], limit);
    if (token) limit = token.offset;
    const where = token ? src.pos(token.offset) : src.pos(nodeStart);
    const parsed = parseAnnotation(lines[i], where);
    if (parsed) groups.push(parsed.ids.map((rule) => ({ ...where, kind: parsed.kind, rule, partId })));
  }
  return groups.reverse().flat();
}

/** `ruleid: a, b` → kind and rule ids; undefined for an ordinary comment. */
function parseAnnotation(text: string, where: Where): { kind: AnnotationKind; ids: string[] } | undefined {
  const m = ANNOTATION_LINE.exec(text);
  if (!m) return undefined;
  const ids = m[2].split(",").map((id) => id.trim()).filter(Boolean);
  if (!ids.length) throw new FixtureError(where, `annotation "${m[1]}:" names no rule id`);
  return { kind: m[1] as AnnotationKind, ids };
}

/** `annotations: ["ruleid: x"]` inside a part: the way to annotate JSON fixtures (no comments). */
function inlineAnnotations(src: Source, node: YamlNode | undefined, partId: string): Annotation[] {
  if (node === undefined) return [];
  return (node as YAMLSeq).items.flatMap((item) => {
    const parsed = parseAnnotation(String(src.js(item)), src.at(item));
    if (!parsed) src.fail(item, `annotation must read "<ruleid|ok|todoruleid|todook>: <rule id>"`);
    return parsed.ids.map((rule) => ({ ...src.at(item), kind: parsed.kind, rule, partId }));
  });
}

function parseExpectations(src: Source, node: YamlNode | undefined): PartExpectation[] {
  if (node === undefined) return [];
  return (node as YAMLMap).items.map((pair) => {
    const partId = String(src.js(pair.key));
    const exp = pair.value as YAMLMap;
    const out: PartExpectation = { ...src.at(pair.key), partId };
    for (const k of ["output", "text", "type"] as const) if (exp.has(k)) out[k] = stringValue(src, get(exp, k));
    if (exp.has("input")) out.input = src.js(get(exp, "input"));
    if (exp.has("dropped")) out.dropped = src.js(get(exp, "dropped")) === true;
    return out;
  });
}

export function parseFixture(file: string, text?: string): Fixture {
  if (text === undefined) text = readText(file);
  // the shape (keys, types, settings) is checked by schemas/fixture.schema.json when the file is read
  const src = new Source(file, text, "fixture");
  const root = src.doc.contents as YAMLMap;
  const ruleNode = get(root, "rule");
  const field = <T>(key: string) => src.js(get(root, key)) as T | undefined;
  const rules: Fixture["rules"] = {};
  const rulesNode = get(root, "rules") as YAMLMap | undefined;
  for (const pair of rulesNode?.items ?? []) rules[String(src.js(pair.key))] = { setting: src.js(pair.value) as RuleSetting, where: src.at(pair.key) };
  const session = buildSession(src, get(root, "turns"));
  const expect = [...parseExpectations(src, get(root, "expect")), ...goldenExpectations(file)];
  for (const e of expect) if (!session.partWhere.has(e.partId)) throw new FixtureError(e, `expectation for unknown part "${e.partId}"${didYouMean(e.partId, session.partWhere.keys())}`);
  return {
    file,
    rule: field<string>("rule")!,
    ruleWhere: src.at(ruleNode),
    description: field<string>("description"),
    preset: field<string>("preset") ?? "balanced",
    with: field<Record<string, unknown>>("with"),
    rules,
    config: field<Partial<AcpConfig>>("config") ?? {},
    ruleFiles: (field<string[]>("ruleFiles") ?? []).map((f) => resolve(dirname(file), f)),
    calls: field<number | "all">("calls") ?? 1,
    ...session,
    expect,
  };
}

/** `<name>.session.fixed.yaml` (or .json) next to the fixture: partId → expected rendering. */
function goldenExpectations(file: string): PartExpectation[] {
  const m = /\.session\.(ya?ml|json)$/.exec(file);
  if (!m) return [];
  for (const ext of ["yaml", "yml", "json"]) {
    const golden = file.slice(0, m.index) + `.session.fixed.${ext}`;
    const read = readTextFile(golden);
    if ("error" in read) {
      if (read.error === "file not found") continue;
      throw new FixtureError({ file: golden, line: 1, col: 1 }, read.error);
    }
    const src = new Source(golden, read.text, "fixed");
    return parseExpectations(src, src.doc.contents as YamlNode);
  }
  return [];
}

/** A fixture is read as a rule file is: only a regular file (never a FIFO or a device), at most 256 KiB. */
function readText(file: string): string {
  const read = readTextFile(file);
  if ("error" in read) throw new FixtureError({ file, line: 1, col: 1 }, read.error);
  return read.text;
}

// ── Session building ─────────────────────────────────────────────────────────────────────

const T0 = 1_700_000_000_000;

function buildSession(src: Source, turnsNode: YamlNode | undefined): Pick<Fixture, "messages" | "partWhere" | "annotations"> {
  const sessionID = `fixture_${basename(src.file).replace(/[^A-Za-z0-9_.-]/g, "_")}`;
  const messages: Message[] = [];
  const partWhere = new Map<string, Where>();
  const annotations: Annotation[] = [];
  let lastUser: string | undefined;
  (turnsNode as YAMLSeq).items.forEach((turnNode, mi) => {
    const turn = turnNode as YAMLMap;
    const role = ["user", "assistant"].filter((r) => turn.has(r));
    if (role.length !== 1) src.fail(turn, `a turn has exactly one of "user:" or "assistant:"`);
    const msgId = String(src.js(get(turn, "id")) ?? `msg_${String(mi + 1).padStart(3, "0")}`);
    const info: Message["info"] = { id: msgId, sessionID, role: role[0], time: { created: T0 + mi * 1000 } };
    if (role[0] === "assistant") Object.assign(info, { parentID: lastUser, providerID: "fixture", modelID: "fixture-model", mode: "build" });
    else lastUser = msgId;
    const body = get(turn, role[0]);
    // `user: "text"` is shorthand for one text part.
    const items: unknown[] = isSeq(body) ? body.items : [body];
    const parts = items.map((item, pi) => {
      const part = buildPart(src, item as YamlNode, { sessionID, msgId, index: pi, time: T0 + mi * 1000 + pi });
      if (partWhere.has(part.id)) src.fail(item, `duplicate part id "${part.id}"`);
      partWhere.set(part.id, src.at(item));
      // The first item's comments belong to the list itself in the Document model.
      const own = (item as YamlNode).commentBefore;
      const fromList = pi === 0 && isSeq(body) ? body.commentBefore : undefined;
      if (fromList) src.claimed.add(body);
      if (own) src.claimed.add(item);
      const start = (item as YamlNode).range?.[0] ?? 0;
      const listStart = (body as YamlNode | undefined)?.range?.[0] ?? start;
      annotations.push(...annotationsIn(src, fromList, listStart, part.id), ...annotationsIn(src, own, start, part.id));
      if (isMap(item)) annotations.push(...inlineAnnotations(src, get(item, "annotations"), part.id));
      return part;
    });
    messages.push({ info, parts });
  });
  rejectStrayAnnotations(src);
  return { messages, partWhere, annotations };
}

/** An annotation comment anywhere but right above a part would silently test nothing. */
function rejectStrayAnnotations(src: Source): void {
  const stray = (comment: string | null | undefined, node: unknown, before: number) => {
    if (!comment || src.claimed.has(node)) return;
    for (const line of comment.split("\n"))
      if (ANNOTATION_LINE.test(line)) {
        const token = src.commentAt(line, before);
        throw new FixtureError(token ? src.pos(token.offset) : src.at(node), `annotation "${line.trim()}" is not directly above a part (put it on the line(s) right above a "- {...}" part item)`);
      }
  };
  stray(src.doc.commentBefore, src.doc, Infinity);
  stray(src.doc.comment, src.doc, Infinity);
  visit(src.doc, {
    Node(_key, node) {
      stray(node.commentBefore, node, node.range?.[0] ?? Infinity);
      stray(node.comment, node, Infinity);
    },
  });
}

interface PartContext {
  sessionID: string;
  msgId: string;
  index: number;
  time: number;
}

/** A tool input; a top-level value written as {lines, width} is generated like an output. */
function toolInput(src: Source, node: YamlNode | undefined): Record<string, unknown> {
  if (node === undefined) return {};
  const map = node as YAMLMap;
  const out: Record<string, unknown> = {};
  for (const pair of map.items) {
    const key = String(src.js(pair.key));
    const value = pair.value as YamlNode | undefined;
    const generated = isMap(value) && value.items.length > 0 && value.items.every((p) => ["lines", "width"].includes(String(src.js(p.key))));
    out[key] = generated ? stringValue(src, value) : src.js(value);
  }
  return out;
}

function buildPart(src: Source, node: YamlNode, pc: PartContext): Part {
  const base = { sessionID: pc.sessionID, messageID: pc.msgId };
  const autoId = `${pc.msgId}_p${pc.index + 1}`;
  if (isScalar(node)) return { id: autoId, ...base, type: "text", text: stringValue(src, node)! };
  const map = node as YAMLMap;
  const v = (k: string) => src.js(get(map, k));
  const str = (k: string) => stringValue(src, get(map, k));
  const id = String(v("id") ?? autoId);
  const type = (v("type") as string | undefined) ?? (map.has("tool") ? "tool" : "text");
  if (type === "tool") {
    const tool = v("tool");
    if (typeof tool !== "string") src.fail(map, `a tool part needs "tool: <name>"`);
    const input = toolInput(src, get(map, "input"));
    const status = (v("status") as string | undefined) ?? (map.has("error") ? "error" : "completed");
    const time: Record<string, number> = { start: pc.time, end: pc.time + 1 };
    let state: Part["state"];
    if (status === "completed") {
      if (map.has("error")) src.fail(get(map, "error"), `a completed call has "output", not "error"`);
      if (v("compacted") === true) time.compacted = pc.time + 2;
      state = { status, input: input as Record<string, unknown>, output: str("output") ?? "", title: tool, metadata: {}, time };
    } else if (status === "error") {
      if (map.has("output")) src.fail(get(map, "output"), `a failed call has "error", not "output"`);
      state = { status, input: input as Record<string, unknown>, error: str("error") ?? "Error", metadata: {}, time };
    } else state = { status, input: input as Record<string, unknown>, time: { start: pc.time } }; // running or pending (the schema allows no other)
    return { id, ...base, type, tool, callID: `call_${id}`, state };
  }
  for (const k of ["tool", "input", "output", "status", "error", "compacted"])
    if (map.has(k)) src.fail(get(map, k), `"${k}" belongs to tool parts (this part is type ${type})`);
  const part: Part = { id, ...base, type };
  if (type === "text" || type === "reasoning") {
    part.text = str("text") ?? "";
    if (type === "reasoning") part.time = { start: pc.time, end: pc.time + 1 };
  } else if (type === "file") {
    part.mime = (v("mime") as string | undefined) ?? "text/plain";
    part.filename = v("filename") as string | undefined;
    part.url = str("url") ?? "";
  } else if (map.has("text")) part.text = str("text");
  const metadata = v("metadata");
  if (metadata !== undefined) part.metadata = metadata as Record<string, unknown>;
  if (v("synthetic") === true) part.synthetic = true;
  if (v("ignored") === true) part.ignored = true;
  return part;
}

// ── Running ──────────────────────────────────────────────────────────────────────────────

interface Replay {
  /** partId → rules that decided it (any slot). */
  decided: Map<string, Set<string>>;
  rendered: Message[];
  errors: string[];
}

function pruneConfig(fx: Fixture, settings: Record<string, RuleSetting>): Partial<AcpConfig> {
  const d = defaultConfig();
  const c = fx.config;
  return {
    // The context_prune tool's id tags ("[acp:t1]") are not rule output: off unless asked for.
    tool: false,
    ...c,
    preset: fx.preset,
    rules: settings,
    // Lists add to the defaults, as in acp.jsonc.
    protectedTools: [...new Set([...d.protectedTools, ...(c.protectedTools ?? [])])],
    protectedFiles: [...new Set([...d.protectedFiles, ...(c.protectedFiles ?? [])])],
    // Fixtures test matching, not batching: every decision applies on the call that makes it.
    commit: { minTokens: 0, pressureTokens: 0 },
  };
}

function replay(fx: Fixture, settings: Record<string, RuleSetting>): Replay {
  const errors: string[] = [];
  const pruner = createPruner({ host: OPENCODE, config: pruneConfig(fx, settings), rules: fx.ruleFiles, onError: (e) => errors.push((e as Error)?.message ?? String(e)) });
  const bad = pruner.problems.find((p) => p.severity === "error");
  if (bad) throw new FixtureError({ file: bad.file, line: bad.line, col: bad.col }, `${bad.message} (${bad.ruleId})`);
  const n = fx.messages.length;
  const calls = fx.calls === "all" ? n : Math.min(fx.calls, n);
  let rendered: Message[] = [];
  // Each call gets a fresh copy, as OpenCode rebuilds the request from its history every time.
  for (let k = n - calls + 1; k <= n; k++) {
    rendered = structuredClone(fx.messages.slice(0, k));
    pruner.transform(rendered);
  }
  const decided = new Map<string, Set<string>>();
  for (const e of pruner.explain(fx.messages[0].info.sessionID)) {
    let s = decided.get(e.partId);
    if (!s) decided.set(e.partId, (s = new Set()));
    s.add(e.rule);
  }
  return { decided, rendered, errors };
}

function ruleCatalogue(fx: Fixture): Map<string, string> {
  const pruner = createPruner({ host: OPENCODE, config: pruneConfig(fx, {}), rules: fx.ruleFiles });
  const bad = pruner.problems.find((p) => p.severity === "error");
  if (bad) throw new FixtureError({ file: bad.file, line: bad.line, col: bad.col }, `${bad.message} (${bad.ruleId})`);
  return new Map(pruner.resolved.all.map((e) => [e.spec.id, e.spec.phase]));
}

function unknownRule(known: Map<string, string>, id: string, where: Where): never {
  throw new FixtureError(where, `unknown rule "${id}"${didYouMean(id, known.keys())}`);
}

/** Only the rule under test and the protect rules are on, unless the fixture's `rules:` says otherwise. */
function settingsFor(fx: Fixture, known: Map<string, string>): Record<string, RuleSetting> {
  const s: Record<string, RuleSetting> = {};
  for (const [id, phase] of known) s[id] = phase === "protect" || id === fx.rule ? "on" : "off";
  if (fx.with) s[fx.rule] = { with: fx.with };
  for (const [id, { setting, where }] of Object.entries(fx.rules)) {
    if (!known.has(id)) unknownRule(known, id, where);
    s[id] = setting;
  }
  return s;
}

const emptyCounts = (): Counts => ({ tp: 0, fp: 0, fn: 0, tn: 0, todo: 0 });

export function runFixture(fx: Fixture): FixtureResult {
  const known = ruleCatalogue(fx);
  if (!known.has(fx.rule)) unknownRule(known, fx.rule, fx.ruleWhere);
  const settings = settingsFor(fx, known);
  for (const a of fx.annotations) {
    if (!known.has(a.rule)) unknownRule(known, a.rule, a);
    if (settings[a.rule] === "off") throw new FixtureError(a, `rule "${a.rule}" is off in this fixture; turn it on under "rules:" or remove the annotation`);
  }
  const main = replay(fx, settings);
  // A protect rule decides nothing itself: it "decides" a part when turning it off lets
  // another rule prune that part (a differential run with the protect rule off).
  const protectCache = new Map<string, Set<string>>();
  const decidedBy = (rule: string): Set<string> => {
    if (known.get(rule) !== "protect") return new Set([...main.decided].filter(([, rules]) => rules.has(rule)).map(([id]) => id));
    let parts = protectCache.get(rule);
    if (!parts) {
      const without = replay(fx, { ...settings, [rule]: "off" });
      parts = new Set([...without.decided].filter(([id, rules]) => [...rules].some((r) => !main.decided.get(id)?.has(r))).map(([id]) => id));
      protectCache.set(rule, parts);
    }
    return parts;
  };

  const result: FixtureResult = { file: fx.file, rule: fx.rule, counts: {}, mismatches: [], todos: [] };
  const count = (rule: string) => (result.counts[rule] ??= emptyCounts());
  const fail = (m: Mismatch) => result.mismatches.push(m);
  count(fx.rule);
  for (const message of main.errors) fail({ ...fx.ruleWhere, kind: "engine-error", rule: fx.rule, message: `the engine reported an error: ${message}` });
  const describe = (partId: string) => {
    const rules = main.decided.get(partId);
    return rules?.size ? `decided by: ${[...rules].join(", ")}` : "no rule decided it";
  };
  for (const a of fx.annotations) {
    const fired = decidedBy(a.rule).has(a.partId);
    const c = count(a.rule);
    const base = { file: a.file, line: a.line, col: a.col, rule: a.rule, partId: a.partId };
    if (a.kind === "ruleid") {
      if (fired) c.tp++;
      else {
        c.fn++;
        fail({ ...base, kind: "FN", message: `expected ${a.rule} to decide ${a.partId}, but it did not (${describe(a.partId)})` });
      }
    } else if (a.kind === "ok") {
      if (!fired) c.tn++;
      else {
        c.fp++;
        fail({ ...base, kind: "FP", message: `expected ${a.rule} to leave ${a.partId} alone, but it decided it` });
      }
    } else {
      // todo annotations record today's behaviour of a known gap; a change means the gap closed.
      const gapOpen = a.kind === "todoruleid" ? !fired : fired;
      const want = a.kind === "todoruleid" ? "ruleid" : "ok";
      if (gapOpen) {
        c.todo++;
        result.todos.push({ ...base, kind: "todo", message: `known gap: ${a.kind}: ${a.rule} on ${a.partId}` });
      } else fail({ ...base, kind: "todo-fixed", message: `${a.kind}: ${a.rule} on ${a.partId} now behaves as wanted: change the annotation to "${want}:"` });
    }
  }
  // Semgrep counts an unannotated match as a false positive: every part the rule under test
  // decides must carry an annotation for it, so a fixture cannot hide surprises. (Annotated
  // parts were already judged above.)
  const annotated = new Set(fx.annotations.filter((a) => a.rule === fx.rule).map((a) => a.partId));
  for (const partId of decidedBy(fx.rule))
    if (!annotated.has(partId)) {
      count(fx.rule).fp++;
      const where = fx.partWhere.get(partId) ?? fx.ruleWhere;
      fail({ ...where, kind: "FP", rule: fx.rule, partId, message: `${fx.rule} decided ${partId}, which has no annotation (add "# ruleid: ${fx.rule}" above it if that is intended)` });
    }
  for (const e of fx.expect) checkExpectation(e, main.rendered, fx.rule, fail);
  result.mismatches.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.col - b.col);
  return result;
}

function findPart(messages: Message[], id: string): Part | undefined {
  for (const m of messages) for (const p of m.parts) if (p.id === id) return p;
  return undefined;
}

function checkExpectation(e: PartExpectation, rendered: Message[], rule: string, fail: (m: Mismatch) => void): void {
  const part = findPart(rendered, e.partId);
  // Long values (generated outputs) are cut so the mismatch line stays readable.
  const brief = (v: unknown) => {
    const s = JSON.stringify(v) ?? "undefined";
    return s.length > 200 ? `${s.slice(0, 200)}…` : s;
  };
  const mismatch = (what: string, want: unknown, got: unknown) =>
    fail({ file: e.file, line: e.line, col: e.col, kind: "expect", rule, partId: e.partId, message: `${e.partId} ${what}: expected ${brief(want)}, got ${brief(got)}` });
  if (e.dropped !== undefined && (part === undefined) !== e.dropped) mismatch("dropped", e.dropped, part === undefined);
  if (!part) {
    if (e.dropped !== true) for (const k of ["output", "input", "text", "type"] as const) if (e[k] !== undefined) mismatch(k, e[k], undefined);
    return;
  }
  if (e.output !== undefined && partResultText(part, OPENCODE) !== e.output) mismatch("output", e.output, part.type === "tool" ? partResultText(part, OPENCODE) : undefined);
  if (e.input !== undefined && !isDeepStrictEqual(part.state?.input, e.input)) mismatch("input", e.input, part.state?.input);
  if (e.text !== undefined && part.text !== e.text) mismatch("text", e.text, part.text);
  if (e.type !== undefined && part.type !== e.type) mismatch("type", e.type, part.type);
}

// ── Many fixtures ────────────────────────────────────────────────────────────────────────

const FIXTURE_FILE = /\.session\.(ya?ml|json)$/;

/**
 * Fixture files under the given files and folders (folders recursively, sorted). Each folder is
 * walked once whatever links lead to it (by its real path), so a link loop ends and an aliased
 * folder's fixtures run once. A fixture-named entry that cannot be read (a dangling or looping
 * link) and a folder that cannot be listed are error lines, and the walk goes on.
 */
export function findFixtureFiles(paths: string[]): { files: string[]; errors: FixtureError[] } {
  const files: string[] = [];
  const errors: FixtureError[] = [];
  const seen = new Set<string>();
  const fail = (p: string, e: unknown) => void errors.push(new FixtureError({ file: p, line: 1, col: 1 }, readErrorMessage(e)));
  const walk = (dir: string) => {
    let names: string[];
    try {
      const real = realpathSync(dir);
      if (seen.has(real)) return;
      seen.add(real);
      names = readdirSync(dir).sort();
    } catch (e) {
      return fail(dir, e);
    }
    for (const name of names) {
      if (name.startsWith(".") || name === "node_modules") continue;
      const p = join(dir, name);
      let isDir: boolean;
      try {
        isDir = statSync(p).isDirectory();
      } catch (e) {
        // a dangling or looping link: an error where it names a fixture, else nothing to run
        if (FIXTURE_FILE.test(name)) fail(p, e);
        continue;
      }
      if (isDir) walk(p);
      else if (FIXTURE_FILE.test(name)) files.push(p);
    }
  };
  for (const p of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch (e) {
      errors.push(new FixtureError({ file: p, line: 1, col: 1 }, (e as NodeJS.ErrnoException)?.code === "ENOENT" ? "no such file or folder" : readErrorMessage(e)));
      continue;
    }
    if (isDir) walk(p);
    else files.push(p);
  }
  return { files: [...new Set(files)], errors };
}

export interface RunSummary {
  results: FixtureResult[];
  errors: FixtureError[];
  /** Per rule, summed over all fixtures, sorted by rule id. */
  counts: [string, Counts][];
  mismatches: Mismatch[];
  todos: Mismatch[];
}

export function runFixtureFile(file: string): FixtureResult {
  return runFixture(parseFixture(file));
}

export function runFixtures(paths: string[]): RunSummary {
  const { files, errors } = findFixtureFiles(paths);
  const results: FixtureResult[] = [];
  for (const file of files) {
    try {
      results.push(runFixtureFile(file));
    } catch (e) {
      if (e instanceof FixtureError) errors.push(e);
      else errors.push(new FixtureError({ file, line: 1, col: 1 }, `internal error: ${(e as Error)?.message ?? String(e)}`));
    }
  }
  const totals = new Map<string, Counts>();
  for (const r of results)
    for (const [rule, c] of Object.entries(r.counts)) {
      const t = totals.get(rule) ?? emptyCounts();
      for (const k of ["tp", "fp", "fn", "tn", "todo"] as const) t[k] += c[k];
      totals.set(rule, t);
    }
  return {
    results,
    errors,
    counts: [...totals].sort(([a], [b]) => a.localeCompare(b)),
    mismatches: results.flatMap((r) => r.mismatches),
    todos: results.flatMap((r) => r.todos),
  };
}
