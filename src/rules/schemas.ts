// ajv validators for the shipped JSON Schemas, compiled once. Rule files are validated against the
// shape of schemas/rules.schema.json (the same generator, without the catalogue of names: the
// loader's semantic checks report unknown names and options with a did-you-mean).
import { readFileSync } from "node:fs";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { rulesSchema } from "../lang/schema.js";
import { packagePath } from "./paths.js";
import type { Problem } from "./problems.js";
import { didYouMean } from "./problems.js";
import type { SourceDoc } from "./source.js";

let ajv: Ajv | undefined;
const validators = new Map<string, ValidateFunction>();

export type SchemaName = "rules" | "preset" | "acp-config" | "fixture";

function validator(name: SchemaName | `${SchemaName}.schema.json#${string}`): ValidateFunction {
  if (!ajv) {
    ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
    ajv.addSchema(rulesSchema({ catalogue: false }), "rules.schema.json");
    for (const n of ["preset", "acp-config", "fixture"]) ajv.addSchema(JSON.parse(readFileSync(packagePath("schemas", `${n}.schema.json`), "utf8")), `${n}.schema.json`);
  }
  let v = validators.get(name);
  if (!v) validators.set(name, (v = ajv.getSchema(name.includes("#") ? name : `${name}.schema.json`)!));
  return v;
}

/** The condition definition of the rule file schema (for `then.by`, which the file schema leaves open). */
export const conditionValidator = () => validator("rules.schema.json#/definitions/condition");

/** Keeps the most useful errors: drops if/then/oneOf umbrellas when a specific error exists. */
function prune(errors: ErrorObject[]): ErrorObject[] {
  const specific = errors.filter((e) => !["if", "oneOf", "anyOf"].includes(e.keyword));
  const seen = new Set<string>();
  return (specific.length ? specific : errors).filter((e) => {
    const k = `${e.instancePath}|${e.keyword}|${JSON.stringify(e.params)}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
}

/** Problems of `doc` against a shipped schema, or a definition in one (`fixture.schema.json#/definitions/fixed`). */
export function schemaProblems(name: SchemaName | `${SchemaName}.schema.json#${string}`, doc: SourceDoc): Problem[] {
  const v = validator(name);
  if (v(doc.data)) return [];
  return prune(v.errors ?? []).map((e) => {
    let pointer = e.instancePath;
    let message = `${pointer || "/"} ${e.message}`;
    let key = false;
    if (e.keyword === "additionalProperties") {
      const prop = (e.params as any).additionalProperty as string;
      const known = Object.keys(((e.parentSchema as any)?.properties ?? {}) as object);
      pointer = `${pointer}/${prop}`;
      message = `unknown property "${prop}" in ${e.instancePath || "/"}${didYouMean(prop, known)}`;
      key = true;
    } else if (e.keyword === "enum") {
      message = `${pointer} must be one of ${((e.params as any).allowedValues as unknown[]).map((x) => JSON.stringify(x)).join(", ")}`;
    } else if (e.keyword === "required") {
      message = `${e.instancePath || "/"} is missing required property "${(e.params as any).missingProperty}"`;
    }
    return { file: doc.file, ...doc.locate(pointer, key), severity: "error" as const, message, ruleId: `schema/${e.keyword}`, pointer };
  }).sort((a, b) => a.line - b.line || a.col - b.col); // the file's order, not the schema's
}
