/**
 * `GET /sandbox` over real HTTP: the page, and every module and stylesheet
 * it loads, with the content types a browser insists on (a module script
 * served as anything but JavaScript does not run); the fixture list; the
 * bearer token in front of all of it; and the same files found from `dist/`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import ts from "typescript";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { COMPILED_MODEL_DIR, SANDBOX_DIR, SHARED_MODEL_MODULES, VENDOR_DIR, VENDOR_MODULES } from "../../lib/http/sandbox-route.js";
import { MAX_FIXTURE_LIST_BYTES } from "../../lib/http/kernel-fixtures.js";
import { listFixtures } from "../../lib/kernel/fixture-list.js";
import { startService } from "../../lib/server.js";
import { FIXTURES_DIR, PROJECT_ROOT } from "../../lib/paths.js";
import { startHarness, testConfig, type Harness } from "../support/service.js";

const TOKEN = "sandbox-token";
const CONTENT_TYPES: Record<string, RegExp> = {
  ".html": /^text\/html; charset=utf-8$/,
  ".js": /^text\/javascript; charset=utf-8$/,
  ".css": /^text\/css; charset=utf-8$/,
  ".svg": /^image\/svg\+xml/,
};

/** What a page or module pulls in: `src`/`href` attributes and static or dynamic `import`s, as absolute paths. */
function references(text: string, from: string): string[] {
  const found = [...text.matchAll(/(?:src|href)="([^"]+)"|from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  return found.map((ref) => new URL(ref, `http://page${from}`).pathname);
}

