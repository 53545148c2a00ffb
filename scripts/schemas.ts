// npm run schemas: writes schemas/rules.schema.json from the catalogue in src/lang (fact, operator
// and action names, each action's options). tests/lang/schema.test.ts fails until it is rerun
// after a change to the catalogue.
import { writeFileSync } from "node:fs";
import { rulesSchemaText } from "../src/lang/schema.js";

writeFileSync("schemas/rules.schema.json", rulesSchemaText());
console.log("schemas/rules.schema.json written");
