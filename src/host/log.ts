// Plugin log: errors always go to the file when debug is on; nothing is printed into the TUI.
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

export interface Logger {
  error(where: string, e: unknown): void;
  info(msg: string): void;
}

export function createLogger(dir: string, debug: boolean): Logger {
  const write = (line: string) => {
    if (!debug) return;
    try {
      mkdirSync(dir, { recursive: true });
      appendFileSync(join(dir, "acp.log"), `${new Date().toISOString()} ${line}\n`);
    } catch {
      // logging must never be the reason a turn fails
    }
  };
  return {
    error: (where, e) => write(`ERROR ${where}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`),
    info: (msg) => write(`INFO ${msg}`),
  };
}