describe("the sandbox route", () => {
  let harness: Harness;
  let url: string;
  beforeAll(async () => {
    harness = await startHarness();
    url = harness.service.url;
  });
  afterAll(() => harness.close());

  it.each(["/sandbox", "/sandbox/"])("serves the page at %s as HTML, with a strict CSP", async (route) => {
    const response = await fetch(`${url}${route}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(CONTENT_TYPES[".html"]!);
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await response.text()).toContain('<script type="module" src="/sandbox/main.js"></script>');
  });

  it("serves everything the page loads, module by module, with its content type", async () => {
    const seen = new Set<string>();
    const queue = references(await (await fetch(`${url}/sandbox`)).text(), "/sandbox/");
    while (queue.length > 0) {
      const asset = queue.shift()!;
      if (seen.has(asset)) continue;
      seen.add(asset);
      const response = await fetch(`${url}${asset}`);
      expect([asset, response.status]).toEqual([asset, 200]);
      expect(response.headers.get("content-type")).toMatch(CONTENT_TYPES[path.extname(asset)]!);
      if (asset.endsWith(".js")) queue.push(...references(await response.text(), asset));
    }
    const scripts = readdirSync(SANDBOX_DIR).filter((file) => file.endsWith(".js"));
    expect([...seen].filter((asset) => asset.endsWith(".js")).sort()).toEqual(
      [...scripts.map((file) => `/sandbox/${file}`), ...SHARED_MODEL_MODULES.map((file) => `/sandbox/model/${file}`)].sort(),
    );
    expect(seen).toContain("/sandbox/sandbox.css");
  });

  it("serves the service's own compiled graph fold at /sandbox/model/, which imports nothing but its served siblings", async () => {
    for (const file of SHARED_MODEL_MODULES) {
      const response = await fetch(`${url}/sandbox/model/${file}`);
      expect([file, response.status]).toEqual([file, 200]);
      const text = await response.text();
      expect(text).toBe(readFileSync(path.join(COMPILED_MODEL_DIR, file), "utf8"));
      // A bare name (a package) or a module outside the list would not load in the browser.
      const imports = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(?\s*)"([^"]+)"/g)].map((m) => m[1]!);
      expect(SHARED_MODEL_MODULES.map((sibling) => `./${sibling}`)).toEqual(expect.arrayContaining(imports));
    }
    expect(await (await fetch(`${url}/sandbox/model/pipeline-graph.js`)).text()).toContain("export function reducePipelineGraph");
  });

  it("serves the build's @ag-ui/client bundle at /sandbox/vendor/, which imports nothing", async () => {
    for (const file of VENDOR_MODULES) {
      const response = await fetch(`${url}/sandbox/vendor/${file}`);
      expect([file, response.status]).toEqual([file, 200]);
      expect(response.headers.get("content-type")).toMatch(CONTENT_TYPES[".js"]!);
      const text = await response.text();
      expect(text).toBe(readFileSync(path.join(VENDOR_DIR, file), "utf8"));
      // One module, whole: the page has no package resolution, so a bare import would not load.
      expect(text.match(/\bimport\s*[{*("]|\bfrom\s*"/g)).toBeNull();
      expect(text).toMatch(/export\s*\{[^}]*\bmessagesOf\b/);
    }
  });

  it.each([
    "/sandbox/vendor/nope.js",
    "/sandbox/nope.js",
    "/sandbox/..%2Fsandbox-route.ts",
    // jest.config.js exists, three folders up: a served extension must not open a way out.
    "/sandbox/..%2F..%2F..%2Fjest.config.js",
    "/sandbox/%2e%2e/%2e%2e/%2e%2e/jest.config.js",
    // Of the compiled model, only the fold and what it imports: the rest of the service is not the page's.
    "/sandbox/model/thread-status.js",
    "/sandbox/model/pipeline-graph.js.map",
    "/sandbox/model/..%2Fhttp%2Fsandbox-route.js",
    "/sandbox/vendor/..%2Fsandbox-vendor%2Fagui-client.js",
  ])("answers %s with the JSON 404: only the page's own files are served", async (route) => {
    const response = await fetch(`${url}${route}`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: "NOT_FOUND", message: expect.any(String) } });
  });

  it("lists the kernel's fixtures with their whole opening comment, and which ones ask for pipeline mode", async () => {
    const response = await fetch(`${url}/sandbox/fixtures`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await response.json()) as {
      fixtures: Array<{ name: string; description: string; pipeline: boolean }>;
      source: string;
      defaults: { cwd: string };
    };
    expect(body.source).toBe("kernel");
    const names = readdirSync(FIXTURES_DIR)
      .filter((file) => file.endsWith(".jsonl"))
      .map((file) => file.slice(0, -".jsonl".length));
    expect(body.fixtures.map((fixture) => fixture.name)).toEqual(names.sort());
    for (const fixture of body.fixtures) {
      const lines = readFileSync(path.join(FIXTURES_DIR, `${fixture.name}.jsonl`), "utf8").split("\n");
      const comment = lines.slice(
        0,
        lines.findIndex((line) => line.trim() !== "" && !line.startsWith("#")),
      );
      const whole = comment.map((line) => line.replace(/^#\s?/, "").trim()).filter((line) => line !== "");
      expect(fixture.description).toBe(whole.join(" "));
    }
    const byName = new Map(body.fixtures.map((fixture) => [fixture.name, fixture]));
    expect(byName.get("reasoning-tools")).toEqual({
      name: "reasoning-tools",
      description: "Thinking, an MCP tool call with progress, a failing tool, an artifact and a streamed answer.",
      pipeline: false,
    });
    // Its first line stops at "the" ("…delayMs: 0, the"): the description is the whole comment, never cut mid-sentence.
    expect(byName.get("permission")?.description).toMatch(
      /^A permission interrupt\. .* turn 1 plays the section whose "when" is in the answer\.$/,
    );
    expect(byName.get("pipeline")?.description).toMatch(/format: examples\/fixtures\/README\.md, "Pipeline fixtures"\.$/);
    expect(byName.get("pipeline")?.pipeline).toBe(true);
    expect(byName.get("permission")?.pipeline).toBe(false);
    expect(body.defaults).toEqual({ cwd: os.tmpdir() });
  });

  it("reads fixture files as the kernel names them: .jsonl only, plain names, the whole opening comment", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-fixtures-"));
    writeFileSync(
      path.join(dir, "b-two.jsonl"),
      '\n# First line, which goes on\n# on the second. Send with runMode "pipeline".\n{"delayMs": 0}\n# not the description\n',
    );
    writeFileSync(path.join(dir, "a_one.jsonl"), '{"delayMs": 0}\n# too late to describe the file\n');
    writeFileSync(path.join(dir, "bad name.jsonl"), "# skipped: the kernel could not pick it\n");
    writeFileSync(path.join(dir, "notes.md"), "# not a fixture\n");
    await expect(listFixtures(dir)).resolves.toEqual([
      { name: "a_one", description: "", pipeline: false },
      { name: "b-two", description: 'First line, which goes on on the second. Send with runMode "pipeline".', pipeline: true },
    ]);
  });
});

describe("the sandbox's fixture list in front of other kernels", () => {
  /** A loopback "kernel" that answers every request with one canned answer. */
  async function cannedKernel(status: number, body: string) {
    let listed = 0;
    const server = http.createServer((req, res) => {
      if (req.url?.endsWith("/iac-code/fixtures")) listed++;
      res.writeHead(status, { "content-type": "application/json" }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const kernelUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const service = await startService(testConfig({ a2aUrl: kernelUrl }));
    return {
      url: service.url,
      /** How often the service asked the kernel for its fixture list. */
      listed: () => listed,
      async close() {
        await service.close();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }

  it("offers no fixtures (free text only) in front of a kernel without the fixture route", async () => {
    const kernel = await cannedKernel(404, "{}");
    try {
      const response = await fetch(`${kernel.url}/sandbox/fixtures`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ fixtures: [], source: "none", defaults: { cwd: os.tmpdir() } });
    } finally {
      await kernel.close();
    }
  });

  it("asks the kernel once for a burst of page loads, all answered alike", async () => {
    const kernel = await cannedKernel(200, JSON.stringify({ fixtures: [{ name: "ok", description: "Fine." }] }));
    try {
      const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(`${kernel.url}/sandbox/fixtures`)));
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(((await answer.json()) as { fixtures: unknown[] }).fixtures).toEqual([
          { name: "ok", description: "Fine.", pipeline: false },
        ]);
      }
      expect((await fetch(`${kernel.url}/sandbox/fixtures`)).status).toBe(200);
      expect(kernel.listed()).toBe(1);
    } finally {
      await kernel.close();
    }
  });

  it("refuses a fixture list larger than MAX_FIXTURE_LIST_BYTES as A2A_PROTOCOL_ERROR, instead of passing it on", async () => {
    const description = "d".repeat(1024);
    const count = Math.ceil((2 * MAX_FIXTURE_LIST_BYTES) / description.length);
    const huge = JSON.stringify({ fixtures: Array.from({ length: count }, (_, i) => ({ name: `f${i}`, description })) });
    const kernel = await cannedKernel(200, huge);
    try {
      const response = await fetch(`${kernel.url}/sandbox/fixtures`);
      expect(response.status).toBe(502);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("A2A_PROTOCOL_ERROR");
    } finally {
      await kernel.close();
    }
  });

  it("answers A2A_PROTOCOL_ERROR for a fixture list that is not one, and passes on only names the kernel could be asked for", async () => {
    const garbage = await cannedKernel(200, '{"fixtures": 3}');
    try {
      const response = await fetch(`${garbage.url}/sandbox/fixtures`);
      expect(response.status).toBe(502);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("A2A_PROTOCOL_ERROR");
    } finally {
      await garbage.close();
    }
    const mixed = await cannedKernel(200, JSON.stringify({ fixtures: [{ name: "ok", description: "Fine." }, { name: "../x" }, 7] }));
    try {
      const body = (await (await fetch(`${mixed.url}/sandbox/fixtures`)).json()) as { fixtures: unknown[] };
      expect(body.fixtures).toEqual([{ name: "ok", description: "Fine.", pipeline: false }]);
    } finally {
      await mixed.close();
    }
  });
});

describe("the sandbox route behind a bearer token", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({}, { authToken: TOKEN });
  });
  afterAll(() => harness.close());

  it.each(["/sandbox", "/sandbox/main.js"])("serves %s without the token, so a browser tab can open the page", async (route) => {
    expect((await fetch(`${harness.service.url}${route}`)).status).toBe(200);
  });

  it("lists the kernel's fixtures only with the token, which the page sends", async () => {
    const refused = await fetch(`${harness.service.url}/sandbox/fixtures`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: { code: "UNAUTHORIZED", message: expect.any(String) } });
    const listed = await fetch(`${harness.service.url}/sandbox/fixtures`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { fixtures: unknown[] }).fixtures.length).toBeGreaterThan(0);
  });

  it("still refuses what the page calls without the token: the runs themselves", async () => {
    const refused = await fetch(harness.service.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: { code: "UNAUTHORIZED", message: expect.any(String) } });
    expect((await fetch(`${harness.service.url}/sandbox/../extensions/iac-code/v1/executions/e1/cancel`, { method: "POST" })).status).toBe(
      401,
    );
  });
});

describe("the sandbox's files", () => {
  it("are found from the build in dist/ too, where tsc copies no HTML, CSS or browser JavaScript", () => {
    const built = path.join(PROJECT_ROOT, "dist", "lib", "http", "sandbox-route.js");
    if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` (npm test does)`);
    const script = `import(${JSON.stringify(built)}).then((m) => process.stdout.write(m.SANDBOX_DIR))`;
    const dir = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(dir).toBe(SANDBOX_DIR);
    expect(existsSync(path.join(dir, "index.html"))).toBe(true);
  });

  it("take the graph fold from the build the service runs: dist/lib/model/, beside the route's own module", () => {
    const built = path.join(PROJECT_ROOT, "dist", "lib", "http", "sandbox-route.js");
    const script = `import(${JSON.stringify(built)}).then((m) => process.stdout.write(m.COMPILED_MODEL_DIR))`;
    const dir = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(path.resolve(dir)).toBe(path.join(PROJECT_ROOT, "dist", "lib", "model"));
    expect(path.resolve(COMPILED_MODEL_DIR)).toBe(path.resolve(dir));
  });

  it("typecheck against the DOM: they are served as written, so the build never sees them", () => {
    const { config } = ts.readConfigFile(path.join(SANDBOX_DIR, "tsconfig.json"), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config, ts.sys, SANDBOX_DIR);
    expect(parsed.fileNames.length).toBeGreaterThan(5);
    const diagnostics = ts.getPreEmitDiagnostics(ts.createProgram(parsed.fileNames, parsed.options));
    const host = { getCanonicalFileName: (name: string) => name, getCurrentDirectory: () => PROJECT_ROOT, getNewLine: () => "\n" };
    expect(ts.formatDiagnostics(diagnostics, host)).toBe("");
  }, 60_000);
});
