// The pruner with its state on files: the engine's createPruner, given a state folder and an
// all-time stats file as its stores. What the package exports, the plugin and the CLI use.
import { createPruner as createEnginePruner, type AcpPruner, type PrunerOptions as EngineOptions } from "../engine/pruner.js";
import { allTimeStore } from "./all-time.js";
import { stateFolderStore } from "./state-files.js";

export interface PrunerOptions extends EngineOptions {
  /** Folder for per-session state files; without it (and without `store`) state lives in memory only. */
  stateDir?: string;
  /** The all-time stats file (all-time.ts); without it (and without `stats`) there are no all-time stats. */
  statsFile?: string;
}

export function createPruner(options: PrunerOptions): AcpPruner {
  const { stateDir, statsFile, ...rest } = options;
  return createEnginePruner({
    ...rest,
    store: rest.store ?? (stateDir !== undefined ? stateFolderStore(stateDir) : undefined),
    stats: rest.stats ?? (statsFile !== undefined ? allTimeStore(statsFile) : undefined),
  });
}
