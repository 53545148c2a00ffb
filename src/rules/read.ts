// Reading a config, preset or rule file (or, with a larger cap, a recorded session or a rule
// fixture) without trusting it: only a regular file, at most MAX_FILE_BYTES, opened so that a FIFO
// cannot block and a device cannot be read forever.
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from "node:fs";

/** Rule files and configs are a few KB; anything far larger is a mistake or an attack. */
export const MAX_FILE_BYTES = 256 * 1024;
/** All rule files of one start-up together (the built-in ones are about 24 KB): bounds its time. */
export const MAX_TOTAL_BYTES = 2 * 1024 * 1024;

/** What a path is, for messages: "a folder", "a FIFO", … (undefined for a regular file). */
export function notAFile(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a FIFO";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

const capText = (max: number) => (max >= 1024 * 1024 ? `${max / (1024 * 1024)} MiB` : `${max / 1024} KiB`);
const tooLarge = (max: number, bytes: string) => `is larger than ${capText(max)} (${bytes}); it is not read`;

/** Why `err` (from stat, open or read) stops us reading a file. */
export function readErrorMessage(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === "ENOENT") return "file not found";
  if (code === "EISDIR") return "is a folder, not a file";
  if (code === "ELOOP") return "is a symbolic link loop";
  return `cannot read file (${code ?? (err as Error)?.message ?? String(err)})`;
}

/**
 * The file's text (without a leading UTF-8 byte order mark), or why it was not read. Never blocks on
 * special files, never reads more than `maxBytes`.
 */
export function readTextFile(file: string, maxBytes = MAX_FILE_BYTES): { text: string } | { error: string } {
  let fd: number | undefined;
  try {
    const kind = notAFile(statSync(file));
    if (kind) return { error: kind === "a folder" ? "is a folder, not a file" : `is ${kind}, not a regular file; it is not read` };
    // O_NONBLOCK: if the path was swapped for a FIFO after the stat, open returns at once.
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    const st = fstatSync(fd);
    const kindNow = notAFile(st);
    if (kindNow) return { error: `is ${kindNow}, not a regular file; it is not read` };
    if (st.size > maxBytes) return { error: tooLarge(maxBytes, `${st.size} bytes`) };
    // Read to the cap + 1 whatever the size said: some files report 0 bytes and still have content.
    // The buffer starts at the stated size and grows, so a large cap costs nothing for a small file.
    let buf = Buffer.alloc(Math.min(maxBytes + 1, Math.max(st.size + 1, 64 * 1024)));
    let n = 0;
    for (let got = 1; got > 0 && n <= maxBytes; n += got) {
      if (n === buf.length) {
        const bigger = Buffer.alloc(Math.min(maxBytes + 1, buf.length * 2));
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      got = readSync(fd, buf, n, buf.length - n, null);
    }
    if (n > maxBytes) return { error: tooLarge(maxBytes, "more than that when read") };
    const text = buf.subarray(0, n).toString("utf8");
    // A leading byte order mark (some Windows editors write one) is not part of the content.
    return { text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text };
  } catch (e) {
    return { error: readErrorMessage(e) };
  } finally {
    if (fd !== undefined)
      try {
        closeSync(fd);
      } catch {
        // nothing to do: the descriptor is gone either way
      }
  }
}
