// Random rule sets drawn from the catalogues (facts, operators, actions with valid options):
// 1–5 rules of our own in a YAML rule file, on top of a preset with random toggles of its
// built-in rules and a random configuration, replayed call by call with every invariant checked.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fc, test } from "@fast-check/vitest";
import { afterAll, describe, expect, it } from "vitest";
import { createPruner } from "../../src/index.js";
import { buildSession, flagsFromEnv, GENERATED, ruleFileText, ruleSetArb, scheduleArb, sessionSpecArb } from "./arbitraries.js";
import { ErrorSink, fcParams, newStats, replayAndCheck, runsFor, timeoutFor, TMP } from "./invariants.js";
import { configOf } from "../engine/switch-runs.js";

const sink = new ErrorSink();
const root = mkdtempSync(join(TMP, "acp-prop-rules-"));
const aDir = join(root, "a");
const bDir = join(root, "b");
mkdirSync(bDir, { recursive: true });
const BUILTINS = createPruner({ preset: "verbose" }).resolved.all.map((e) => ({ id: e.spec.id, params: e.spec.params ?? {} }));

const RUNS = runsFor("rules");
const stats = newStats();
let runs = 0;
let userRules = 0;
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  console.log(`random rules: ${runs} sessions, ${userRules} generated rules, ${JSON.stringify(stats)}`);
});


describe("random rule sets on generated sessions", () => {
  test.prop([ruleSetArb(BUILTINS), sessionSpecArb(flagsFromEnv()), scheduleArb], fcParams(RUNS))(
    "replayed call by call, every invariant holds on every call",
    (rs, spec, schedule) => {
      runs++;
      userRules += rs.rules.length;
      const file = join(root, `rules-${runs}.yaml`);
      writeFileSync(file, ruleFileText(rs.rules));
      const config = configOf(rs);
      const make = (stateDir: string) => () => createPruner({ preset: rs.base, config, rules: [file], stateDir, onError: sink.onError });
      const a = make(aDir)();
      // the generator only writes valid rules: a problem here is a generator or loader bug
      const problems = a.problems.filter((p) => p.severity === "error");
      expect(problems.map((p) => `${p.line}:${p.col} ${p.ruleId} ${p.message}`), ruleFileText(rs.rules)).toEqual([]);
      expect(a.resolved.rules.filter((r) => r.id.startsWith("fz-")).length).toBe(rs.rules.length);
      const messages = buildSession(spec);
      const violations = replayAndCheck(messages, schedule, { label: `rules(${rs.base})`, pruner: a, stateDir: aDir, restart: schedule.restartAt === undefined ? undefined : { make: make(bDir), dir: bDir }, sink }, stats);
      rmSync(file, { force: true });
      expect(violations, `${violations.join("\n")}\n--- rule file:\n${ruleFileText(rs.rules)}`).toEqual([]);
    },
    timeoutFor(RUNS, 150),
  );

  it("the generator covers the whole catalogue (extend arbitraries.ts when an action, fact or operator is added)", () => {
    expect([...GENERATED.actions].sort()).toEqual([...GENERATED.catalogue.actions].sort());
    expect(GENERATED.operators.filter((o) => !GENERATED.catalogue.operators.includes(o))).toEqual([]);
    expect(GENERATED.catalogue.operators.filter((o) => !GENERATED.operators.includes(o))).toEqual([]);
    const types = new Set(["string", "number", "boolean", "array", "object"]);
    for (const f of GENERATED.catalogue.facts) {
      expect(types.has(f.type), f.name).toBe(true);
      if (f.type === "object") expect(GENERATED.objectFacts, f.name).toContain(f.name);
    }
  });

  it("the generated rules decided parts with every action", () => {
    if (RUNS < 200) return;
    for (const action of ["supersede", "clear", "truncate", "distill", "strip-input", "mask", "drop", "collapse-code-blocks"]) expect(stats.byAction[action] ?? 0, action).toBeGreaterThan(0);
  });
});
