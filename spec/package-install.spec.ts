/**
 * The service as an operator installs it: `npm pack` of the built tree,
 * installed into an empty project with `--omit=dev`, started from its bin.
 * No TypeScript and no dev dependency is there, and nothing is compiled at
 * start. `npm test` builds first; the packing itself skips the build
 * (`--ignore-scripts`) so this file does not compile the tree again.
 *
 * The install fetches the runtime dependencies the local npm cache lacks
 * from the registry: when neither the cache nor the registry can supply
 * them, the file is skipped with a note rather than failed.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { PROJECT_ROOT } from "../lib/paths.js";
import { expectValidRun } from "./support/agui.js";
import { postRun, runInput } from "./support/service.js";
import { MAIN } from "./support/service-process.js";
import { spawnBin, type BinProcess } from "./support/bin-process.js";

const run = promisify(execFile);
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/** Whether the registry answers, so a failed install here is a finding and not a machine without network. */
const registryReachable = spawnSync(NPM, ["ping"], { stdio: "ignore", timeout: 20_000 }).status === 0;
if (!registryReachable) console.warn("package-install.spec: the npm registry is unreachable; the packed install is not tried");
const describeWithRegistry = registryReachable ? describe : describe.skip;

describeWithRegistry("the packed package, installed without dev dependencies", () => {
  let workDir: string;
  let installed: string;
  let bin: BinProcess | undefined;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` (npm test does)`);
    workDir = mkdtempSync(path.join(os.tmpdir(), "agui-package-"));
    const { stdout } = await run(NPM, ["pack", "--ignore-scripts", "--pack-destination", workDir, "--json"], { cwd: PROJECT_ROOT });
    const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
    const app = path.join(workDir, "app");
    mkdirSync(app);
    writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "agui-install-check", private: true }));
    await run(NPM, ["install", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", path.join(workDir, filename)], {
      cwd: app,
      timeout: 300_000,
    });
    installed = app;
  }, 360_000);

  afterAll(async () => {
    await bin?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it("holds what the service needs at run time and none of the tools that build or test it", () => {
    const modules = path.join(installed, "node_modules");
    for (const runtime of ["express", "rxjs", "@a2a-js/sdk", "pino"]) expect(existsSync(path.join(modules, runtime))).toBe(true);
    for (const devOnly of ["typescript", "jest", "ts-jest", "eslint", "@copilotkit/runtime", "playwright-core", "@ag-ui/client"]) {
      expect({ devOnly, present: existsSync(path.join(modules, devOnly)) }).toEqual({ devOnly, present: false });
    }
    const pkg = path.join(modules, "iac-code-agui");
    // Compiled code and the files it reads at run time; no TypeScript source.
    expect(existsSync(path.join(pkg, "dist", "lib", "main.js"))).toBe(true);
    expect(existsSync(path.join(pkg, "lib", "main.ts"))).toBe(false);
    expect(readFileSync(path.join(pkg, "dist", "lib", "main.js"), "utf8").startsWith("#!/usr/bin/env node")).toBe(true);
    // The sandbox's chat pane needs the client bundled at build time; the entry it was bundled from imports a dev dependency.
    expect(existsSync(path.join(pkg, "dist", "sandbox-vendor", "agui-client.js"))).toBe(true);
    expect(existsSync(path.join(pkg, "dist", "lib", "http", "sandbox-bundle"))).toBe(false);
  });

  it("starts from its bin with no build and serves /health, /ready and a run", async () => {
    const started = Date.now();
    bin = await spawnBin(path.join(installed, "node_modules", ".bin", "iac-code-agui"), {
      cwd: installed,
      env: { IAC_CODE_AGUI_PORT: "0", IAC_CODE_AGUI_STATE_DIR: path.join(workDir, "state") },
    });
    const health = await fetch(`${bin.url}/health`);
    console.info(`package-install.spec: from spawn to /health in ${Date.now() - started} ms`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok", protocol: "ag-ui" });
    expect((await fetch(`${bin.url}/ready`)).status).toBe(200);

    // The demo kernel's fixtures, the schemas and the locales came with the package: a run goes through.
    const { events } = await postRun(bin.url, runInput("chat", {}, { cwd: installed }));
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    // The sandbox's bundle is served from the installed build.
    const bundle = await fetch(`${bin.url}/sandbox/vendor/agui-client.js`);
    expect(bundle.status).toBe(200);
    expect(await bundle.text()).toMatch(/\bmessagesOf\b/);
    expect(bin.stderr()).toBe("");
  });

  it("runs `npm start`'s build check as a no-op where there are no sources", async () => {
    const pkg = path.join(installed, "node_modules", "iac-code-agui");
    const { stdout, stderr } = await run(process.execPath, [path.join(pkg, "scripts", "build-if-stale.mjs")], { cwd: pkg });
    expect({ stdout, stderr }).toEqual({ stdout: "", stderr: "" });
    expect(existsSync(path.join(pkg, "node_modules", "typescript"))).toBe(false);
  });
});
