/**
 * `GET /sandbox`: a page for people debugging streams (docs/sandbox.md). Its
 * files are plain ES modules served as written from `lib/http/sandbox/`,
 * found from the project root: `tsc` copies nothing but compiled TypeScript,
 * so the same folder must serve both the source tree and `dist/`.
 */
import { readdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import express from "express";
import { FIXTURES_DIR, PROJECT_ROOT } from "../paths.js";

export const SANDBOX_DIR = path.join(PROJECT_ROOT, "lib", "http", "sandbox");

export interface FixtureSummary {
  name: string;
  /** The file's first `#` line: fixtures open with a comment saying what they show. */
  description: string;
  /** The fixture asks to be sent with `runMode: "pipeline"`; the page ticks the box for it. */
  pipeline: boolean;
}

/** The names the demo kernel accepts (examples/fixtures/README.md, "Choosing a fixture"). */
const FIXTURE_NAME = /^[A-Za-z0-9_-]+$/;

/** Only what the page is made of: the folder also holds its tsconfig, which is nobody's business. */
const SERVED = /\.(?:html|js|css|svg)$/;

// The page never needs more, and a strict policy is a second line behind textContent should event text ever reach HTML.
const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  // A debugging page is edited while the service runs: always revalidate.
  "Cache-Control": "no-cache",
};

function leadingComment(text: string): string[] {
  const lines: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith("#")) lines.push(line.replace(/^#\s?/, "").trim());
    else if (line.trim() !== "") break;
  }
  return lines;
}

/** Fixture files are read on every call: the kernel reads them on every turn, so edits show at once. */
export async function listFixtures(dir: string = FIXTURES_DIR): Promise<FixtureSummary[]> {
  const names = (await readdir(dir))
    .filter((file) => file.endsWith(".jsonl"))
    .map((file) => file.slice(0, -".jsonl".length))
    .filter((name) => FIXTURE_NAME.test(name))
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const comment = leadingComment(await readFile(path.join(dir, `${name}.jsonl`), "utf8"));
      return { name, description: comment[0] ?? "", pipeline: comment.join(" ").includes('runMode "pipeline"') };
    }),
  );
}

export function sandboxRoute(): express.Router {
  const router = express.Router();
  router.use((_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });

  // `/sandbox` and `/sandbox/` both land here; the page links its files absolutely, so either works.
  router.get("/", (_req, res, next) => res.sendFile(path.join(SANDBOX_DIR, "index.html"), (error) => error && next(error)));

  router.get("/fixtures", async (_req, res, next) => {
    try {
      // The OS temp dir is an allowed cwd unless the operator narrowed the list; the page lets the user change it.
      res.json({ fixtures: await listFixtures(), defaults: { cwd: os.tmpdir() } });
    } catch (error) {
      next(error);
    }
  });

  router.use((req, _res, next) => ((req.method === "GET" || req.method === "HEAD") && SERVED.test(req.path) ? next() : next("router")));
  router.use(express.static(SANDBOX_DIR, { index: false, redirect: false, dotfiles: "ignore", fallthrough: true }));
  return router;
}
