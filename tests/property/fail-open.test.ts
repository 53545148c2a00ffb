// Fail-open: transform never throws to the host, and when it swallows an error the messages go
// out exactly as they came. Three sources of errors: host-impossible garbage, a fault injected
// at a random point of a call (a property read that throws once), and a state folder that cannot
// be written. After an injected fault the session goes on: every invariant holds on later calls.
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fc, test } from "@fast-check/vitest";
import { afterAll, describe, expect, it } from "vitest";
import type { AcpPruner } from "../../src/engine/pruner.js";
import { createPruner } from "../../src/index.js";
import type { Message } from "../../src/graph/types.js";
import { buildSession, flagsFromEnv, garbageArb, scheduleArb, sessionSpecArb } from "./arbitraries.js";
import { ErrorSink, fcParams, newStats, PrunerPool, replayAndCheck, runsFor, timeoutFor, TMP } from "./invariants.js";

const sink = new ErrorSink();
const root = mkdtempSync(join(TMP, "acp-prop-failopen-"));
const PRESETS = ["compact", "balanced", "verbose"];
const pools = PRESETS.map((preset) => new PrunerPool(() => createPruner({ preset, stateDir: join(root, preset), onError: sink.onError })));
const GARBAGE = runsFor("garbage");
const FAULTS = runsFor("faults");
const stats = newStats();
let garbage = 0;
let garbageErrors = 0;
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  console.log(`fail-open: ${garbage} garbage histories (${garbageErrors} with a swallowed error); ${JSON.stringify({ calls: stats.calls, faults: stats.faults, faultsCaught: stats.faultsCaught, decided: stats.decided })}`);
});

/** Makes `obj[prop]` throw on its `at`-th read (once); returns the function that disarms it. */
function throwOnce(obj: Record<string, unknown>, prop: string, at: number): () => void {
  let value = obj[prop];
  let reads = 0;
  let armed = true;
  Object.defineProperty(obj, prop, {
    enumerable: true,
    configurable: true,
    get() {
      if (armed && ++reads === at) throw new Error(`injected fault: read ${at} of ${prop}`);
      return value;
    },
    set(v) {
      value = v;
    },
  });
  return () => void (armed = false);
}

const faultArb = fc.record({ call: fc.nat(40), target: fc.nat(1000), prop: fc.constantFrom("state", "text", "type", "id", "tool", "parts", "info"), at: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 6 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }) }) });

describe("fail-open", () => {
  test.prop([fc.nat(PRESETS.length - 1), garbageArb], fcParams(GARBAGE))(
    "garbage histories: transform never throws; a swallowed error leaves them unchanged",
    (p, g) => {
      garbage++;
      const pruner = pools[p].get();
      const messages = JSON.parse(JSON.stringify(g)) as Message[];
      const before = JSON.stringify(messages);
      sink.take();
      expect(() => pruner.transform(messages)).not.toThrow();
      expect(() => pruner.transform(messages)).not.toThrow();
      const errors = sink.take();
      if (errors.length) {
        garbageErrors++;
        expect(JSON.stringify(messages)).toBe(before);
      }
    },
    timeoutFor(GARBAGE, 10),
  );

  test.prop([fc.nat(PRESETS.length - 1), sessionSpecArb({ ...flagsFromEnv(), dupPartIds: false }), scheduleArb, faultArb], fcParams(FAULTS))(
    "a fault injected anywhere in a call: caught, messages unchanged; every invariant holds on the later calls",
    (p, spec, schedule, fault) => {
      const pruner: AcpPruner = pools[p].get();
      const messages = buildSession(spec);
      const inject = {
        at: fault.call,
        apply(input: Message[]) {
          if (fault.prop === "parts" || fault.prop === "info") return throwOnce(input[fault.target % input.length] as unknown as Record<string, unknown>, fault.prop, fault.at);
          const parts = input.flatMap((m) => m.parts);
          if (!parts.length) return () => {};
          return throwOnce(parts[fault.target % parts.length] as unknown as Record<string, unknown>, fault.prop, fault.at);
        },
      };
      const violations = replayAndCheck(messages, { ...schedule, restartAt: undefined }, { label: `fault ${PRESETS[p]} ${fault.prop}@${fault.at}`, pruner, stateDir: join(root, PRESETS[p]), inject, sink }, stats);
      expect(violations, violations.join("\n")).toEqual([]);
    },
    timeoutFor(FAULTS, 80),
  );

  it("the injected faults hit transform (the checks are not vacuous)", () => {
    if (FAULTS >= 20) expect(stats.faultsCaught).toBeGreaterThan(0);
  });

});
