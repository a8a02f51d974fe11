/**
 * `GET /sandbox`: a page for people debugging streams (docs/sandbox.md). Its
 * files are plain ES modules served as written from `lib/http/sandbox/`,
 * found from the project root: `tsc` copies nothing but compiled TypeScript,
 * so the same folder must serve both the source tree and `dist/`.
 *
 * The page draws a pipeline's graph with the service's own fold: the compiled
 * `lib/model/pipeline-graph.ts` and the two modules it imports are served at
 * `/sandbox/model/`, where the page's relative imports find them. Its chat
 * pane folds messages with @ag-ui/client, bundled at build time and served
 * at `/sandbox/vendor/`.
 */
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import express from "express";
import { PROJECT_ROOT } from "../paths.js";
import { bearerAuth } from "./auth.js";
import type { KernelFixtures } from "./kernel-fixtures.js";

export const SANDBOX_DIR = path.join(PROJECT_ROOT, "lib", "http", "sandbox");

/** The read-model modules the page imports, as compiled: the graph fold and its imports, which must stay browser-safe. */
export const SHARED_MODEL_MODULES: readonly string[] = ["pipeline-graph.js", "step-facts.js", "json.js"];

/**
 * Where the compiled read-model is: beside this module when the service runs
 * from `dist/`, so the page folds with the very code the service does; the
 * last build's under Jest, which runs the TypeScript sources.
 */
function compiledModelDir(): string {
  const beside = fileURLToPath(new URL("../model/", import.meta.url));
  return existsSync(path.join(beside, "pipeline-graph.js")) ? beside : path.join(PROJECT_ROOT, "dist", "lib", "model");
}
export const COMPILED_MODEL_DIR = compiledModelDir();

/** The browser bundles `npm run build` makes (`scripts/bundle-sandbox.mjs`): @ag-ui/client's own fold, for the chat pane. */
export const VENDOR_MODULES: readonly string[] = ["agui-client.js"];

/** Where the bundles are: `dist/sandbox-vendor/`, found from the compiled route as the model is, else the last build's. */
function vendorDir(): string {
  const beside = fileURLToPath(new URL("../../sandbox-vendor/", import.meta.url));
  return existsSync(path.join(beside, "agui-client.js")) ? beside : path.join(PROJECT_ROOT, "dist", "sandbox-vendor");
}
export const VENDOR_DIR = vendorDir();

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

const STATIC_OPTIONS = { index: false, redirect: false, dotfiles: "ignore", fallthrough: true } as const;

export interface SandboxRouteOptions {
  /** The configured kernel's fixtures (`kernel-fixtures.ts`); without it, or when the kernel has none, the page takes free text only. */
  kernelFixtures?: KernelFixtures;
  /** The bearer token the fixture list asks for, as every route but the page's own files and the probes does. */
  authToken?: string | undefined;
}

export function sandboxRoute({ kernelFixtures, authToken }: SandboxRouteOptions = {}): express.Router {
  const router = express.Router();
  router.use((_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });

  // `/sandbox` and `/sandbox/` both land here; the page links its files absolutely, so either works.
  router.get("/", (_req, res, next) => res.sendFile(path.join(SANDBOX_DIR, "index.html"), (error) => error && next(error)));

  // The kernel's answer, asked on the service's behalf: not for whoever can reach the port (the page sends the token).
  router.get("/fixtures", bearerAuth(authToken), async (_req, res, next) => {
    try {
      // The OS temp dir is an allowed cwd unless the operator narrowed the list; the page lets the user change it.
      // Asked of the kernel at most once per FIXTURE_LIST_CACHE_MS, however many pages load (see `kernel-fixtures.ts`).
      const fixtures = kernelFixtures === undefined ? undefined : await kernelFixtures();
      res.json({ fixtures: fixtures ?? [], source: fixtures === undefined ? "none" : "kernel", defaults: { cwd: os.tmpdir() } });
    } catch (error) {
      next(error);
    }
  });

  router.use((req, _res, next) => ((req.method === "GET" || req.method === "HEAD") && SERVED.test(req.path) ? next() : next("router")));
  const model = express.static(COMPILED_MODEL_DIR, STATIC_OPTIONS);
  router.use("/model", (req, res, next) => (SHARED_MODEL_MODULES.includes(req.path.slice(1)) ? model(req, res, next) : next("router")));
  const vendor = express.static(VENDOR_DIR, STATIC_OPTIONS);
  router.use("/vendor", (req, res, next) => (VENDOR_MODULES.includes(req.path.slice(1)) ? vendor(req, res, next) : next("router")));
  router.use(express.static(SANDBOX_DIR, STATIC_OPTIONS));
  return router;
}
