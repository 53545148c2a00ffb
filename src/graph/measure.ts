// Measuring what the provider receives without writing it out: the JSON length of a tool input
// (the prompt's share of a tool call), for token accounting and the commit policy.
import { textOf } from "./prompt.js";

const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * JSON.stringify(s).length: a string without characters to escape is measured without writing it
 * out; one with them (code: quotes, newlines) is written natively, which is faster than counting
 * its escapes in JavaScript.
 */
function jsonStringLength(s: string): number {
  return s.search(NEEDS_ESCAPE) < 0 ? s.length + 2 : JSON.stringify(s).length;
}

/** JSON.stringify(v).length of plain JSON data, without building the text; -1 for anything else. */
function plainJsonLength(v: unknown, depth: number): number {
  if (v === null) return 4;
  switch (typeof v) {
    case "string":
      return jsonStringLength(v);
    case "number":
      return Number.isFinite(v) ? String(v).length : 4;
    case "boolean":
      return v ? 4 : 5;
    case "object":
      break;
    default:
      return -1;
  }
  if (depth > 64) return -1;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return -1;
    let n = v.length > 0 ? v.length + 1 : 2;
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return -1;
      const m = plainJsonLength(v[i], depth + 1);
      if (m < 0) return -1;
      n += m;
    }
    return n;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return -1;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  let n = keys.length > 0 ? keys.length + 1 : 2;
  for (let i = 0; i < keys.length; i++) {
    const m = plainJsonLength(o[keys[i]], depth + 1);
    if (m < 0) return -1;
    n += plainJsonLength(keys[i], depth) + 1 + m;
  }
  return n;
}

/** textOf(v).length; a tool input's JSON is measured without being written out. */
export function textLength(v: unknown): number {
  if (typeof v === "string") return v.length;
  if (v !== null && typeof v === "object" && typeof (Object.prototype as any).toJSON !== "function" && typeof (Array.prototype as any).toJSON !== "function") {
    const n = plainJsonLength(v, 0);
    if (n >= 0) return n;
  }
  return textOf(v).length;
}
