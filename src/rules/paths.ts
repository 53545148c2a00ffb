import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

// src/rules/paths.ts and dist/rules/paths.js both sit two levels below the package root.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export const packagePath = (...parts: string[]) => join(root, ...parts);
