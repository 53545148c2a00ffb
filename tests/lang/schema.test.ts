// schemas/rules.schema.json is generated from the catalogue (npm run schemas): editors complete and
// check fact, operator and action names and each action's options. The loader validates the shape
// (the same generator without the names) and reports names through its semantic checks.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ACTION_NAMES } from "../../src/lang/actions.js";
import { FACT_NAMES } from "../../src/lang/facts.js";
import { rulesSchema, rulesSchemaText } from "../../src/lang/schema.js";

const editorSchema = new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync("schemas/rules.schema.json", "utf8")));
const rule = (when: unknown, then: unknown = { action: "clear" }) => ({ rules: { r: { phase: "age", description: "d", when, then } } });
const leaf = (fact: string, operator: string, value: unknown) => ({ fact, operator, value });

describe("schemas/rules.schema.json", () => {
  it("is what npm run schemas generates from the catalogue (rerun it after adding a fact, operator, action or option)", () => {
    expect(readFileSync("schemas/rules.schema.json", "utf8")).toBe(rulesSchemaText());
  });

  it("names every fact and action of the catalogue", () => {
    const text = readFileSync("schemas/rules.schema.json", "utf8");
    for (const name of [...FACT_NAMES, ...ACTION_NAMES]) expect(text).toContain(`"const": "${name}"`);
  });

  it("accepts every built-in rule file", () => {
    for (const f of readdirSync("rules").filter((f) => f.endsWith(".yaml"))) {
      const ok = editorSchema(parse(readFileSync(join("rules", f), "utf8")));
      expect(ok, `${f}: ${JSON.stringify(editorSchema.errors?.slice(0, 3))}`).toBe(true);
    }
  });

  it("checks names and options: unknown fact, operator, action, option, a bad option value, a bad `by`", () => {
    expect(editorSchema(rule(leaf("tool", "not:not:in", ["a"])))).toBe(true);
    expect(editorSchema(rule(leaf("tool", "equal", "a"), { action: "truncate", mode: "first-line", overrideProtection: true }))).toBe(true);
    expect(editorSchema(rule(leaf("tool", "equal", "a"), { action: "supersede", by: { all: [leaf("tool", "equal", "b")] } }))).toBe(true);
    for (const bad of [
      rule(leaf("tools", "equal", "a")),
      rule(leaf("tool", "equals", "a")),
      rule(leaf("tool", "not:equals", "a")),
      rule(leaf("tool", "equal", "a"), { action: "clearr" }),
      rule(leaf("tool", "equal", "a"), { action: "clear", mode: "first-line" }),
      rule(leaf("tool", "equal", "a"), { action: "truncate", mode: "middle" }),
      rule(leaf("tool", "equal", "a"), { action: "distill" }),
      rule(leaf("tool", "equal", "a"), { action: "supersede", by: { all: [leaf("nope", "equal", "b")] } }),
    ])
      expect(editorSchema(bad), JSON.stringify(bad)).toBe(false);
  });

  it("without the catalogue it is the shape only: any name passes (the loader's checks report it with a did-you-mean)", () => {
    const shape = new Ajv({ allErrors: true, strict: false }).compile(rulesSchema({ catalogue: false }));
    expect(shape(rule(leaf("tools", "equals", "a"), { action: "clearr", anything: 1 }))).toBe(true);
    expect(shape(rule({ all: [] }))).toBe(false);
  });
});
