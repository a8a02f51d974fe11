#!/usr/bin/env node
/**
 * `npm start`'s first step: compile only when a source is newer than what
 * it compiles to, so a start after no change costs no build (tsc takes
 * tens of seconds). An installed package ships `dist/` and no sources:
 * there is nothing to compare and nothing runs, so TypeScript (a dev
 * dependency) is never needed there.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** The folders `tsconfig.build.json` compiles, whose outputs land under `dist/` at the same relative path. */
const SOURCE_DIRS = ["lib", "operators", "examples"];
const CONFIGS = ["tsconfig.json", "tsconfig.build.json"].map((name) => path.join(ROOT, name));
const ENTRY = path.join(ROOT, "dist", "lib", "main.js");
/** The sandbox's browser bundle, which the build's second step makes (`bundle-sandbox.mjs`). */
const BUNDLE = path.join(ROOT, "dist", "sandbox-vendor", "agui-client.js");

function* typeScriptFiles(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* typeScriptFiles(full);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) yield full;
  }
}

const mtime = (file) => (existsSync(file) ? statSync(file).mtimeMs : -Infinity);

/** Why a build is due, or undefined when every source has an output at least as new as itself. */
function staleness() {
  if (!existsSync(path.join(ROOT, "lib", "main.ts"))) return undefined;
  if (!existsSync(ENTRY)) return "dist/ has not been built";
  if (!existsSync(BUNDLE)) return "the sandbox's client bundle has not been built";
  const entryTime = mtime(ENTRY);
  const config = CONFIGS.find((file) => mtime(file) > entryTime);
  if (config) return `${path.basename(config)} changed`;
  for (const dir of SOURCE_DIRS) {
    for (const source of typeScriptFiles(path.join(ROOT, dir))) {
      const relative = path.relative(ROOT, source);
      // examples/ compiles only its top-level files (see tsconfig.build.json).
      if (dir === "examples" && path.dirname(relative) !== "examples") continue;
      const output = path.join(ROOT, "dist", relative.replace(/\.ts$/, ".js"));
      if (mtime(source) > mtime(output)) return `${relative} changed`;
    }
  }
  return undefined;
}

const reason = staleness();
if (reason !== undefined) {
  console.error(`iac-code-agui: building (${reason})`);
  const build = spawnSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: "inherit", shell: process.platform === "win32" });
  process.exit(build.status ?? 1);
}
