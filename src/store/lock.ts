// The lock around every read-modify-write of a state or stats file, so that two processes on one
// session (serve + attach, two terminals) never lose each other's writes. proper-lockfile makes the
// lock (`<file>.lock`, a folder made atomically), takes over a stale one and removes its own on
// exit. The hooks are synchronous, and its sync API does not retry, so the waiting is done here.
import sleep from "atomic-sleep";
import lockfile from "proper-lockfile";
import { unlinkSync } from "node:fs";

/** A lock older than this was left by a process that died: it is taken over. */
export const STALE_MS = 10_000;
/** How long a save waits for the lock (tries × pause) before it goes ahead without it. */
const TRIES = 200;
const PAUSE_MS = 5;

/** Runs `fn` holding `<file>.lock` (best effort: after ~1 s, or when the lock cannot be made at all, it proceeds). */
export function withLock<T>(file: string, fn: () => T): T {
  let release: (() => void) | undefined;
  for (let i = 0; i < TRIES && release === undefined; i++) {
    try {
      // realpath off: the file may not exist yet. A lock is held only while `fn` runs (no event
      // loop turn), so the library's refresh timer never fires; a compromise is not ours to throw.
      release = lockfile.lockSync(file, { stale: STALE_MS, realpath: false, onCompromised: () => {} });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // a stale lock file (not folder) of an older version of this plugin: the library found it
      // stale and could not remove it as a folder
      if (code === "ENOTDIR") removeQuietly(`${file}.lock`);
      else if (code === "ELOCKED") sleep(PAUSE_MS);
      else break;
    }
  }
  try {
    return fn();
  } finally {
    try {
      release?.();
    } catch {}
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}
