/**
 * Files the service reads at run time (schemas, locales, fixtures) live in
 * the source tree, not in `dist/`: find the project root by walking up to
 * the nearest package.json, so the same code works from `lib/` under Jest
 * and from `dist/lib/` after a build.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PROJECT_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));
export const SCHEMAS_DIR = path.join(PROJECT_ROOT, "schemas");
export const LOCALES_DIR = path.join(PROJECT_ROOT, "lib", "i18n", "locales");
export const FIXTURES_DIR = path.join(PROJECT_ROOT, "examples", "fixtures");
