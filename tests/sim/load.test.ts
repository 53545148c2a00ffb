import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSession, loadSessions } from "../../src/sim/load.js";

const dir = mkdtempSync(join(tmpdir(), "acp-sim-load-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, content: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

const compactedTool = {
  id: "prt_2",
  type: "tool",
  tool: "bash",
  state: { status: "completed", input: {}, output: "x", time: { start: 1, end: 2, compacted: 99 } },
};
const messages = [
  { info: { id: "msg_1", sessionID: "ses_a", role: "user" }, parts: [{ id: "prt_1", type: "text", text: "hi" }] },
  { info: { id: "msg_2", sessionID: "ses_a", role: "assistant" }, parts: [compactedTool] },
];

describe("loadSession", () => {
  it("reads a corpus session and takes its id", () => {
    const s = loadSession(write("corpus.json", { id: "corpus-id", source: {}, meta: {}, stats: {}, messages }));
    expect(s.id).toBe("corpus-id");
    expect(s.messages).toHaveLength(2);
  });

  it("reads an `opencode export` file ({info, messages}) and takes info.id", () => {
    const s = loadSession(write("export.json", { info: { id: "ses_export" }, messages }));
    expect(s.id).toBe("ses_export");
  });

  it("reads a file that begins with a UTF-8 byte order mark", () => {
    const s = loadSession(write("bom.json", `\uFEFF${JSON.stringify({ id: "with-bom", messages })}`));
    expect(s.id).toBe("with-bom");
  });

  it("removes every state.time.compacted mark: the raw history is the input", () => {
    const s = loadSession(write("marked.json", { info: { id: "x" }, messages }));
    expect(s.messages[1].parts[0].state?.time).toEqual({ start: 1, end: 2 });
  });

  it("names the file when it is missing, not JSON, or not a session", () => {
    expect(() => loadSession(join(dir, "absent.json"))).toThrow(/absent\.json: file not found$/);
    expect(() => loadSession(write("broken.json", "{ not json"))).toThrow(/broken\.json:1:3: not valid JSON \(.+\)$/);
    expect(() => loadSession(write("other.json", { hello: 1 }))).toThrow(/other\.json: not a session/);
    expect(() => loadSession(write("badmsg.json", { messages: [{ info: { id: "m" } }] }))).toThrow(/badmsg\.json: messages\[0\]/);
    expect(() => loadSession(write("badpart.json", { messages: [{ info: { id: "m", role: "user" }, parts: [{ type: "text" }] }] }))).toThrow(
      /badpart\.json: messages\[0\]\.parts\[0\]/,
    );
  });

  it("JSON that does not parse: file:line:col of the first error, on one line", () => {
    const line = (text: string) => {
      try {
        loadSession(write("where.json", text));
      } catch (e) {
        return (e as Error).message.slice(join(dir, "where.json").length);
      }
    };
    expect(line('{\n  "messages": [\n    1,\n  ]\n}')).toMatch(/^:4:3: not valid JSON \([^\n]+\)$/);
    expect(line('{\n  "id": "x",\n  oops: 1\n}')).toMatch(/^:3:3: not valid JSON \([^\n]+\)$/);
    expect(line('{\n  "messages": [')).toMatch(/^:2:16: not valid JSON \([^\n]+\)$/);
  });

  it("a FIFO or a device is not read (no blocking, no reading forever): one line naming the file", () => {
    const fifo = join(dir, "pipe.json");
    execFileSync("mkfifo", [fifo]);
    expect(() => loadSession(fifo)).toThrow(new RegExp(`^${fifo}: is a FIFO, not a regular file; it is not read$`));
    expect(() => loadSessions(fifo)).toThrow(/pipe\.json: is a FIFO, not a regular file/);
    expect(() => loadSessions("/dev/zero")).toThrow(/^\/dev\/zero: is a character device, not a regular file; it is not read$/);
  });
});

describe("loadSessions", () => {
  it("loads every .json file of a folder, sorted by name, and nothing else", () => {
    const folder = join(dir, "folder");
    mkdirSync(folder);
    writeFileSync(join(folder, "b.json"), JSON.stringify({ id: "b", messages }));
    writeFileSync(join(folder, "a.json"), JSON.stringify({ id: "a", messages }));
    writeFileSync(join(folder, "notes.txt"), "not a session");
    expect(loadSessions(folder).map((s) => s.id)).toEqual(["a", "b"]);
  });

  it("with a list for what is skipped: a folder's unreadable files are each named with the reason, the rest load", () => {
    const folder = join(dir, "mixed");
    mkdirSync(folder);
    writeFileSync(join(folder, "a.json"), JSON.stringify({ id: "a", messages }));
    writeFileSync(join(folder, "zz.json"), "{");
    symlinkSync(join(folder, "gone"), join(folder, "dangling.json"));
    symlinkSync(join(folder, "loop.json"), join(folder, "loop.json"));
    mkdirSync(join(folder, "d.json"));
    execFileSync("mkfifo", [join(folder, "f.json")]);
    const skipped: string[] = [];
    expect(loadSessions(folder, skipped).map((s) => s.id)).toEqual(["a"]);
    expect(skipped).toEqual([
      `${join(folder, "d.json")}: is a folder, not a file`,
      `${join(folder, "dangling.json")}: file not found`,
      `${join(folder, "f.json")}: is a FIFO, not a regular file; it is not read`,
      `${join(folder, "loop.json")}: is a symbolic link loop`,
      expect.stringMatching(new RegExp(`^${join(folder, "zz.json")}:1:2: not valid JSON \\(.+\\)$`)),
    ]);
    // without the list, the first bad file throws (explain, scripts)
    expect(() => loadSessions(folder)).toThrow(/d\.json: is a folder, not a file/);
    rmSync(join(folder, "a.json"));
    expect(() => loadSessions(folder, [])).toThrow(new RegExp(`^${folder}: none of the folder's 5 \\.json files could be read as a session$`));
  });

  it("loads a single file as a list of one", () => {
    expect(loadSessions(write("single.json", { id: "one", messages }))).toHaveLength(1);
  });

  it("rejects an empty folder and a missing path", () => {
    const empty = join(dir, "empty");
    mkdirSync(empty);
    expect(() => loadSessions(empty)).toThrow(/empty: folder holds no \.json/);
    expect(() => loadSessions(join(dir, "nowhere"))).toThrow(/nowhere: file not found$/);
  });
});
