// Parsed YAML/JSONC documents that can point back at file:line:col for any JSON pointer. Parsing is
// bounded: nesting deeper than MAX_DEPTH is refused before the (recursive) composers see it, YAML
// aliases may not expand without limit, and a file reports at most MAX_SYNTAX_PROBLEMS errors.
import { createScanner, parseTree, findNodeAtLocation, SyntaxKind, type Node as JsonNode, type ParseError, printParseErrorCode } from "jsonc-parser";
import { Composer, isMap, isSeq, LineCounter, Parser, visit, YAMLParseError, type Document, type CST, type Node as YamlNode } from "yaml";
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
function lineIndex(text: string): (offset: number) => { line: number; col: number } {
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

/** Offset of the first YAML collection nested deeper than MAX_DEPTH in the CST (walked without recursion). */
function cstTooDeep(tokens: CST.Token[]): number | undefined {
  const stack: [CST.Token, number][] = tokens.map((t) => [t, 0]);
  while (stack.length) {
    const [token, depth] = stack.pop()!;
    // Collections hold items ({key?, value?}); documents hold a value; scalars and aliases are leaves.
    const t = token as unknown as { type: string; offset: number; value?: unknown; items?: { key?: unknown; value?: unknown }[] };
    const d = ["block-map", "block-seq", "flow-collection"].includes(t.type) ? depth + 1 : depth;
    if (d > MAX_DEPTH) return t.offset;
    const children = [t.value, ...(t.items ?? []).flatMap((it) => [it.key, it.value])];
    for (const c of children) if (c && typeof c === "object") stack.push([c as CST.Token, d]);
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
    } else height.set(v, 1 + Math.max(0, ...kids(v).map(([, c]) => height.get(c) ?? MAX_DEPTH + 1)));
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

function yamlDocument(text: string, lc: LineCounter): { doc?: Document.Parsed; deepAt?: number } {
  const tokens = [...new Parser(lc.addNewLine).parse(text)];
  const deepAt = cstTooDeep(tokens);
  if (deepAt !== undefined) return { deepAt };
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
  return { doc };
}

export function parseYamlSource(file: string, text: string): SourceDoc {
  const lc = new LineCounter();
  const at = (offset: number) => {
    const p = lc.linePos(offset);
    return { line: p.line, col: p.col };
  };
  const problem = (offset: number, message: string, severity: Problem["severity"] = "error"): Problem => ({ file, ...at(offset), severity, message, ruleId: "yaml-syntax" });
  const { doc, deepAt } = yamlDocument(text, lc);
  if (!doc) return failedSource(file, [problem(deepAt ?? 0, `nested more than ${MAX_DEPTH} levels deep; the file is not read`)]);
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
  const locate = (pointer: string, key?: boolean) => {
    let node: YamlNode | null | undefined = doc.contents as YamlNode;
    let keyNode: YamlNode | undefined;
    for (const seg of segments(pointer)) {
      if (isMap(node)) {
        const pair = node.items.find((it: any) => String(it.key?.value ?? it.key) === seg);
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
  return { file, data, problems, locate };
}

/** Offset of the first bracket nested deeper than MAX_DEPTH (jsonc-parser's scanner does not recurse). */
function jsoncTooDeep(text: string): number | undefined {
  const scanner = createScanner(text, true);
  let depth = 0;
  for (let kind = scanner.scan(); kind !== SyntaxKind.EOF; kind = scanner.scan()) {
    if (kind === SyntaxKind.OpenBraceToken || kind === SyntaxKind.OpenBracketToken) {
      if (++depth > MAX_DEPTH) return scanner.getTokenOffset();
    } else if (kind === SyntaxKind.CloseBraceToken || kind === SyntaxKind.CloseBracketToken) depth = Math.max(0, depth - 1);
  }
  return undefined;
}

export function parseJsoncSource(file: string, text: string): SourceDoc {
  const at = lineIndex(text);
  const deepAt = jsoncTooDeep(text);
  if (deepAt !== undefined) return failedSource(file, [{ file, ...at(deepAt), severity: "error", message: `nested more than ${MAX_DEPTH} levels deep; the file is not read`, ruleId: "jsonc-syntax" }]);
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const problems: Problem[] = capped(errors, (e) => ({ file, ...at(e.offset), severity: "error", message: `JSONC: ${printParseErrorCode(e.error)}`, ruleId: "jsonc-syntax" }));
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
      const path = segments(pointer).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
      let node = findNodeAtLocation(root, path);
      if (!node) {
        // fall back to the deepest existing ancestor
        for (let i = path.length - 1; i >= 0 && !node; i--) node = findNodeAtLocation(root, path.slice(0, i));
      } else if (key && node.parent?.type === "property") node = node.parent.children![0];
      return node ? at(node.offset) : { line: 1, col: 1 };
    },
  };
}
