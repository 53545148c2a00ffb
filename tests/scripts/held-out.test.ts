// scripts/held-out.ts: the held-out list names each session exactly once, and two sessions never
// share an output file (they would overwrite each other and the set would shrink without a word).
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gitDirOf, outFile } from "../../scripts/held-out.js";

const list = JSON.parse(readFileSync(join(__dirname, "../../scripts/held-out.json"), "utf8")).sessions as { set: string; repo: string; commit: string; path: string; format: string }[];

describe("held-out list", () => {
  it("holds the sets of docs/tuning.md sessions 15, 16, 19, 29 and 30, each session at a full commit", () => {
    expect(list.filter((e) => e.set === "multiturn")).toHaveLength(5);
    expect(list.filter((e) => e.set === "origins")).toHaveLength(37);
    expect(list.filter((e) => e.set === "multiturn2")).toHaveLength(20);
    expect(list.filter((e) => e.set === "multiturn3")).toHaveLength(21);
    expect(list.filter((e) => e.set === "multiturn4")).toHaveLength(23);
    expect(list.filter((e) => e.set === "multiturn5")).toHaveLength(24);
    expect(list.filter((e) => e.set === "multiturn6")).toHaveLength(24);
    expect(list.filter((e) => e.set === "multiturn7")).toHaveLength(24);
    expect(list.filter((e) => e.set === "multiturn8")).toHaveLength(24);
    for (const e of list) {
      expect(e.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(["claude-code-jsonl", "opencode-export"]).toContain(e.format);
      expect(e.repo).toMatch(/^[\w.-]+\/[\w.-]+$/);
    }
  });

  it("gives every session its own output file", () => {
    const names = list.map((e) => `${e.set}/${outFile(e as never)}`);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(list.map((e) => `${e.repo}:${e.path}`)).size).toBe(list.length);
  });

  it("finds a mirror as fetched (owner+name/repo) or as a clone (owner/name)", () => {
    const root = mkdtempSync(join(tmpdir(), "acp-held-out-"));
    mkdirSync(join(root, "a+b", "repo"), { recursive: true });
    mkdirSync(join(root, "c", "d", ".git"), { recursive: true });
    expect(gitDirOf(root, "a/b")).toBe(join(root, "a+b", "repo"));
    expect(gitDirOf(root, "c/d")).toBe(join(root, "c", "d", ".git"));
    expect(gitDirOf(root, "e/f")).toBeUndefined();
  });
});
