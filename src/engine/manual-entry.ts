// What the session state stores for a manual prune (its own module: state.ts and manual.ts both need it).
export type ManualAction = "discard" | "distill" | "replace" | "restore";

/** Who asked for a manual prune: the agent (context_prune) unless the user did (/acp sweep). */
export type ManualBy = "agent" | "user";

export interface ManualEntry {
  action: Exclude<ManualAction, "restore">;
  summary?: string;
  replaces?: { start: string; end: string; replacement?: string }[];
  /** Absent: the agent (entries stored before the field existed were all the agent's). */
  by?: ManualBy;
}
