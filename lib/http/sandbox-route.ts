/**
 * `GET /sandbox`: a page for people debugging streams (docs/sandbox.md). Its
 * files are plain ES modules served as written from `lib/http/sandbox/`,
 * found from the project root: `tsc` copies nothing but compiled TypeScript,
 * so the same folder must serve both the source tree and `dist/`.
 */
import os from "node:os";
import path from "node:path";
import express from "express";
import { PROJECT_ROOT } from "../paths.js";
import type { KernelFixtures } from "./kernel-fixtures.js";

export const SANDBOX_DIR = path.join(PROJECT_ROOT, "lib", "http", "sandbox");

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

export interface SandboxRouteOptions {
  /** The configured kernel's fixtures (`kernel-fixtures.ts`); without it, or when the kernel has none, the page takes free text only. */
  kernelFixtures?: KernelFixtures;
}

export function sandboxRoute({ kernelFixtures }: SandboxRouteOptions = {}): express.Router {
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
      // Asked on every page load: the kernel reads its fixture files on every turn, so edits show at once.
      const fixtures = kernelFixtures === undefined ? undefined : await kernelFixtures();
      res.json({ fixtures: fixtures ?? [], source: fixtures === undefined ? "none" : "kernel", defaults: { cwd: os.tmpdir() } });
    } catch (error) {
      next(error);
    }
  });

  router.use((req, _res, next) => ((req.method === "GET" || req.method === "HEAD") && SERVED.test(req.path) ? next() : next("router")));
  router.use(express.static(SANDBOX_DIR, { index: false, redirect: false, dotfiles: "ignore", fallthrough: true }));
  return router;
}
