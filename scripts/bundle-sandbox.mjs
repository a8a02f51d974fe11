#!/usr/bin/env node
/**
 * `npm run build`'s second step: the sandbox page's chat pane folds events
 * with @ag-ui/client's own code (lib/http/sandbox-bundle/messages-of.ts).
 * The page loads plain ES modules under a `script-src 'self'` policy and has
 * no package resolution, so the client is bundled into one browser module,
 * dist/sandbox-vendor/agui-client.js, which the sandbox route serves at
 * /sandbox/vendor/agui-client.js.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

await build({
  entryPoints: [path.join(ROOT, "lib", "http", "sandbox-bundle", "messages-of.ts")],
  outfile: path.join(ROOT, "dist", "sandbox-vendor", "agui-client.js"),
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  legalComments: "eof",
  // The client reads process.env to pick its debug defaults; in a page there is none.
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "warning",
});
