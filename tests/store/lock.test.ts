// The lock around state and stats writes (src/store/lock.ts, proper-lockfile): held only while the
// write runs, a stale one (its holder died) taken over at once, a live one waited for and then, as
// a last resort, ignored (a save must not hang a hook).
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STALE_MS, withLock } from "../../src/store/lock.js";

const fileIn = () => join(mkdtempSync(join(tmpdir(), "acp-lock-")), "s.json");
const age = (path: string, ms: number) => utimesSync(path, new Date(Date.now() - ms), new Date(Date.now() - ms));

describe("withLock", () => {
  it("holds <file>.lock while fn runs and removes it after, also when fn throws", () => {
    const file = fileIn();
    expect(withLock(file, () => existsSync(`${file}.lock`))).toBe(true);
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(() => withLock(file, () => { throw new Error("boom"); })).toThrow("boom");
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("takes over a stale lock at once (a process died holding it)", () => {
    const file = fileIn();
    mkdirSync(`${file}.lock`);
    age(`${file}.lock`, STALE_MS + 5_000);
    const t = Date.now();
    expect(withLock(file, () => "ran")).toBe("ran");
    expect(Date.now() - t).toBeLessThan(500);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("takes over a stale lock file left by an older version of the plugin (a file, not a folder)", () => {
    const file = fileIn();
    writeFileSync(`${file}.lock`, "");
    age(`${file}.lock`, STALE_MS + 5_000);
    const t = Date.now();
    expect(withLock(file, () => existsSync(`${file}.lock`))).toBe(true);
    expect(Date.now() - t).toBeLessThan(500);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("waits for a live lock, and after about a second goes ahead without it (never hangs the hook)", () => {
    const file = fileIn();
    mkdirSync(`${file}.lock`); // another process holds it and does not let go
    const t = Date.now();
    expect(withLock(file, () => "ran")).toBe("ran");
    expect(Date.now() - t).toBeGreaterThanOrEqual(900);
    expect(existsSync(`${file}.lock`)).toBe(true); // not ours to remove
  });
});
