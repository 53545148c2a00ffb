// Broken configuration in the real host: a project acp.jsonc with a syntax error, one with an
// unknown key, broken rule files in .opencode/acp/rules/, and hostile ones (a YAML alias bomb,
// /dev/zero and a FIFO named in ruleFiles). In each case the session still
// works (exit 0, the model answered), pruning still happens with the valid layers and the
// built-in rules (the global acp.jsonc commits every prune at once, so a superseded read shows),
// and the problem is reported to the user: an ignored message in the session (never sent to the
// model) that names file:line:col.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { toolResult, type ScriptedToolCall } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, ignoredTexts, pluginLoadErrors } from "./harness.js";
import { call } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const NOTES = Array.from({ length: 20 }, (_, i) => `notes line ${i + 1}: text of the notes file`).join("\n");
/** The plugin's notification header (src/host/plugin.ts). */
const NOTICE = "acp: configuration problems";

const SYNTAX_ERROR = `{
  "commit": { "minTokens": 0 },
  "preset": "balanced"
  "debug": false
}
`; // line 4: a comma is missing before "debug"

const UNKNOWN_KEY = `{
  "protectedFile": ["**/secrets/**"]
}
`; // line 2: protectedFile (did you mean protectedFiles?)

const BAD_YAML = `rules:
  bad-indent:
    phase: supersede
    description: The last key is indented wrongly
    when:
      all:
        - { fact: tool, operator: equal, value: bash }
     then: { action: supersede }
`; // line 8: "then" is not aligned with the other keys

const UNKNOWN_FACT = `rules:
  typo-rule:
    phase: supersede
    description: A rule with a misspelt fact
    key: "typo:{input.command}"
    when:
      all:
        - { fact: tol, operator: equal, value: bash }
    then: { action: supersede }
`; // line 8, column 19: unknown fact "tol"

/** Nine levels of anchors, each aliased nine times: 9^9 nodes if expanded. */
const ALIAS_BOMB = [
  "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
  ...Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(9).fill(`*a${i}`).join(", ")}]`),
  "rules: {}",
  "",
].join("\n"); // line 2, column 10: the first alias

/**
 * One session in a workspace with `files` (then `prepare` on the project folder): read notes.txt
 * twice, answer. Returns what the model received and the ignored messages stored in the session.
 */
async function scenario(files: Record<string, string>, prepare?: (projectDir: string) => void) {
  if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
  const ws = await createWorkspace({
    files: { "notes.txt": `${NOTES}\n`, ...files },
    plugins: [ACP_PLUGIN],
    globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 0 } }) },
  });
  try {
    prepare?.(ws.projectDir);
    const notes = path.join(ws.projectDir, "notes.txt");
    ws.model.enqueue(
      { toolCalls: [call("call_read_1", "read", { filePath: notes })] },
      { toolCalls: [call("call_read_2", "read", { filePath: notes })] },
      { text: "The notes have 20 lines." },
    );
    const run = await ws.run("Read notes.txt twice", { timeoutMs: RUN_TIMEOUT });
    expect(run.timedOut, run.stderr.slice(-3000)).toBe(false);
    expect(run.exitCode, run.stderr.slice(-3000)).toBe(0);
    expect(pluginLoadErrors(run.stderr)).toEqual([]);
    expect(ws.model.scriptErrors).toEqual([]);
    expect(ws.model.exhaustedCount).toBe(0);
    expect(ws.model.pending).toBe(0);
    expect(run.requests).toHaveLength(3);
    // the model's final answer reached the client
    expect(run.events.some((e) => e.type === "text" && String(e.part?.text).includes("The notes have 20 lines."))).toBe(true);
    // pruning still works: the first read is superseded once the second exists
    expect(toolResult(run.requests[1], "call_read_1")).toContain("notes line 20");
    expect(toolResult(run.requests[2], "call_read_1")).toContain("superseded");
    expect(toolResult(run.requests[2], "call_read_2")).toContain("notes line 20");
    // the notification is never sent to the model
    for (const req of run.requests) expect(JSON.stringify(req.body.messages)).not.toContain(NOTICE);

    const exported = await ws.exportSession(run.sessionID!);
    const notices = ignoredTexts(exported).filter((t) => t.startsWith(NOTICE));
    return { ws, run, notices, projectDir: ws.projectDir };
  } finally {
    await ws.dispose();
  }
}

describe("broken configuration never stops a session and is reported with file:line:col", () => {
  it("acp.jsonc with a syntax error", async () => {
    const { notices, projectDir } = await scenario({ ".opencode/acp.jsonc": SYNTAX_ERROR });
    expect(notices, "exactly one notification per session").toHaveLength(1);
    expect(notices[0]).toContain(`${path.join(projectDir, ".opencode", "acp.jsonc")}:4:3`);
  }, RUN_TIMEOUT);

  it("acp.jsonc with an unknown key", async () => {
    const { notices, projectDir } = await scenario({ ".opencode/acp.jsonc": UNKNOWN_KEY });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(`${path.join(projectDir, ".opencode", "acp.jsonc")}:2:3`);
    expect(notices[0]).toContain("protectedFile");
    expect(notices[0]).toContain('did you mean "protectedFiles"');
  }, RUN_TIMEOUT);

  it("broken rule files in .opencode/acp/rules/ (YAML syntax, unknown fact)", async () => {
    const { notices, projectDir } = await scenario({
      ".opencode/acp/rules/bad-indent.yaml": BAD_YAML,
      ".opencode/acp/rules/typo.yaml": UNKNOWN_FACT,
    });
    expect(notices).toHaveLength(1);
    const rules = path.join(projectDir, ".opencode", "acp", "rules");
    expect(notices[0]).toMatch(new RegExp(`${escape(path.join(rules, "bad-indent.yaml"))}:8:\\d+`));
    expect(notices[0]).toContain(`${path.join(rules, "typo.yaml")}:8:19`);
    expect(notices[0]).toContain('unknown fact "tol"');
  }, RUN_TIMEOUT);

  it("hostile files: a YAML alias bomb in .opencode/acp/rules/, /dev/zero and a FIFO in ruleFiles", async () => {
    const { notices, projectDir } = await scenario(
      {
        ".opencode/acp/rules/bomb.yaml": ALIAS_BOMB,
        ".opencode/acp.jsonc": '{ "ruleFiles": ["/dev/zero", "./pipe.yaml"] }\n',
      },
      (dir) => execFileSync("mkfifo", [path.join(dir, ".opencode", "pipe.yaml")]),
    );
    expect(notices).toHaveLength(1);
    const config = path.join(projectDir, ".opencode", "acp.jsonc");
    expect(notices[0]).toContain(`${path.join(projectDir, ".opencode", "acp", "rules", "bomb.yaml")}:2:10: error: Excessive alias count`);
    expect(notices[0]).toContain(`${config}:1:17: error: rule file "/dev/zero" is a character device`);
    expect(notices[0]).toContain(`${config}:1:30: error: rule file "./pipe.yaml" is a FIFO`);
  }, RUN_TIMEOUT);
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
