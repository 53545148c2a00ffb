// Merging another process's writes into ours (two processes on one session: serve + attach, two
// terminals). Called by the state files' save under their lock.
import { changesOf, type Decision, type SessionState } from "../engine/state.js";

const SLOTS = ["output", "input"] as const;
const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

function setEntry<T>(rec: Record<string, T>, key: string, value: T | undefined): void {
  if (value === undefined) delete rec[key];
  else rec[key] = value;
}

/** Sets or clears one decision slot in place (nodes hold the slots object, so a render sees it at once). */
function setSlot(state: SessionState, partId: string, slot: (typeof SLOTS)[number], d: Decision | undefined): void {
  const slots = state.decisions[partId] ?? (d ? (state.decisions[partId] = {}) : undefined);
  if (!slots) return;
  setEntry(slots, slot, d);
  if (!slots.output && !slots.input) delete state.decisions[partId];
}

/**
 * Folds another process's writes into `ours`; returns true when it changed anything. A three-way
 * merge against `base`, what we last synced: every write happens right after the change under the lock,
 * so what we changed since our last sync is newer than anything on disk and stands, and what we
 * did not change takes the disk's value — deletions included (a restore elsewhere).
 */
export function mergeState(ours: SessionState, disk: SessionState, base: SessionState): boolean {
  const touched = changesOf(ours).touched;
  let changed = false;
  const manual = (ours.manual ??= {});
  const pinned = (ours.pinned ??= {});
  const parts = new Set<string>();
  for (const s of [ours, disk, base]) for (const rec of [s.decisions, s.manual ?? {}, s.pinned ?? {}]) for (const k of Object.keys(rec)) parts.add(k);
  for (const id of parts) {
    if (touched.has(id)) {
      // our request is the newest; a manual one keeps the other process's rule decisions on free
      // slots, and its committed manual decision when both asked for the same (not yet committed here)
      if (!pinned[id])
        for (const slot of SLOTS) {
          const d = disk.decisions[id]?.[slot];
          if (d && (d.rule !== "manual" || same(manual[id], disk.manual?.[id])) && !ours.decisions[id]?.[slot]) {
            setSlot(ours, id, slot, d);
            changed = true;
          }
        }
      continue;
    }
    if (!same(manual[id], disk.manual?.[id])) {
      setEntry(manual, id, disk.manual?.[id]);
      changed = true;
    }
    // a pin another process set or ended since our last sync is taken; one we ended (pins.ts: a
    // derivation, not a request) stands while the disk still has the pin we had
    const diskPin = disk.pinned?.[id];
    if (!same(pinned[id], diskPin) && !same(diskPin, base.pinned?.[id])) {
      setEntry(pinned, id, diskPin);
      changed = true;
    }
    for (const slot of SLOTS) {
      const o = ours.decisions[id]?.[slot];
      const d = disk.decisions[id]?.[slot];
      if (same(o, d) || !same(o, base.decisions[id]?.[slot])) continue; // equal, or ours is newer
      setSlot(ours, id, slot, d);
      changed = true;
    }
    // A restore anywhere wins over decisions made elsewhere before it: rules leave pinned parts alone.
    if (pinned[id] && ours.decisions[id]) {
      for (const slot of SLOTS) setSlot(ours, id, slot, undefined);
      changed = true;
    }
  }
  for (const [k, v] of Object.entries(disk.ids ?? {}))
    if ((ours.ids ??= {})[k] === undefined) {
      ours.ids[k] = v;
      if (disk.idCalls?.[k] !== undefined) (ours.idCalls ??= {})[k] = disk.idCalls[k];
      changed = true;
    }
  // regret events only accumulate: the union (the back-off reads them on every call, no cache to rebuild)
  for (const [k, v] of Object.entries(disk.regret ?? {})) if ((ours.regret ??= {})[k] === undefined) ours.regret[k] = v;
  if (ours.introAt === undefined && disk.introAt !== undefined) {
    ours.introAt = disk.introAt;
    changed = true;
  }
  ours.calls = Math.max(ours.calls, disk.calls);
  if (typeof disk.lastCallAt === "number" && !((ours.lastCallAt ?? -Infinity) >= disk.lastCallAt)) {
    ours.lastCallAt = disk.lastCallAt;
    // what the newer call left waiting goes with it, and it used the restores made before it
    if (disk.waiting === undefined) delete ours.waiting;
    else ours.waiting = disk.waiting;
    if (disk.restoredSent === undefined) delete ours.restoredSent;
    else ours.restoredSent = [...disk.restoredSent];
  } else {
    // a restore made elsewhere since our last sync breaks the next prompt too
    for (const id of disk.restoredSent ?? [])
      if (!base.restoredSent?.includes(id) && !ours.restoredSent?.includes(id)) (ours.restoredSent ??= []).push(id);
  }
  if (typeof disk.cachedSince === "number" && !((ours.cachedSince ?? -Infinity) >= disk.cachedSince)) ours.cachedSince = disk.cachedSince;
  return changed;
}
