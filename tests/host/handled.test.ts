// A handled /acp command fails only once the host has published its answer (handled.ts NoticeWatch).
import { afterEach, describe, expect, it, vi } from "vitest";
import { NOTICE_WAIT_MS, NoticeWatch } from "../../src/host/handled.js";

const part = (over: Record<string, unknown> = {}) => ({ id: "prt_1", sessionID: "ses_a", messageID: "msg_1", type: "text", text: "acp stats: …", ignored: true, time: { start: 1, end: 1 }, ...over });

describe("NoticeWatch", () => {
  afterEach(() => vi.useRealTimers());

  it("resolves when the host publishes the finished answer of that session, not before", async () => {
    vi.useFakeTimers();
    const w = new NoticeWatch();
    let done = false;
    void w.expect("ses_a", "acp stats: …").then(() => (done = true));
    w.seen(part({ sessionID: "ses_b" })); // another session
    w.seen(part({ text: "something else" }));
    w.seen(part({ time: { start: 1 } })); // not finished yet
    w.seen({ ...part(), type: "reasoning" });
    w.seen(undefined);
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(false);
    w.seen(part());
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(true);
  });

  it("gives up after the cap when the host never says (a later host may publish otherwise)", async () => {
    vi.useFakeTimers();
    const w = new NoticeWatch();
    let done = false;
    void w.expect("ses_a", "acp stats: …").then(() => (done = true));
    await vi.advanceTimersByTimeAsync(NOTICE_WAIT_MS - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });

  it("answers two commands of one session each by its own text", async () => {
    vi.useFakeTimers();
    const w = new NoticeWatch();
    const done: string[] = [];
    void w.expect("ses_a", "one").then(() => done.push("one"));
    void w.expect("ses_a", "two").then(() => done.push("two"));
    w.seen(part({ text: "two" }));
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toEqual(["two"]);
    w.seen(part({ text: "one" }));
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toEqual(["two", "one"]);
  });
});
