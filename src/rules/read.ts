// Reading a config, preset or rule file without trusting it: only a regular file, at most
// MAX_FILE_BYTES, opened so that a FIFO cannot block and a device cannot be read forever.
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

const tooLarge = (bytes: string) => `is larger than ${MAX_FILE_BYTES / 1024} KiB (${bytes}); it is not read`;

/** Why `err` (from stat, open or read) stops us reading a file. */
export function readErrorMessage(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === "ENOENT") return "file not found";
  if (code === "EISDIR") return "is a folder, not a file";
  if (code === "ELOOP") return "is a symbolic link loop";
  return `cannot read file (${code ?? (err as Error)?.message ?? String(err)})`;
}

/** The file's text, or why it was not read. Never blocks on special files, never reads more than the cap. */
export function readTextFile(file: string): { text: string } | { error: string } {
  let fd: number | undefined;
  try {
    const kind = notAFile(statSync(file));
    if (kind) return { error: kind === "a folder" ? "is a folder, not a file" : `is ${kind}, not a regular file; it is not read` };
    // O_NONBLOCK: if the path was swapped for a FIFO after the stat, open returns at once.
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    const st = fstatSync(fd);
    const kindNow = notAFile(st);
    if (kindNow) return { error: `is ${kindNow}, not a regular file; it is not read` };
    if (st.size > MAX_FILE_BYTES) return { error: tooLarge(`${st.size} bytes`) };
    // Read to the cap + 1 whatever the size said: some files report 0 bytes and still have content.
    const buf = Buffer.alloc(MAX_FILE_BYTES + 1);
    let n = 0;
    for (let got = 1; got > 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
    if (n > MAX_FILE_BYTES) return { error: tooLarge("more than that when read") };
    return { text: buf.subarray(0, n).toString("utf8") };
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
