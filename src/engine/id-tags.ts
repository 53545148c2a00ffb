// The host's id tags (HostProfile.idTag, `[acp:t1a]` for OpenCode) around the engine's short ids
// (ids.ts): made, found in a text, and read back from what a user or the model quoted.
import type { HostProfile } from "../graph/host.js";

export interface IdTags {
  make(id: string): string;
  /** Text that starts every tag: a text without it holds none. */
  marker: string;
  /** Every tag in a text (global). */
  all: RegExp;
  /** The id in a tag, quoted or not: `t1bz`, `${open}t1bz${close}`, `${open without its bracket}t1bz`. */
  quoted: RegExp;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const tagsByFormat = new WeakMap<HostProfile["idTag"], IdTags>();

/** The id tags of a host (one object per profile). */
export function idTags(format: HostProfile["idTag"]): IdTags {
  let t = tagsByFormat.get(format);
  if (t) return t;
  const { open, close } = format;
  // a quoted id may leave out the tag's leading bracket and its close: `acp:t1bz`
  const bare = open.replace(/^[[(<{]/, "");
  const lead = bare.length < open.length ? `${escape(open[0])}?` : "";
  t = {
    make: (id) => `${open}${id}${close}`,
    marker: open,
    all: new RegExp(`${escape(open)}[tmr][0-9a-z]+${escape(close)}`, "g"),
    quoted: new RegExp(`^(?:${lead}${escape(bare)})?([tmr][0-9a-z]+)(?:${escape(close)})?$`),
  };
  tagsByFormat.set(format, t);
  return t;
}

