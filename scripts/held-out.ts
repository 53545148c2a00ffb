// npx tsx scripts/held-out.ts <mirrors> <out-folder>: rebuilds the held-out sets of docs/tuning.md
// (sessions 15, 16, 19, 29 and 30) from git mirrors you already have, so their `acp simulate` figures can
// be reproduced: <out>/multiturn (5 sessions), <out>/origins (37), <out>/multiturn2 (20),
// <out>/multiturn3 (21), <out>/multiturn4 (23), <out>/multiturn5 (24), <out>/multiturn6 (24),
// <out>/multiturn7 (24) and <out>/multiturn8 (24). scripts/held-out.json lists each session by
// repository, commit and path; nothing is fetched and no transcript is kept in this repository
// (they are their authors' data). A mirror is looked for as <mirrors>/<owner>+<name>/repo (a bare
// git directory) or <mirrors>/<owner>/<name> (a clone). Claude Code transcripts are converted with
// scripts/claude-transcript.ts; `opencode export` files are copied (acp simulate drops their
// `time.compacted` marks when it loads them).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { convert } from "./claude-transcript.js";

interface Entry {
  set: string;
  repo: string;
  commit: string;
  path: string;
  format: "claude-code-jsonl" | "opencode-export";
}

/** The git directory of `repo` under `mirrors`, or undefined. */
export function gitDirOf(mirrors: string, repo: string): string | undefined {
  const [owner, name] = repo.split("/");
  for (const dir of [join(mirrors, `${owner}+${name}`, "repo"), join(mirrors, owner, name, ".git"), join(mirrors, owner, name)]) if (existsSync(dir)) return dir;
  return undefined;
}

/** The output file name: repository name and the file's name, so that sessions of two repositories stay apart. */
export function outFile(e: Entry): string {
  return `${e.repo.split("/")[1]}__${basename(e.path).replace(/\.jsonl?$/, "")}.json`;
}

function main() {
  const [mirrors, out] = process.argv.slice(2);
  if (!mirrors || !out) {
    console.error("usage: npx tsx scripts/held-out.ts <mirrors> <out-folder>");
    process.exit(2);
  }
  const list: Entry[] = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "held-out.json"), "utf8")).sessions;
  let missing = 0;
  for (const e of list) {
    const gitDir = gitDirOf(mirrors, e.repo);
    let text: string;
    try {
      if (!gitDir) throw new Error("no mirror");
      text = execFileSync("git", ["--git-dir", gitDir, "show", `${e.commit}:${e.path}`], { encoding: "utf8", maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "ignore"] });
    } catch {
      console.error(`missing: ${e.repo}@${e.commit.slice(0, 7)}:${e.path}`);
      missing++;
      continue;
    }
    const folder = join(out, e.set);
    mkdirSync(folder, { recursive: true });
    const session = e.format === "claude-code-jsonl" ? convert(text, { format: e.format, repo: e.repo, commit: e.commit, path: e.path }) : JSON.parse(text);
    writeFileSync(join(folder, outFile(e)), JSON.stringify(session));
  }
  console.log(`${list.length - missing} of ${list.length} sessions written under ${out}${missing ? ` (${missing} missing: fetch those repositories first)` : ""}`);
  process.exit(missing ? 1 : 0);
}

if (process.argv[1]?.endsWith("held-out.ts")) main();
