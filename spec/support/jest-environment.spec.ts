/**
 * The spec environment's temporary directory (`jest-environment.mjs`): each
 * file has its own, which the environment removes when the file ends, so
 * what one file makes there neither stays behind nor shows in another.
 */
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "@jest/globals";

describe("a spec file's temporary directory", () => {
  it("is its own, under the system's, and empty when the file starts", () => {
    expect(path.dirname(os.tmpdir())).toBe(process.env.AGUI_SPEC_SYSTEM_TMPDIR);
    expect(path.basename(os.tmpdir())).toMatch(/^agui-spec-/);
    expect(readdirSync(os.tmpdir())).toEqual([]);
  });

  it("is the one a child started with the spec's environment uses", () => {
    const childTmpdir = execFileSync(process.execPath, ["-p", "require('node:os').tmpdir()"], { env: process.env, encoding: "utf8" });
    expect(childTmpdir.trim()).toBe(os.tmpdir());
  });
});
