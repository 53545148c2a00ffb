// The plugin's configuration and pruner, loaded at start-up and again whenever acp.jsonc, a rule
// file or folder, or a preset file changes while the host runs (`opencode serve`, the TUI).
//
// A reload builds a new pruner over the same state folder: committed decisions, ids, the sent
// prefix and the instructions' place are read back from the session state, exactly as after a
// restart, so nothing already sent changes because a file changed. What the new rules want for
// parts already sent waits for the commit policy like any other pending change; committed prunes
// of a rule that is gone stay (the cached prefix stays valid; `/acp restore` undoes one).
import type { AcpPruner } from "../engine/pruner.js";
import { createPruner, type PrunerOptions } from "../store/pruner.js";
import { defaultConfig, loadConfig, type ConfigLocations, type LoadedConfig } from "../rules/config.js";
import type { AcpConfig } from "../rules/types.js";
import { formatProblem, type Problem } from "../rules/problems.js";
import { ConfigWatch, watchedPaths } from "../rules/watch.js";

export interface Setup {
  loaded: LoadedConfig;
  pruner: AcpPruner;
  /** Errors of loading and resolving (file:line:col); the rest of the configuration applies. */
  problems: Problem[];
}

/**
 * Loads the configuration and builds the pruner; never throws (on an unknown failure, defaults
 * apply). `adjust` sees the loaded configuration before the pruner is built from it.
 */
export function loadSetup(locations: ConfigLocations, options: PrunerOptions, env: NodeJS.ProcessEnv = process.env, adjust: (config: AcpConfig) => AcpConfig = (c) => c): Setup {
  try {
    const loaded = loadConfig(locations, env);
    loaded.config = adjust(loaded.config);
    const pruner = createPruner({ ...options, config: loaded.config, layers: loaded.layers, ruleDirs: loaded.ruleDirs });
    return { loaded, pruner, problems: [...loaded.problems, ...pruner.problems].filter((p) => p.severity === "error") };
  } catch (e) {
    const problem: Problem = { file: "acp", line: 1, col: 1, severity: "error", message: `configuration not loaded, defaults apply (${(e as Error)?.message ?? String(e)})`, ruleId: "internal" };
    return { loaded: { config: defaultConfig(), problems: [problem], layers: [], ruleDirs: [] }, pruner: createPruner(options), problems: [problem] };
  }
}

export interface Reload {
  setup: Setup;
  /** Problems the previous load did not have (each reported once, like at start-up). */
  fresh: Problem[];
}

/** The current setup, reloaded when what it was loaded from changes (checked at most once per interval). */
export class LiveSetup {
  current: Setup;
  private readonly watch: ConfigWatch;
  private readonly locations: ConfigLocations;

  constructor(
    locations: ConfigLocations,
    private readonly options: PrunerOptions,
    /** Settings that cannot change without a restart (the host registers the tool once). */
    private readonly adjust: (config: AcpConfig) => AcpConfig = (c) => c,
    intervalMs = 1000,
    private readonly env: NodeJS.ProcessEnv = process.env,
    now?: () => number,
  ) {
    this.locations = { configDir: env.OPENCODE_CONFIG_DIR, xdgConfigHome: env.XDG_CONFIG_HOME, ...locations };
    // fingerprint first: an edit made while loading is noticed on the next check
    this.watch = new ConfigWatch(watchedPaths({ locations: this.locations }), intervalMs, now);
    this.current = this.load();
    this.watch.reset(this.paths());
  }

  private load(): Setup {
    return loadSetup(this.locations, this.options, this.env, this.adjust);
  }

  private paths(): string[] {
    const { loaded, pruner } = this.current;
    return watchedPaths({ locations: this.locations, ruleFiles: loaded.config.ruleFiles, preset: pruner.resolved.presetName });
  }

  /** Reloads if the files changed; undefined when nothing changed. Never throws. */
  refresh(): Reload | undefined {
    try {
      if (!this.watch.changed()) return undefined;
      const before = new Set(this.current.problems.map(formatProblem));
      this.current = this.load();
      this.watch.reset(this.paths());
      return { setup: this.current, fresh: this.current.problems.filter((p) => !before.has(formatProblem(p))) };
    } catch {
      return undefined; // the previous setup stays
    }
  }
}
