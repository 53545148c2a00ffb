// Breadcrumb text: names the tool and its key params so the agent knows what was there and can
// re-run it, e.g. read({filePath: "src/a.ts", offset: 0, limit: 200}).
import type { Part } from "../../graph/types.js";

const MAX_VALUE = 120;

function showValue(v: unknown): string | undefined {
  if (typeof v === "string") return JSON.stringify(v.length > MAX_VALUE ? `${v.slice(0, MAX_VALUE)}…` : v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

export function describeCall(part: Part, show?: string[]): string {
  const input = (part.state?.input ?? {}) as Record<string, unknown>;
  const keys = show ?? Object.keys(input);
  const shown: string[] = [];
  for (const k of keys) {
    const s = showValue(input[k]);
    if (s !== undefined) shown.push(`${k}: ${s}`);
    if (shown.length >= 4) break;
  }
  return `${part.tool ?? part.type}({${shown.join(", ")}})`;
}

export const kb = (chars: number) => (chars >= 1024 ? `${(chars / 1024).toFixed(1)}KB` : `${chars}B`);
