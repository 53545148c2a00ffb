// Vitest global setup: the run's temporary files go under one folder of their own, removed when the
// run ends, so the tests' mkdtemp folders (state, config, sessions) do not pile up in the system's
// temporary folder. Workers are forked after this runs and inherit TMPDIR, which os.tmpdir() reads.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), "acp-tests-"));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(root, { recursive: true, force: true });
  };
}
