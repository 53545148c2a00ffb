// Parsed YAML/JSONC documents that can point back at file:line:col for any JSON pointer. Parsing is
// bounded: nesting deeper than MAX_DEPTH, or a collection larger than MAX_ENTRIES, is refused before
// the (recursive, partly quadratic) composers see it, YAML aliases may not expand without limit, and
// a file reports at most MAX_SYNTAX_PROBLEMS syntax errors.
import { createScanner, parseTree, SyntaxKind, type Node as JsonNode, type ParseError, printParseErrorCode } from "jsonc-parser";
import { Composer, isMap, isSeq, LineCounter, Parser, visit, YAMLParseError, type CST, type Document, type Node as YamlNode, type Pair, type YAMLMap } from "yaml";
import type { Problem } from "./problems.js";
import { readTextFile } from "./read.js";

export interface SourceDoc {
  file: string;
  data: unknown;
  problems: Problem[];
  /** Location of the value (or, with `key`, of the key) at a JSON pointer. */
  locate(pointer: string, key?: boolean): { line: number; col: number };
}

/** Rules nest a few levels (rules → id → when → all → any → …); 64 leaves ample room. */
export const MAX_DEPTH = 64;
/** Entries of one map or list: yaml checks unique keys pairwise, so 20,000 keys take a minute. */
export const MAX_ENTRIES = 1000;
/** Alias expansions a YAML file may make (yaml's guard against exponential "billion laughs"). */
const MAX_ALIAS_COUNT = 100;
/** Syntax errors reported per file; the rest are summed up in one more line. */
const MAX_SYNTAX_PROBLEMS = 10;

const segments = (pointer: string) =>
  pointer
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));

const escapeSegment = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

/** A document that could not be read or parsed: only its problems. */
export function failedSource(file: string, problems: Problem[]): SourceDoc {
  return { file, data: undefined, problems, locate: () => ({ line: 1, col: 1 }) };
}

/** Reads and parses a file; what cannot be read, or breaks the parser, becomes a located problem. */
export function readSource(file: string, parse: (file: string, text: string) => SourceDoc): SourceDoc {
  const read = readTextFile(file);
  if ("error" in read) return failedSource(file, [{ file, line: 1, col: 1, severity: "error", message: read.error, ruleId: "unreadable" }]);
  try {
    return parse(file, read.text);
  } catch (e) {
    // The parsers below guard against every failure we know of; this keeps an unknown one located.
    return failedSource(file, [{ file, line: 1, col: 1, severity: "error", message: `could not be parsed (${(e as Error)?.message ?? String(e)})`, ruleId: "unreadable" }]);
  }
}

/** The first syntax problems of a file (made by `toProblem`), and one line for how many more there were. */
function capped<E>(errors: E[], toProblem: (e: E) => Problem): Problem[] {
  const shown = errors.slice(0, MAX_SYNTAX_PROBLEMS).map(toProblem);
  if (errors.length <= MAX_SYNTAX_PROBLEMS) return shown;
  const next = toProblem(errors[MAX_SYNTAX_PROBLEMS]);
  return [...shown, { ...next, message: `${errors.length - MAX_SYNTAX_PROBLEMS} more syntax errors from here on` }];
}

/** line:col of an offset, by binary search over line starts (files can hold many errors). */
export function lineIndex(text: string): (offset: number) => { line: number; col: number } {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: offset - starts[lo] + 1 };
  };
}

