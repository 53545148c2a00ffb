// Which rule protects a part: protection a part's static facts settle once, and protection that
// time-dependent rules give on one call only.
import type { CompiledRule } from "./ruleset.js";

/** Which rule protects a part: static protection is settled once per part, dynamic per call. */
export class Protection {
  readonly permanent = new Map<number, CompiledRule>();
  private current = new Map<number, CompiledRule>();
  has(i: number): boolean {
    return this.permanent.has(i) || this.current.has(i);
  }
  get(i: number): CompiledRule | undefined {
    return this.permanent.get(i) ?? this.current.get(i);
  }
  /** Node indexes protected on this call only (time-dependent rules). */
  dynamic(): Iterable<number> {
    return this.current.keys();
  }
  setDynamic(i: number, r: CompiledRule): void {
    if (!this.has(i)) this.current.set(i, r);
  }
  resetDynamic(): void {
    this.current = new Map();
  }
  clear(): void {
    this.permanent.clear();
    this.current = new Map();
  }
  /** The time-dependent protection as the last `endedSinceCheck` saw it. */
  private checked = new Map<number, CompiledRule>();
  /** Has a part protected by a time-dependent rule at the last check lost that protection since? */
  endedSinceCheck(): boolean {
    let ended = false;
    for (const i of this.checked.keys())
      if (!this.has(i)) {
        ended = true;
        break;
      }
    this.checked = this.current;
    return ended;
  }
}
