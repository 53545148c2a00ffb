// The phase names, in their fixed order. Rules run phase by phase; an earlier phase's decision wins.
export const PHASES = ["protect", "supersede", "age", "reduce", "manual"] as const;
export type Phase = (typeof PHASES)[number];
