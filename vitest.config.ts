import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 30_000,
    pool: "forks",
    // Vitest's default (CPUs - 1) runs one file at a time on a 2-CPU CI machine, where the e2e files
    // spend much of their time waiting on the opencode binary: two at once took the suite from 18 to
    // 11 minutes there, with every timeout far off.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    setupFiles: ["tests/fuzz-seed.ts"],
    globalSetup: ["tests/temp-root.ts"],
  },
});
