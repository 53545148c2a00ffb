// The package's createPruner: the files-backed pruner (store/pruner.ts) for OpenCode unless told
// another host. Outside the layers, as the package root is: the one place that joins them by default.
import type { AcpPruner } from "./engine/pruner.js";
import type { HostProfile } from "./graph/host.js";
import { OPENCODE } from "./host/profile.js";
import { createPruner as createFilesPruner, type PrunerOptions as FilesOptions } from "./store/pruner.js";

export type PrunerOptions = Omit<FilesOptions, "host"> & {
  /** The host; OpenCode's profile by default. */
  host?: HostProfile;
};

export function createPruner(options: PrunerOptions = {}): AcpPruner {
  return createFilesPruner({ ...options, host: options.host ?? OPENCODE });
}
