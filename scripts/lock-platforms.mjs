#!/usr/bin/env node
// Adds to package-lock.json the other platforms' binary packages that npm could not resolve here.
//
// npm writes every optional dependency into the lockfile, for all platforms, and `npm ci` refuses a
// lockfile that lacks one ("Missing: opencode-darwin-arm64@ from lock file"). A registry that does
// not carry a platform's package (a partial mirror) makes `npm install` leave it out silently. This
// writes the entry npm would have written, minus `integrity`, which npm then takes from the
// registry on the one platform that installs it: name, version, os, cpu, libc.
//
//   node scripts/lock-platforms.mjs     # after `npm install` changed the lockfile, then `npm ci`
import fs from "node:fs";

const LOCK = new URL("../package-lock.json", import.meta.url);
const OS = { darwin: "darwin", linux: "linux", windows: "win32", win32: "win32" };
const PLATFORM = /-(darwin|linux|windows|win32)-(x64|arm64|arm|ia32)(-baseline)?(-(musl|gnu|glibc))?$/;

const lock = JSON.parse(fs.readFileSync(LOCK, "utf8"));
const added = [];
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    if (findEntry(lock.packages, key, name)) continue;
    const m = PLATFORM.exec(name);
    if (!m) continue; // not a platform binary: npm must resolve it, nothing to guess
    // findEntry looked up to the root, so the hoisted place is free
    lock.packages[`node_modules/${name}`] = {
      version,
      cpu: [m[2]],
      ...(entry.dev ? { dev: true } : {}),
      ...(m[5] === "musl" ? { libc: ["musl"] } : m[5] ? { libc: ["glibc"] } : {}),
      optional: true,
      os: [OS[m[1]]],
    };
    added.push(`${name}@${version}`);
  }
}
// npm keeps the root first, then paths in order
const [root, ...rest] = Object.entries(lock.packages);
lock.packages = Object.fromEntries([root, ...rest.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
fs.writeFileSync(LOCK, JSON.stringify(lock, null, 2) + "\n");
console.log(added.length ? `added ${added.join(", ")}` : "nothing missing");

/** The lock entry Node would resolve `name` to from the package at `key`. */
function findEntry(packages, key, name) {
  for (let dir = key; ; dir = parentDir(dir)) {
    const at = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[at]) return packages[at];
    if (dir === "") return undefined;
  }
}

function parentDir(key) {
  const i = key.lastIndexOf("/node_modules/");
  return i < 0 ? "" : key.slice(0, i);
}