/** The first YAML collection nested deeper than MAX_DEPTH or with more than MAX_ENTRIES entries, in the CST (walked without recursion). */
function cstTooBig(tokens: CST.Token[]): { offset: number; message: string } | undefined {
  const stack: [CST.Token, number][] = tokens.map((t) => [t, 0]);
  while (stack.length) {
    const [token, depth] = stack.pop()!;
    // Collections hold items ({key?, value?}); documents hold a value; scalars and aliases are leaves.
    const t = token as unknown as { type: string; offset: number; value?: unknown; items?: { key?: unknown; value?: unknown }[] };
    const d = ["block-map", "block-seq", "flow-collection"].includes(t.type) ? depth + 1 : depth;
    if (d > MAX_DEPTH) return { offset: t.offset, message: `nested more than ${MAX_DEPTH} levels deep; the file is not read` };
    const items = t.items ?? [];
    if (items.length > MAX_ENTRIES) {
      const it = items[MAX_ENTRIES] as { start?: { offset: number }[]; key?: { offset?: number }; value?: { offset?: number } };
      const offset = it.key?.offset ?? it.value?.offset ?? it.start?.[0]?.offset ?? t.offset;
      return { offset, message: `more than ${MAX_ENTRIES} entries in one map or list; the file is not read` };
    }
    for (const c of [t.value, ...items.flatMap((it) => [it.key, it.value])]) if (c && typeof c === "object") stack.push([c as CST.Token, d]);
  }
  return undefined;
}

/**
 * Pointer to the first value nested deeper than MAX_DEPTH in parsed data (aliases can deepen what
 * the text shows), or undefined. Heights are memoised: aliases share objects, so a plain walk could
 * take exponential time.
 */
function dataTooDeep(data: unknown): string | undefined {
  const height = new Map<object, number>();
  const kids = (v: object) => Object.entries(v).filter(([, c]) => c !== null && typeof c === "object") as [string, object][];
  const stack: [object, boolean][] = data !== null && typeof data === "object" ? [[data, false]] : [];
  while (stack.length) {
    const [v, done] = stack.pop()!;
    if (height.has(v)) continue;
    if (!done) {
      stack.push([v, true]);
      for (const [, c] of kids(v)) if (!height.has(c)) stack.push([c, false]);
    } else height.set(v, 1 + kids(v).reduce((h, [, c]) => Math.max(h, height.get(c) ?? MAX_DEPTH + 1), 0));
  }
  if (data === null || typeof data !== "object" || (height.get(data) ?? 0) <= MAX_DEPTH) return undefined;
  let pointer = "";
  for (let v = data, depth = 1; depth <= MAX_DEPTH; depth++) {
    const [k, c] = kids(v).reduce((a, b) => ((height.get(b[1]) ?? 0) > (height.get(a[1]) ?? 0) ? b : a));
    pointer += `/${escapeSegment(k)}`;
    v = c;
  }
  return pointer;
}

function yamlDocument(text: string, lc: LineCounter): { tokens: CST.Token[]; doc?: Document.Parsed; tooBig?: { offset: number; message: string } } {
  const tokens = [...new Parser(lc.addNewLine).parse(text)];
  const tooBig = cstTooBig(tokens);
  if (tooBig) return { tokens, tooBig };
  // Core schema only: no custom tags, nothing executable can come from a rule file.
  const composer = new Composer({ schema: "core", customTags: [], prettyErrors: false, uniqueKeys: true });
  let doc: Document.Parsed | undefined;
  for (const d of composer.compose(tokens, true, text.length)) {
    if (!doc) doc = d;
    else {
      doc.errors.push(new YAMLParseError([d.range[0], d.range[1]], "MULTIPLE_DOCS", "Source contains multiple documents"));
      break;
    }
  }
  return { tokens, doc };
}

export function parseYamlSource(file: string, text: string): SourceDoc {
  return parseYamlDocument(file, text).source;
}

/** A YAML file parsed with the limits above, its Document (comments, node ranges) and line:col of an offset. */
export interface YamlDocument {
  source: SourceDoc;
  /** Undefined when the file is too big to compose. */
  doc?: Document.Parsed;
  /** The concrete syntax tree: where each comment sits. */
  tokens: CST.Token[];
  position(offset: number): { line: number; col: number };
}

