// Noticing that acp.jsonc, a rule file or a preset file changed while the host runs: a stat of
// every file and folder loading read or would read (the config locations, the rule folders,
// ruleFiles, a preset file) and of the rule files in those folders. Comparing two fingerprints
// costs a few dozen stat calls; no watcher threads, nothing that can block or fail loudly.
import { readdirSync, statSync } from "node:fs";
import { extname, isAbsolute, join } from "node:path";
import { configFiles, type ConfigLocations } from "./config.js";
import { isRuleTest } from "./load.js";

/** Folders listed at most: a fingerprint must stay cheap whatever a folder holds. */
const MAX_LISTED = 1000;

export interface WatchInput {
  locations: ConfigLocations;
  /** The rule files and folders the loaded config named (absolute). */
  ruleFiles?: string[];
  /** The preset in use: a file path is watched, a built-in name is not. */
  preset?: string;
}

/** The paths a load reads: config files and rule folders (present or not), ruleFiles, a preset file. */
export function watchedPaths(input: WatchInput): string[] {
  const paths: string[] = [];
  for (const { file, ruleDir } of configFiles(input.locations)) paths.push(file, ruleDir);
  paths.push(...(input.ruleFiles ?? []));
  if (input.preset && isAbsolute(input.preset)) paths.push(input.preset);
  return [...new Set(paths)];
}

function statLine(path: string): { line: string; dir: boolean } {
  try {
    const st = statSync(path);
    // a folder by its rule files (listed after it): other files coming and going are no change
    if (st.isDirectory()) return { line: `${path}\td`, dir: true };
    return { line: `${path}\tf\t${st.mtimeMs}\t${st.size}\t${st.ino}`, dir: false };
  } catch (e) {
    return { line: `${path}\t${(e as NodeJS.ErrnoException)?.code ?? "error"}`, dir: false };
  }
}

/**
 * What the files look like now: one line per path (kind, mtime, size, inode, or why it cannot be
 * read), and for a folder one per rule file in it. Equal strings: nothing a load reads changed.
 */
export function fingerprint(paths: string[]): string {
  const lines: string[] = [];
  for (const p of paths) {
    const { line, dir } = statLine(p);
    lines.push(line);
    if (!dir) continue;
    let names: string[];
    try {
      names = readdirSync(p).filter((f) => [".yaml", ".yml"].includes(extname(f)) && !isRuleTest(f)).sort().slice(0, MAX_LISTED);
    } catch (e) {
      lines.push(`${p}/\t${(e as NodeJS.ErrnoException)?.code ?? "error"}`);
      continue;
    }
    for (const n of names) lines.push(statLine(join(p, n)).line);
  }
  return lines.join("\n");
}

/**
 * Re-checks the fingerprint at most once per `intervalMs`; `changed()` is true once per change.
 * A load that failed still has a fingerprint, so fixing the file is noticed too.
 */
export class ConfigWatch {
  private last: string;
  private checkedAt: number;
  constructor(
    private paths: string[],
    readonly intervalMs = 1000,
    private readonly now: () => number = Date.now,
  ) {
    this.last = fingerprint(paths);
    this.checkedAt = now();
  }

  /** True when what a load reads changed since the last load (checked at most once per interval). */
  changed(): boolean {
    const t = this.now();
    if (t - this.checkedAt < this.intervalMs) return false;
    this.checkedAt = t;
    const print = fingerprint(this.paths);
    if (print === this.last) return false;
    this.last = print;
    return true;
  }

  /**
   * After a reload: watch what the new configuration reads. With the same paths the fingerprint
   * taken before the load stays, so an edit made while loading is still noticed next time.
   */
  reset(paths: string[]): void {
    if (paths.length !== this.paths.length || paths.some((p, i) => p !== this.paths[i])) this.last = fingerprint(paths);
    this.paths = paths;
    this.checkedAt = this.now();
  }
}
