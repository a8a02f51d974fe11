/**
 * `iac-code-agui --help` and `--version` through the built command, as a
 * person types them: each answers on stdout, exits 0 and starts nothing.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "@jest/globals";
import { describedSettings, flagName } from "../lib/config.js";
import { PROJECT_ROOT } from "../lib/paths.js";

const MAIN = path.join(PROJECT_ROOT, "dist", "lib", "main.js");

/** The command with these arguments and no IAC_CODE_AGUI_* variable: its exit code and what it wrote. */
function run(...args: string[]) {
  const { status, stdout, stderr } = spawnSync(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? "" },
    encoding: "utf8",
    timeout: 20_000,
  });
  return { status, stdout, stderr };
}

describe("iac-code-agui --help and --version", () => {
  beforeAll(() => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` (npm test does)`);
  });

  it("--help describes every flag with its variable and default, and starts nothing", () => {
    const { status, stdout, stderr } = run("--help");
    expect(status).toBe(0);
    expect(stderr).toBe("");
    expect(stdout).toMatch(/^Usage: iac-code-agui /);
    const lines = stdout.split("\n");
    const settings = describedSettings();
    expect(settings.length).toBeGreaterThan(20);
    for (const setting of settings) {
      expect(setting.description.trim()).not.toBe("");
      expect(setting.default.trim()).not.toBe("");
      const at = lines.indexOf(`  ${flagName(setting.env)} <value>, ${setting.env}`);
      expect(at).toBeGreaterThan(0);
      expect(lines[at + 1]).toBe(`      ${setting.description} Default: ${setting.default}.`);
    }
    // Every variable the configuration's sources name is among them (a setting the table left out would not be).
    const sources = [
      path.join("lib", "config.ts"),
      ...readdirSync(path.join(PROJECT_ROOT, "lib", "config")).map((file) => path.join("lib", "config", file)),
    ];
    const text = sources.map((source) => readFileSync(path.join(PROJECT_ROOT, source), "utf8")).join("\n");
    const variables = new Set(text.match(/IAC_CODE_AGUI_[A-Z0-9_]+[A-Z0-9]/g));
    expect(variables.size).toBe(settings.length);
    for (const variable of variables) expect(stdout).toContain(`, ${variable}\n`);
    expect(run("--port", "1", "-h").stdout).toBe(stdout);
  });

  it("--version prints the package's version alone", () => {
    const { version } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string };
    const { status, stdout, stderr } = run("--version");
    expect({ status, stdout, stderr }).toEqual({ status: 0, stdout: `${version}\n`, stderr: "" });
    expect(run("-v").stdout).toBe(`${version}\n`);
  });

  it("an unknown flag stops the start with exit code 2, pointing at --help", () => {
    const { status, stdout, stderr } = run("--no-such-flag", "1");
    expect(status).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe("iac-code-agui: Unknown flag --no-such-flag. `iac-code-agui --help` lists them all.\n");
  });
});