export function parseYamlDocument(file: string, text: string): YamlDocument {
  const lc = new LineCounter();
  const at = (offset: number) => {
    const p = lc.linePos(offset);
    return { line: p.line, col: p.col };
  };
  const problem = (offset: number, message: string, severity: Problem["severity"] = "error"): Problem => ({ file, ...at(offset), severity, message, ruleId: "yaml-syntax" });
  const { tokens, doc, tooBig } = yamlDocument(text, lc);
  if (!doc) return { source: failedSource(file, [problem(tooBig?.offset ?? 0, tooBig?.message ?? "could not be parsed")]), tokens, position: at };
  const problems: Problem[] = capped([...doc.errors, ...doc.warnings], (e) => problem(e.pos[0], e.message.split("\n")[0], e instanceof YAMLParseError ? "error" : "warning"));
  let data: unknown;
  if (!doc.errors.length)
    try {
      data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (e) {
      // yaml throws when aliases expand too much (a "billion laughs" file): locate the first alias.
      let first: number | undefined;
      visit(doc, { Alias: (_k, node) => ((first = node.range?.[0]), visit.BREAK) });
      problems.push(problem(first ?? 0, `${(e as Error).message} (aliases may expand at most ${MAX_ALIAS_COUNT} nodes); the file is not read`));
    }
  // Each map's keys are indexed on first use: a file can have thousands of keys, each with a problem.
  const pairs = new WeakMap<object, Map<string, Pair>>();
  const pairOf = (map: YAMLMap, seg: string) => {
    let index = pairs.get(map);
    if (!index) {
      index = new Map();
      for (const it of map.items as Pair[]) {
        const k = String((it.key as { value?: unknown } | null)?.value ?? it.key);
        if (!index.has(k)) index.set(k, it);
      }
      pairs.set(map, index);
    }
    return index.get(seg);
  };
  const locate = (pointer: string, key?: boolean) => {
    let node: YamlNode | null | undefined = doc.contents as YamlNode;
    let keyNode: YamlNode | undefined;
    for (const seg of segments(pointer)) {
      if (isMap(node)) {
        const pair = pairOf(node, seg);
        if (!pair) break;
        keyNode = pair.key as YamlNode;
        node = pair.value as YamlNode;
      } else if (isSeq(node)) {
        node = node.items[Number(seg)] as YamlNode;
        keyNode = undefined;
      } else break; // a scalar, or an alias (not followed)
    }
    const target = key && keyNode ? keyNode : node ?? keyNode;
    return target?.range ? at(target.range[0]) : { line: 1, col: 1 };
  };
  const deep = data === undefined ? undefined : dataTooDeep(data);
  if (deep !== undefined) {
    const where = locate(deep);
    problems.push({ file, ...where, severity: "error", message: `nested more than ${MAX_DEPTH} levels deep once aliases are expanded; the file is not read`, ruleId: "yaml-syntax" });
    data = undefined;
  }
  return { source: { file, data, problems, locate }, doc, tokens, position: at };
}

/** The first bracket nested deeper than MAX_DEPTH, or entry past MAX_ENTRIES in one object or array (jsonc-parser's scanner does not recurse). */
function jsoncTooBig(text: string): { offset: number; message: string } | undefined {
  const scanner = createScanner(text, true);
  const commas = [0]; // per open bracket: commas seen at its level
  for (let kind = scanner.scan(); kind !== SyntaxKind.EOF; kind = scanner.scan()) {
    if (kind === SyntaxKind.OpenBraceToken || kind === SyntaxKind.OpenBracketToken) {
      commas.push(0);
      if (commas.length - 1 > MAX_DEPTH) return { offset: scanner.getTokenOffset(), message: `nested more than ${MAX_DEPTH} levels deep; the file is not read` };
    } else if (kind === SyntaxKind.CloseBraceToken || kind === SyntaxKind.CloseBracketToken) {
      if (commas.length > 1) commas.pop();
    } else if (kind === SyntaxKind.CommaToken && ++commas[commas.length - 1] >= MAX_ENTRIES)
      return { offset: scanner.getTokenOffset(), message: `more than ${MAX_ENTRIES} entries in one object or array; the file is not read` };
  }
  return undefined;
}

const jsonIndex = new WeakMap<JsonNode, Map<string, JsonNode>>();

/** The child of an object (by key: [value, key]) or array (by index: [value]) node; objects are indexed on first use. */
function jsonChild(node: JsonNode, seg: string): [JsonNode, JsonNode?] | undefined {
  if (node.type === "array") {
    const child = /^\d+$/.test(seg) ? node.children?.[Number(seg)] : undefined;
    return child ? [child] : undefined;
  }
  if (node.type !== "object") return undefined;
  let index = jsonIndex.get(node);
  if (!index) {
    index = new Map();
    for (const prop of node.children ?? []) {
      const k = String(prop.children?.[0]?.value);
      if (prop.children?.[1] && !index.has(k)) index.set(k, prop);
    }
    jsonIndex.set(node, index);
  }
  const prop = index.get(seg);
  return prop ? [prop.children![1], prop.children![0]] : undefined;
}

/** jsonc-parser's error codes in words (its code kept in brackets, for a search). */
const JSONC_ERRORS: Record<string, string> = {
  InvalidSymbol: "unexpected character",
  InvalidNumberFormat: "not a valid number",
  PropertyNameExpected: "a property name in double quotes is expected here",
  ValueExpected: "a value is expected here",
  ColonExpected: "a colon is expected after the property name",
  CommaExpected: "a comma is expected before this",
  CloseBraceExpected: "a closing } is expected",
  CloseBracketExpected: "a closing ] is expected",
  EndOfFileExpected: "nothing may follow the closing } of the file",
  InvalidCommentToken: "a comment that is not closed",
  UnexpectedEndOfComment: "a comment that is not closed",
  UnexpectedEndOfString: "a string that is not closed",
  UnexpectedEndOfNumber: "a number that ends too soon",
  InvalidUnicode: "an invalid \\u escape",
  InvalidEscapeCharacter: "an invalid escape in a string",
  InvalidCharacter: "a character not allowed in a string (a line break, a tab)",
};

function jsoncErrorText(code: string, text: string): string {
  if (text.trim() === "") return `JSONC: the file is empty; an empty config is {} [${code}]`;
  return `JSONC: ${JSONC_ERRORS[code] ?? "syntax error"} [${code}]`;
}

export function parseJsoncSource(file: string, text: string): SourceDoc {
  const at = lineIndex(text);
  const tooBig = jsoncTooBig(text);
  if (tooBig) return failedSource(file, [{ file, ...at(tooBig.offset), severity: "error", message: tooBig.message, ruleId: "jsonc-syntax" }]);
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const problems: Problem[] = capped(errors, (e) => ({ file, ...at(e.offset), severity: "error", message: jsoncErrorText(printParseErrorCode(e.error), text), ruleId: "jsonc-syntax" }));
  const toValue = (n: JsonNode | undefined): unknown => {
    if (!n) return undefined;
    if (n.type === "object") return Object.fromEntries((n.children ?? []).map((p) => [p.children![0].value, toValue(p.children![1])]));
    if (n.type === "array") return (n.children ?? []).map(toValue);
    return n.value;
  };
  return {
    file,
    data: errors.length ? undefined : toValue(root),
    problems,
    locate(pointer, key) {
      if (!root) return { line: 1, col: 1 };
      // the value at the pointer (its key with `key`), else the deepest existing ancestor
      let node: JsonNode = root;
      let keyNode: JsonNode | undefined;
      let found = true;
      for (const seg of segments(pointer)) {
        const next = jsonChild(node, seg);
        if (!next) {
          found = false;
          break;
        }
        [node, keyNode] = next;
      }
      return at((found && key && keyNode ? keyNode : node).offset);
    },
  };
}
