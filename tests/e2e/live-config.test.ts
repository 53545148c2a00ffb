// Rule files and acp.jsonc changed while one host runs (`opencode serve` + `opencode run --attach`,
// as in the TUI): a rule file added after the first turn applies from the next turn on, without a
// restart. Outputs the model has not seen yet are pruned at once; the already-sent prefix stays byte
// for byte while the commit policy holds changes to it back (here: never worth it). A project
// acp.jsonc written next lets the policy commit at once, and the held-back prune goes out; a broken
// rule file added with it is told once, with file:line:col, and the valid rule keeps applying.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResult } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, ignoredTexts, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const lines = (tag: string) => Array.from({ length: 40 }, (_, i) => `${tag} line ${i + 1}: log content of ${tag}`).join("\n");

const CLEAR_BASH = `rules:
  clear-bash:
    phase: reduce
    description: Clears every bash output
    when:
      all:
        - { fact: tool, operator: equal, value: bash }
        - { fact: status, operator: equal, value: completed }
    then: { action: clear }
`;

const BROKEN = `rules:
  broken:
    phase: reduce
    description: A rule with a misspelt fact
    when:
      all:
        - { fact: tol, operator: equal, value: bash }
    then: { action: clear }
`; // line 7, column 19: unknown fact "tol"

const cat = (id: string, file: string) => call(id, "bash", { command: `cat ${file}`, description: `show ${file}` });

describe("rule files changed while `opencode serve` runs", () => {
  let ws: Workspace;
  let server: Awaited<ReturnType<Workspace["serve"]>>;

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    ws = await createWorkspace({
      // .opencode/ exists (and is seeded, so no process tries to install into it); its acp/ does not
      files: { "a.log": `${lines("ALPHA")}\n`, "b.log": `${lines("BRAVO")}\n`, "c.log": `${lines("CHARLIE")}\n`, ".opencode/README.md": "project configuration\n" },
      plugins: [ACP_PLUGIN],
      // changes to the sent prefix wait: no batch is big enough, break-even and pressure are off
      globalFiles: { "acp.jsonc": JSON.stringify({ commit: { minTokens: 1_000_000, breakEven: 0, pressureTokens: 0 } }) },
    });
    server = await ws.serve();
  }, RUN_TIMEOUT);
  afterAll(async () => {
    await server?.stop();
    await ws?.dispose();
  });

  it("a rule file added between turns applies from the next turn; the sent prefix changes only as the commit policy allows, also after acp.jsonc changes", async () => {
    ws.model.enqueue({ toolCalls: [cat("call_a", "a.log")] }, { text: "Read a." });
    const first = await ws.run("Show a.log", { attach: server.url, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, first);
    const sessionID = first.sessionID!;
    const sent = first.requests.at(-1)!;
    expect(toolResult(sent, "call_a")).toContain("ALPHA line 40");

    // the project's rule folder did not exist when the host started
    const rules = path.join(ws.projectDir, ".opencode", "acp", "rules");
    fs.mkdirSync(rules, { recursive: true });
    fs.writeFileSync(path.join(rules, "clear-bash.yaml"), CLEAR_BASH);
    await new Promise((r) => setTimeout(r, 1100)); // the plugin looks at most once a second

    ws.model.enqueue({ toolCalls: [cat("call_b", "b.log")] }, { text: "Read b." });
    const second = await ws.run("Now show b.log", { attach: server.url, session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, second);
    expect(second.requests).toHaveLength(2);
    // the new rule applies to what the model has not seen yet
    const b = toolResult(second.requests[1], "call_b") ?? "";
    expect(b).not.toContain("BRAVO line");
    expect(b).toContain("cleared");
    // what was sent before the change goes out byte for byte: the whole previous request is a prefix
    for (const req of second.requests) {
      expect(JSON.stringify(req.body.messages.slice(0, sent.body.messages.length)), `request ${req.seq}`).toBe(JSON.stringify(sent.body.messages));
      expect(toolResult(req, "call_a")).toContain("ALPHA line 40");
    }

    // the project's acp.jsonc lets every change commit at once; a broken rule file beside the good one:
    // the turn works, the held-back prune goes out, the problem is told once, the valid rule still applies
    fs.writeFileSync(path.join(ws.projectDir, ".opencode", "acp.jsonc"), JSON.stringify({ commit: { minTokens: 0 } }));
    fs.writeFileSync(path.join(rules, "typo.yaml"), BROKEN);
    await new Promise((r) => setTimeout(r, 1100));
    ws.model.enqueue({ toolCalls: [cat("call_c", "c.log")] }, { text: "Read c." });
    const third = await ws.run("And c.log", { attach: server.url, session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, third);
    expect(toolResult(third.requests[1], "call_c")).not.toContain("CHARLIE line");
    for (const req of third.requests) expect(toolResult(req, "call_a"), `request ${req.seq}`).not.toContain("ALPHA line");
    const notices = ignoredTexts(await ws.exportSession(sessionID)).filter((t) => t.includes("configuration problems"));
    expect(notices, JSON.stringify(notices)).toHaveLength(1);
    expect(notices[0]).toContain(`${path.join(rules, "typo.yaml")}:7:19`);
    expect(notices[0]).not.toContain("clear-bash.yaml");
  }, 3 * RUN_TIMEOUT);
});
