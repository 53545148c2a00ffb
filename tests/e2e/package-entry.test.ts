// How opencode 1.18.x picks a plugin package's entry: exports["./server"] (its string, `import` or
// `default` value), else `main`; exports["."] is never used. So a package whose root exports a
// programmatic API can still hand the host a plugin-only module. See docs/e2e.md.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createWorkspace, pluginLoadErrors } from "./harness.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/entry-package", import.meta.url));
const RUN_TIMEOUT = 150_000;

/** Runs one prompt with `spec` as the only plugin; returns the fixture's log lines and plugin errors. */
async function runWith(spec: string) {
  const ws = await createWorkspace({ plugins: [spec] });
  try {
    const log = path.join(ws.root, "entry.log");
    ws.model.enqueue({ text: "hi" });
    const run = await ws.run("hello", { env: { ENTRY_FIXTURE_LOG: log } });
    expect(run.timedOut).toBe(false);
    expect(run.exitCode).toBe(0);
    expect(run.requests).toHaveLength(1);
    const lines = fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n") : [];
    return { lines, errors: pluginLoadErrors(run.stderr) };
  } finally {
    await ws.dispose();
  }
}

describe.concurrent("plugin package entry resolution (real opencode)", () => {
  it("a package directory loads exports['./server'], not the package root", async () => {
    const { lines, errors } = await runWith(FIXTURE);
    expect(errors).toEqual([]);
    expect(lines).toEqual(["server-init", "transform"]);
  }, RUN_TIMEOUT);

  it("an npm spec (name@file:dir, installed by opencode's npm) loads exports['./server'] too", async () => {
    const { lines, errors } = await runWith(`acp-entry-fixture@file:${FIXTURE}`);
    expect(errors).toEqual([]);
    expect(lines).toEqual(["server-init", "transform"]);
  }, RUN_TIMEOUT);

  it("control: without exports['./server'] the host imports `main` and rejects the API module", async () => {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), "acp-entry-no-server-"));
    let result: Awaited<ReturnType<typeof runWith>>;
    try {
      fs.cpSync(FIXTURE, copy, { recursive: true });
      const pkg = JSON.parse(fs.readFileSync(path.join(copy, "package.json"), "utf8"));
      delete pkg.exports["./server"];
      fs.writeFileSync(path.join(copy, "package.json"), JSON.stringify(pkg));
      result = await runWith(copy);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
    expect(result.lines).toEqual([]);
    expect(result.errors.join("\n")).toContain("Plugin export is not a function");
  }, RUN_TIMEOUT);
});
