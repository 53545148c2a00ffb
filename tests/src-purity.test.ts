// The engine knows generic facts and actions; the rules know OpenCode's tools; OpenCode's own texts
// (placeholders, error names, the prune tool, part ids, id tags: src/host/profile.ts) reach the
// graph, the engine and the measurement library as a HostProfile value. So none of them may appear
// as a literal anywhere in src/ outside the host adapter (src/host) — string, template or regular
// expression, read from the syntax tree (comments may name them).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { OPENCODE } from "../src/host/profile.js";
import { loadRuleFiles, BUILTIN_RULES_DIR } from "../src/rules/load.js";

// "glob" (an operator) and "batch" (a commit mode) are generic words here, so they are not scanned.
const TOOL_NAMES = ["read", "write", "edit", "bash", "grep", "webfetch", "websearch", "todowrite", "todoread", "task", "skill", "context_prune"];

/** OpenCode's texts: every string of the profile, the fixed part of its templates, its regexes' words. */
function hostTexts(): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (v instanceof RegExp) out.push(...v.source.split("|"));
    else if (typeof v === "function") {
      // a template's fixed parts; a predicate (dropsAtNextTurn) holds no text
      const r = (v as (...a: unknown[]) => unknown)("\0", "\0");
      if (typeof r === "string") out.push(...r.split("\0"));
    }
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(OPENCODE);
  // a single bracket or colon is no one's knowledge
  return [...new Set(out.map((s) => s.trim()).filter((s) => s.length >= 4))];
}

/** The text of every string, template and regular expression literal in a source file. */
export function literalTexts(source: string): string[] {
  const file = ts.createSourceFile("x.ts", source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) out.push(node.text);
    else if (ts.isRegularExpressionLiteral(node)) out.push(node.text.replace(/\\(.)/g, "$1")); // unescaped: /\[acp:/ reads "[acp:"
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

/** What a file names that it should not: tools and built-in rules as quoted literals, the host's texts anywhere in a literal. */
function offenders(source: string, names: string[], texts: string[]): string[] {
  const found = new Set<string>();
  for (const name of names) if (source.includes(`"${name}"`) || source.includes(`'${name}'`)) found.add(`"${name}"`);
  for (const lit of literalTexts(source)) for (const t of texts) if (lit.includes(t)) found.add(t);
  return [...found];
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
}

/**
 * Known, listed file by file so that any new one fails: lint's advice on `phase: manual` names the
 * prune tool (src/cli may import src/host/profile.ts; the file is being rewritten elsewhere, so the
 * swap to OPENCODE.pruneTool waits for that).
 */
const KNOWN: Record<string, string[]> = { [join("src", "cli", "lint-rules.ts")]: ["context_prune"] };

const ruleIds = () => loadRuleFiles([BUILTIN_RULES_DIR]).rules.map((r) => r.id);

describe("src/ outside the host adapter", () => {
  it("names no tool, no built-in rule and none of OpenCode's texts (HostProfile) in a literal", () => {
    const names = [...TOOL_NAMES, ...ruleIds()];
    const texts = hostTexts();
    expect(texts).toEqual(expect.arrayContaining(["[Old tool result content cleared]", "MessageAbortedError", "context_prune", "[acp:", "signature", "[Attached"]));
    const found: string[] = [];
    for (const f of files("src").filter((f) => f.endsWith(".ts") && !f.startsWith(join("src", "host"))))
      for (const o of offenders(readFileSync(f, "utf8"), names, texts)) if (!KNOWN[f]?.includes(o)) found.push(`${f}: ${o}`);
    expect(found).toEqual([]);
  });

  it("a planted literal of each kind is found (string, template, regular expression; not a comment)", () => {
    const texts = hostTexts();
    const plant = (code: string) => offenders(code, TOOL_NAMES, texts);
    expect(plant(`// the host writes "[Old tool result content cleared]" there\nexport const a = 1;`)).toEqual([]);
    expect(plant(`export const cleared = "[Old tool result content cleared]";`)).toEqual(["[Old tool result content cleared]"]);
    expect(plant("export const t = (id: string) => `[acp:${id}]`;")).toEqual(["[acp:"]);
    expect(plant("export const tag = /\\[acp:[tmr][0-9a-z]+\\]/g;")).toEqual(["[acp:"]);
    expect(plant(`export const aborted = (e: { name: string }) => e.name === 'MessageAbortedError';`)).toEqual(["MessageAbortedError"]);
    expect(plant("export const signed = /signature|encrypted/i;")).toEqual(["signature", "encrypted"]);
    expect(plant("export const note = `Call context_prune to discard`;")).toEqual(["context_prune"]);
    expect(plant(`export const tool = "bash";`)).toEqual(['"bash"']);
  });
});
