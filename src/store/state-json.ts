// The snapshot's JSON (`<session>.json`), written on every call that starts a new journal: built
// from cached pieces, byte-identical to JSON.stringify(state).
import type { Decision, DecisionSlots, SessionState } from "../engine/state.js";

/**
 * Per decision record of a part: the JSON of its entry, valid while the record holds the same
 * decisions (a decision is never changed once made; a change is a new object).
 */
const entryJson = new WeakMap<object, { key: string; output?: Decision; input?: Decision; json: string }>();

/**
 * JSON.stringify(state), reusing the JSON of every part's decisions written before: a long
 * session holds thousands of them, and the state is written on every call.
 */
export function stateJson(state: SessionState): string {
  let out = "{";
  for (const key of Object.keys(state)) {
    const v = (state as unknown as Record<string, unknown>)[key];
    const json = key === "decisions" && isPlain(v) ? decisionsJson(v) : JSON.stringify(v);
    if (json === undefined) continue; // undefined, functions: left out, as by JSON.stringify
    out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${json}`;
  }
  return `${out}}`;
}

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype && typeof (v as { toJSON?: unknown }).toJSON !== "function";

function decisionsJson(rec: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of Object.keys(rec)) {
    const slots = rec[key];
    if (!isPlain(slots)) {
      const json = JSON.stringify(slots);
      if (json !== undefined) parts.push(`${JSON.stringify(key)}:${json}`);
      continue;
    }
    const { output, input } = slots as DecisionSlots;
    let e = entryJson.get(slots);
    if (e === undefined || e.key !== key || e.output !== output || e.input !== input) {
      const json = JSON.stringify(key) + ":" + JSON.stringify(slots);
      json.charCodeAt(0); // flattened now, not at every join
      entryJson.set(slots, (e = { key, output, input, json }));
    }
    parts.push(e.json);
  }
  return `{${parts.join(",")}}`;
}
