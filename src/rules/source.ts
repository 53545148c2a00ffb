// Parsed YAML/JSONC documents that can point back at file:line:col for any JSON pointer.
import { parseTree, findNodeAtLocation, type Node as JsonNode, type ParseError, printParseErrorCode } from "jsonc-parser";
import { isMap, isSeq, LineCounter, parseDocument, type Node as YamlNode } from "yaml";
import type { Problem } from "./problems.js";

export interface SourceDoc {
  file: string;
  data: unknown;
  problems: Problem[];
  /** Location of the value (or, with `key`, of the key) at a JSON pointer. */
  locate(pointer: string, key?: boolean): { line: number; col: number };
}

const segments = (pointer: string) =>
  pointer
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));

export function parseYamlSource(file: string, text: string): SourceDoc {
  const lc = new LineCounter();
  // Core schema only: no custom tags, nothing executable can come from a rule file.
  const doc = parseDocument(text, { lineCounter: lc, schema: "core", customTags: [], prettyErrors: false, uniqueKeys: true });
  const at = (offset: number) => {
    const p = lc.linePos(offset);
    return { line: p.line, col: p.col };
  };
  const problems: Problem[] = [...doc.errors, ...doc.warnings].map((e) => ({
    file,
    ...at(e.pos[0]),
    severity: doc.errors.includes(e as any) ? "error" : "warning",
    message: e.message.split("\n")[0],
    ruleId: "yaml-syntax",
  }));
  return {
    file,
    data: doc.errors.length ? undefined : doc.toJS({ maxAliasCount: 100 }),
    problems,
    locate(pointer, key) {
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
        } else break;
      }
      const target = key && keyNode ? keyNode : node ?? keyNode;
      return target?.range ? at(target.range[0]) : { line: 1, col: 1 };
    },
  };
}

export function parseJsoncSource(file: string, text: string): SourceDoc {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const at = (offset: number) => {
    const before = text.slice(0, offset).split("\n");
    return { line: before.length, col: before[before.length - 1].length + 1 };
  };
  const problems: Problem[] = errors.map((e) => ({ file, ...at(e.offset), severity: "error", message: `JSONC: ${printParseErrorCode(e.error)}`, ruleId: "jsonc-syntax" }));
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
