// Regexes come from rule files a cloned repository may ship: run them on RE2 (linear time),
// so no pattern can hang the host.
import { RE2JS } from "re2js";

export interface SafeRegex {
  test(s: string): boolean;
}

const cache = new Map<string, SafeRegex>();

/** Throws a readable Error when the pattern is not valid RE2 syntax (backreferences, lookaround). */
export function compileSafeRegex(pattern: string): SafeRegex {
  let re = cache.get(pattern);
  if (!re) {
    const compiled = RE2JS.compile(pattern);
    const seen = new Map<string, boolean>(); // short subjects (commands, names) recur; RE2JS is slow
    re = {
      test: (s: string) => {
        if (s.length > 512) return compiled.matcher(s).find();
        let r = seen.get(s);
        if (r === undefined) {
          r = compiled.matcher(s).find();
          if (seen.size >= 10_000) seen.clear();
          seen.set(s, r);
        }
        return r;
      },
    };
    cache.set(pattern, re);
  }
  return re;
}

export function regexError(pattern: string): string | undefined {
  try {
    compileSafeRegex(pattern);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
