// The JSON Schema of a rule file, generated from the catalogue (`npm run schemas` writes
// schemas/rules.schema.json; tests/lang/schema.test.ts requires the committed file to equal it).
// With the catalogue, editors complete and check fact, operator and action names and each action's
// options. Without it, it is the shape only: what the loader validates with ajv before its semantic
// checks report unknown names and options with a location and a did-you-mean (rules/load.ts).
import { ACTION_DECLS } from "./actions.js";
import { FACT_DECLS } from "./facts.js";
import { KEY_FILTERS } from "./key.js";
import { OPERATORS } from "./operators.js";
import { PHASES } from "./phases.js";

type Schema = Record<string, unknown>;

const CONDITION = { $ref: "#/definitions/condition" };

/** The names of a catalogue as `const` choices with their descriptions (editors show them while completing). */
const choices = (items: readonly { name: string; description: string }[]): Schema[] => items.map((i) => ({ const: i.name, description: i.description }));

function actionOptions(): Schema[] {
  return ACTION_DECLS.map((a) => {
    // `by` is a condition: editors check it as one (the loader validates it against the same definition).
    const properties: Schema = { action: true };
    for (const [k, v] of Object.entries(a.options.properties)) properties[k] = k === "by" ? { description: (v as Schema).description, allOf: [CONDITION] } : v;
    return {
      if: { properties: { action: { const: a.name } }, required: ["action"] },
      then: { properties, additionalProperties: false, ...(a.options.required ? { required: a.options.required } : {}) },
    };
  });
}

export function rulesSchema(opts: { catalogue: boolean } = { catalogue: true }): Schema {
  const { catalogue } = opts;
  const filters = Object.keys(KEY_FILTERS).join(", ");
  const operatorNames = OPERATORS.map((o) => o.name).join("|");
  const then: Schema = {
    type: "object",
    required: ["action"],
    properties: { action: { type: "string", ...(catalogue ? { description: "what to do with the parts matched", anyOf: choices(ACTION_DECLS) } : {}) } },
    ...(catalogue ? { allOf: actionOptions() } : {}),
  };
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    $id: "https://opencode-acp.dev/schemas/rules.schema.json",
    title: "opencode-acp rule file",
    ...(catalogue ? { $comment: "Generated from src/lang by `npm run schemas`; do not edit." } : {}),
    type: "object",
    additionalProperties: false,
    required: ["rules"],
    properties: {
      $schema: { type: "string" },
      rules: {
        type: "object",
        propertyNames: { pattern: "^[a-z][a-z0-9-]*$" },
        additionalProperties: { $ref: "#/definitions/rule" },
      },
    },
    definitions: {
      rule: {
        type: "object",
        additionalProperties: false,
        required: ["phase", "description", "when", "then"],
        properties: {
          phase: { enum: [...PHASES] },
          description: { type: "string", minLength: 1 },
          key: { type: "string", minLength: 1, description: catalogue ? `group key template, e.g. file:{input.filePath|path}; filters: ${filters}; {x?} = optional` : "group key template, e.g. file:{input.filePath|path}" },
          params: { type: "object", description: "tunables read by conditions through {fact: params, path: $.name}" },
          commit: { enum: ["batch", "immediate"], deprecated: true, description: "deprecated, ignored: prefix changes commit when the cache breaks anyway or the batch pays off" },
          when: CONDITION,
          then,
        },
      },
      condition: {
        type: "object",
        if: { required: ["all"] },
        then: { properties: { all: { type: "array", minItems: 1, items: CONDITION } }, additionalProperties: false },
        else: {
          if: { required: ["any"] },
          then: { properties: { any: { type: "array", minItems: 1, items: CONDITION } }, additionalProperties: false },
          else: {
            if: { required: ["not"] },
            then: { properties: { not: CONDITION }, additionalProperties: false },
            else: { $ref: "#/definitions/leaf" },
          },
        },
      },
      leaf: {
        type: "object",
        additionalProperties: false,
        required: ["fact", "operator", "value"],
        properties: {
          fact: { type: "string", ...(catalogue ? { anyOf: choices(FACT_DECLS) } : {}) },
          operator: { type: "string", ...(catalogue ? { anyOf: [...choices(OPERATORS), { pattern: `^(not:)+(${operatorNames})$`, description: "not: negates the operator" }] } : {}) },
          value: catalogue ? { description: "a literal, or {fact, path?} to compare with another fact" } : {},
          path: { type: "string", pattern: "^\\$(\\.[A-Za-z_$][\\w$-]*|\\[\\d+\\])*$" },
          params: { type: "object" },
        },
      },
    },
  };
}

/** The text of schemas/rules.schema.json. */
export const rulesSchemaText = (): string => `${JSON.stringify(rulesSchema(), null, 2)}\n`;
