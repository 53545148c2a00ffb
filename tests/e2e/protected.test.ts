// Protected outputs and the context_prune tool in the real host.
//
// Protected outputs (config protectedTools / protectedFiles, e.g. **/.env) never get an [acp:tN]
// id, so the model cannot name them: a made-up id is refused as "unknown id" with the list of
// ids that exist. The tool's "protected" refusal is reached when an output got its id while it
// was unprotected and the user protects it later (here: protectedFiles gains the file between
// two opencode processes); the model's discard by that id is then refused with the documented
// message, and the output stays in full; an unknown id's list of what is available leaves it out.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResult, type RecordedRequest, type ScriptedToolCall } from "./fake-model.js";
import { ACP_PLUGIN, createWorkspace, pluginLoadErrors, type RunResult, type Workspace } from "./harness.js";
import { call, expectCleanRun } from "./expect-run.js";

const RUN_TIMEOUT = 150_000;
const ENV = Array.from({ length: 20 }, (_, i) => `SECRET_KEY_${i + 1}=value-of-a-protected-secret-${i + 1}`).join("\n");
const BIG = Array.from({ length: 20 }, (_, i) => `big line ${i + 1}: ordinary content that is not protected at first`).join("\n");

function idIn(req: RecordedRequest, callID: string): string | undefined {
  return /\[acp:(t[0-9a-z]+)\]\s*$/.exec(toolResult(req, callID) ?? "")?.[1];
}


describe("protected outputs and context_prune in the real host", () => {
  let ws: Workspace;
  let sessionID: string;
  let bigId: string | undefined;
  let bigOriginal: string;

  beforeAll(async () => {
    if (!fs.existsSync(ACP_PLUGIN)) throw new Error(`${ACP_PLUGIN} is missing: run \`npm run build\` before the e2e tests`);
    // ids from the first call (the default waits for a 20K-token prompt)
    ws = await createWorkspace({ files: { ".env": `${ENV}\n`, "big.txt": `${BIG}\n` }, plugins: [ACP_PLUGIN], globalFiles: { "acp.jsonc": JSON.stringify({ idsFromTokens: 0 }) } });
  });
  afterAll(async () => ws?.dispose());

  it("a protected file's output gets no id; a made-up id is refused as unknown, listing the real ones", async () => {
    ws.model.enqueue(
      { toolCalls: [call("call_env", "read", { filePath: path.join(ws.projectDir, ".env") }), call("call_big", "read", { filePath: path.join(ws.projectDir, "big.txt") })] },
      // The .env output has no id to cite; the model tries one anyway.
      { toolCalls: [call("call_p1", "context_prune", { action: "discard", targets: ["t99"] })] },
      { text: "Could not prune that." },
    );
    const run = await ws.run("Read .env and big.txt", { timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    expect(run.requests).toHaveLength(3);
    sessionID = run.sessionID!;

    const env = toolResult(run.requests[1], "call_env")!;
    expect(env).toContain("SECRET_KEY_20=");
    expect(env, "protected output carries an id").not.toMatch(/\[acp:/);
    bigId = idIn(run.requests[1], "call_big");
    expect(bigId, "big.txt's output has an id").toBeDefined();
    bigOriginal = toolResult(run.requests[1], "call_big")!;

    const refusal = toolResult(run.requests[2], "call_p1")!;
    expect(refusal).toContain("t99: unknown id");
    expect(refusal).toMatch(new RegExp(`Available: .*\\b${bigId}\\b`));
    expect(refusal).toContain("not pruned");
    // nothing changed
    expect(toolResult(run.requests[2], "call_env")).toBe(env);
    expect(toolResult(run.requests[2], "call_big")).toBe(bigOriginal);
  }, RUN_TIMEOUT);

  it("after the user protects the file, a discard by its id is refused with the documented message", async () => {
    expect(bigId).toBeDefined();
    // The global config dir is seeded by the harness, so writing there starts no npm install.
    fs.writeFileSync(path.join(ws.home, ".config", "opencode", "acp.jsonc"), JSON.stringify({ idsFromTokens: 0, protectedFiles: ["**/big.txt"] }));
    ws.model.enqueue(
      (req) => {
        // the id is still shown on the output (ids are never reassigned); the model uses it
        const shown = idIn(req, "call_big");
        if (shown !== bigId) throw new Error(`big.txt id changed: ${bigId} -> ${shown}`);
        return { toolCalls: [call("call_p2", "context_prune", { action: "discard", targets: [bigId!] })] };
      },
      // an unknown id: the list of what is available must not offer big.txt now
      { toolCalls: [call("call_p3", "context_prune", { action: "discard", targets: ["t99"] })] },
      { text: "It is protected." },
    );
    const run = await ws.run("Drop big.txt from your context", { session: sessionID, timeoutMs: RUN_TIMEOUT });
    expectCleanRun(ws, run);
    expect(run.requests).toHaveLength(3);

    const refusal = toolResult(run.requests[1], "call_p2")!;
    expect(refusal).toContain(`${bigId}: protected`);
    expect(refusal).toContain("protectedTools / protectedFiles in acp.jsonc");
    expect(refusal).toContain("**/big.txt"); // the help lists the protected globs
    expect(toolResult(run.requests[1], "call_big")).toBe(bigOriginal);
    expect(toolResult(run.requests[1], "call_big")).toContain("big line 20");
    expect(toolResult(run.requests[2], "call_p3")).toBe("Some targets were not pruned:\nt99: unknown id. Available: none");
    expect(toolResult(run.requests[2], "call_big")).toBe(bigOriginal);
  }, RUN_TIMEOUT);
});
