// Where a subcommand writes (stdout and stderr, or a test's buffers); its own module so that the
// subcommands need not import main.ts, which imports them.
export type Io = { out: (s: string) => void; err: (s: string) => void };
