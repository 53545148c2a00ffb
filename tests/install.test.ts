// `npm ci` on a fresh clone, on any platform: the lockfile lists every optional dependency (npm ci
// refuses one that lacks another platform's binary package), and every install script the tests
// need is approved in package.json's allowScripts (npm 11 warns about unreviewed ones and is
// moving to skip them; opencode-ai's postinstall is what puts the real `opencode` binary in place).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

interface LockEntry {
  version?: string;
  optionalDependencies?: Record<string, string>;
  hasInstallScript?: boolean;
}
const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as { packages: Record<string, LockEntry> };
const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { allowScripts?: Record<string, boolean> };

/** The lock entry Node resolves `name` to from the package at `key` (walking up node_modules). */
function resolve(key: string, name: string): LockEntry | undefined {
  for (let dir = key; ; dir = dir.includes("/node_modules/") ? dir.slice(0, dir.lastIndexOf("/node_modules/")) : "") {
    const hit = lock.packages[dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`];
    if (hit || dir === "") return hit;
  }
}

const packageName = (key: string) => key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);

describe("package-lock.json", () => {
  it("has an entry for every optional dependency of every platform (run scripts/lock-platforms.mjs)", () => {
    const missing = Object.entries(lock.packages).flatMap(([key, entry]) =>
      Object.entries(entry.optionalDependencies ?? {})
        .filter(([name]) => !resolve(key, name))
        .map(([name, range]) => `${name}@${range} (for ${key || "the root"})`),
    );
    expect(missing).toEqual([]);
  });

  it("has every install script reviewed in package.json allowScripts (npm install-scripts approve|deny)", () => {
    const reviewed = Object.keys(pkg.allowScripts ?? {});
    const covered = (name: string, version?: string) =>
      reviewed.some((k) => k === name || k === `${name}@${version}`);
    const unreviewed = Object.entries(lock.packages)
      .filter(([key, e]) => key !== "" && e.hasInstallScript && !covered(packageName(key), e.version))
      .map(([key, e]) => `${packageName(key)}@${e.version}`);
    expect(unreviewed).toEqual([]);
    expect(pkg.allowScripts?.["opencode-ai"], "the e2e tests need opencode-ai's postinstall (the binary)").toBe(true);
  });
});
