// The layer order of src/ (lang → graph → rules → engine → store → host / cli / sim) and no cycles,
// checked by dependency-cruiser with the repository's .dependency-cruiser.cjs (`npx depcruise src` prints
// the same). The second test plants new violations in a copy of src/ and requires each to fail,
// so that the rules cannot silently stop matching.
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cruise } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { afterAll, describe, expect, it } from "vitest";

const REPO = resolve(".");
const CONFIG = join(REPO, ".dependency-cruiser.cjs");

/** `rule: from → to` for every violation of the rules over `root`/src. */
async function violations(root: string): Promise<string[]> {
  const options = await extractDepcruiseOptions(CONFIG);
  const tsConfig = extractTSConfig(join(root, "tsconfig.json"));
  const result = await cruise(["src"], { ...options, baseDir: root }, {}, { tsConfig });
  if (typeof result.output === "string") throw new Error(result.output);
  return result.output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (cycle ${v.cycle.map((c) => c.name).join(" → ")})` : ""}`).sort();
}

const tmp = mkdtempSync(join(tmpdir(), "acp-layers-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("layers (.dependency-cruiser.cjs)", () => {
  it("src/ keeps the layer order and has no cycles", async () => {
    expect(await violations(REPO)).toEqual([]);
  }, 60_000);

  it("a new violation of each kind fails", async () => {
    cpSync(join(REPO, "src"), join(tmp, "src"), { recursive: true });
    cpSync(join(REPO, "tsconfig.json"), join(tmp, "tsconfig.json"));
    symlinkSync(join(REPO, "node_modules"), join(tmp, "node_modules"), "dir");
    // the language imports the graph and the rules
    writeFileSync(join(tmp, "src/lang/planted.ts"), 'import type { PartNode } from "../graph/graph.js";\nimport { PHASES } from "../rules/types.js";\nexport type Planted = PartNode;\nexport const planted = PHASES;\n');
    // graph imports the engine
    writeFileSync(join(tmp, "src/graph/planted.ts"), 'import { createPruner } from "../engine/pruner.js";\nexport const planted = createPruner;\n');
    // rules import the engine: the loader (which once had an exception for the catalogues) and another rules file
    appendFileSync(join(tmp, "src/rules/load.ts"), '\nimport { FACTS } from "../engine/facts.js";\nexport const plantedFacts = FACTS;\n');
    appendFileSync(join(tmp, "src/rules/resolve.ts"), '\nimport type { AcpPruner } from "../engine/pruner.js";\nexport type Planted = AcpPruner;\n');
    // the engine imports the plugin
    writeFileSync(join(tmp, "src/engine/planted.ts"), 'import { createLogger } from "../host/log.js";\nexport const planted = createLogger;\n');
    // the engine imports the store, reads a file itself, and the store imports the plugin
    writeFileSync(join(tmp, "src/engine/planted-store.ts"), 'import { saveState } from "../store/state-files.js";\nexport const planted = saveState;\n');
    writeFileSync(join(tmp, "src/engine/planted-fs.ts"), 'import { readFileSync } from "node:fs";\nexport const planted = readFileSync;\n');
    writeFileSync(join(tmp, "src/store/planted.ts"), 'import { createLogger } from "../host/log.js";\nexport const planted = createLogger;\n');
    // a cycle: state.ts ↔ manual.ts again
    appendFileSync(join(tmp, "src/engine/state.ts"), '\nimport type { ManualRequest } from "./manual.js";\nexport type Planted = ManualRequest;\n');
    const found = await violations(tmp);
    const rules = new Set(found.map((v) => v.split(":")[0]));
    expect([...rules].sort(), found.join("\n")).toEqual(["engine-below-adapters", "engine-no-file-io", "graph-above-lang", "lang-is-the-bottom", "no-circular", "rules-below-engine", "store-below-adapters"]);
    expect(found).toContain("lang-is-the-bottom: src/lang/planted.ts → src/graph/graph.ts");
    expect(found).toContain("lang-is-the-bottom: src/lang/planted.ts → src/rules/types.ts");
    expect(found).toContain("graph-above-lang: src/graph/planted.ts → src/engine/pruner.ts");
    expect(found).toContain("rules-below-engine: src/rules/load.ts → src/engine/facts.ts");
    expect(found).toContain("rules-below-engine: src/rules/resolve.ts → src/engine/pruner.ts");
    expect(found).toContain("engine-below-adapters: src/engine/planted.ts → src/host/log.ts");
    expect(found).toContain("engine-below-adapters: src/engine/planted-store.ts → src/store/state-files.ts");
    expect(found).toContain("engine-no-file-io: src/engine/planted-fs.ts → fs");
    expect(found).toContain("store-below-adapters: src/store/planted.ts → src/host/log.ts");
    expect(found).toContain("no-circular: src/engine/manual.ts → src/engine/state.ts (cycle src/engine/state.ts → src/engine/manual.ts)");
  }, 60_000);
});
