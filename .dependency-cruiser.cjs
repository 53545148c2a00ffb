// Layer order of src/ (docs/architecture.md): lang → graph → rules → engine → store → host / cli / sim;
// imports point down that order only, and there are no cycles. tests/layers.test.ts runs this in
// npm test; `npx depcruise src` prints the same. Type-only imports count (tsPreCompilationDeps).

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "A cycle ties modules together; move the shared piece (often a type) into its own module.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "lang-is-the-bottom",
      comment: "src/lang (the rule language: facts, operators, actions, keys, paths, conditions) imports no other layer.",
      severity: "error",
      from: { path: "^src/lang/" },
      to: { path: "^src/(graph|rules|engine|store|sim|host|cli)/" },
    },
    {
      name: "graph-above-lang",
      comment: "src/graph (messages, parts, the graph, the prompt as sent) may use src/lang only.",
      severity: "error",
      from: { path: "^src/graph/" },
      to: { path: "^src/(rules|engine|store|sim|host|cli)/" },
    },
    {
      name: "rules-below-engine",
      comment: "src/rules loads and validates rule files and config against the language; it may use src/lang and src/graph.",
      severity: "error",
      from: { path: "^src/rules/" },
      to: { path: "^src/(engine|store|sim|host|cli)/" },
    },
    {
      name: "engine-below-adapters",
      comment: "src/engine is used by store, host, cli and sim, and uses none of them (persistence comes in as SessionStore / StatsStore).",
      severity: "error",
      from: { path: "^src/engine/" },
      to: { path: "^src/(store|sim|host|cli)/" },
    },
    {
      name: "engine-no-file-io",
      comment: "The engine decides; files are read and written by src/store (state, stats) and src/rules (rule files, config).",
      severity: "error",
      from: { path: "^src/engine/" },
      to: { dependencyTypes: ["core"], path: "^(node:)?fs(/promises)?$" },
    },
    {
      name: "store-below-adapters",
      comment: "src/store (state and stats on files) is used by host, cli and sim, and uses none of them.",
      severity: "error",
      from: { path: "^src/store/" },
      to: { path: "^src/(sim|host|cli)/" },
    },
    {
      name: "sim-no-adapters",
      comment: "src/sim (the measurement library) may use the engine, not the plugin or the CLI.",
      severity: "error",
      from: { path: "^src/sim/" },
      to: { path: "^src/(host|cli)/" },
    },
    {
      name: "host-not-cli",
      comment: "The plugin does not load the CLI (nor the measurement library).",
      severity: "error",
      from: { path: "^src/host/" },
      to: { path: "^src/(cli|sim)/" },
    },
    {
      name: "not-to-unresolvable",
      comment: "An import that resolves to nothing would hide a dependency from these rules.",
      severity: "error",
      from: { path: "^src/" },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"], extensions: [".ts", ".js", ".d.ts", ".json"] },
  },
};
