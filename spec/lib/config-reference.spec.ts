/**
 * The reference adapter's operator surface as `loadConfig` reads it: its
 * config file (`--config`, YAML, its keys), `--debug`, `--idle-shutdown`,
 * the kernel's own `IACCODE_A2A_ALLOWED_CWDS` and `~` in paths, and
 * `--kernel iac-code` not combined with another kernel.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";

const quiet = () => {};

function configFile(text: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "agui-config-file-")), "agui.yaml");
  writeFileSync(file, text);
  return file;
}

const REFERENCE_FILE = `# iac-code agui --config
host: 0.0.0.0
port: 8123
a2a_url: "http://127.0.0.1:41242/"
debug: true
log_stdout: true
state_dir: ~/agui-state   # the reference expands ~
idle_shutdown: 600
auth_token: 'client-secret'
a2a_token: kernel-secret
`;

describe("--config FILE", () => {
  it("reads every key of the reference's file", () => {
    const config = loadConfig(["--config", configFile(REFERENCE_FILE)], {}, quiet);
    expect(config).toMatchObject({
      host: "0.0.0.0",
      port: 8123,
      a2aUrl: "http://127.0.0.1:41242/",
      debug: true,
      logLevel: "debug",
      stateDir: path.join(os.homedir(), "agui-state"),
      idleShutdown: 600,
      authToken: "client-secret",
      a2aToken: "kernel-secret",
    });
  });

  it("reads this service's other settings by their flag in snake case, from IAC_CODE_AGUI_CONFIG too", () => {
    const file = configFile("max_active_runs: 4\nmax-runs-per-user: 2\nallowed_hosts: agui.internal, 10.0.0.7\nsandbox: off\n");
    const config = loadConfig([], { IAC_CODE_AGUI_CONFIG: file }, quiet);
    expect(config).toMatchObject({ maxActiveRuns: 4, maxRunsPerUser: 2, allowedHosts: ["agui.internal", "10.0.0.7"], sandbox: "off" });
  });

  it("is under the flags and over the environment", () => {
    const file = configFile("port: 8123\nhost: 127.0.0.2\n");
    const config = loadConfig(["--config", file, "--port", "9001"], { IAC_CODE_AGUI_PORT: "7000", IAC_CODE_AGUI_HOST: "127.0.0.3" }, quiet);
    expect(config).toMatchObject({ port: 9001, host: "127.0.0.2" });
  });

  it("refuses a key it does not know, a nested value or a file it cannot read, naming the line", () => {
    expect(() => loadConfig(["--config", configFile("prot: 8000\n")], {}, quiet)).toThrow(/agui\.yaml:1: unknown setting "prot"/);
    expect(() => loadConfig(["--config", configFile("host: a\nallowed_hosts:\n  - x\n")], {}, quiet)).toThrow(/agui\.yaml:3: .*indented/);
    expect(() => loadConfig(["--config", configFile("allowed_hosts: [a, b]\n")], {}, quiet)).toThrow(/only plain values/);
    expect(() => loadConfig(["--config", "/nonexistent/agui.yaml"], {}, quiet)).toThrow(ConfigError);
    // A value its setting refuses is refused as if set in the environment.
    expect(() => loadConfig(["--config", configFile("port: eighty\n")], {}, quiet)).toThrow(/IAC_CODE_AGUI_PORT must be an integer/);
  });

  it("warns that log_stdout: false changes nothing: the log always goes to stdout", () => {
    const warnings: string[] = [];
    loadConfig(["--config", configFile("log_stdout: false\n")], {}, (warning) => warnings.push(warning));
    expect(warnings).toEqual([expect.stringMatching(/log_stdout: false is ignored/)]);
  });
});

describe("the reference's flags and fallbacks", () => {
  it("takes --debug alone, before another flag or last, and lets a log level set itself win", () => {
    expect(loadConfig(["--debug"], {}, quiet)).toMatchObject({ debug: true, logLevel: "debug" });
    expect(loadConfig(["--debug", "--port", "9"], {}, quiet)).toMatchObject({ debug: true, port: 9, logLevel: "debug" });
    expect(loadConfig(["--debug=false"], {}, quiet)).toMatchObject({ debug: false, logLevel: "info" });
    expect(loadConfig(["--debug"], { IAC_CODE_AGUI_LOG_LEVEL: "warn" }, quiet).logLevel).toBe("warn");
  });

  it("reads --idle-shutdown in seconds", () => {
    expect(loadConfig(["--idle-shutdown", "30"], {}, quiet).idleShutdown).toBe(30);
    expect(() => loadConfig(["--idle-shutdown", "-1"], {}, quiet)).toThrow(ConfigError);
  });

  it("takes the kernel's IACCODE_A2A_ALLOWED_CWDS when IAC_CODE_AGUI_ALLOWED_CWDS is not set, ~ expanded", () => {
    const kernels = ["~/work", "/srv/repos"].join(path.delimiter);
    expect(loadConfig([], { IACCODE_A2A_ALLOWED_CWDS: kernels }, quiet).allowedCwds).toEqual([
      path.join(os.homedir(), "work"),
      "/srv/repos",
    ]);
    expect(loadConfig([], { IACCODE_A2A_ALLOWED_CWDS: kernels, IAC_CODE_AGUI_ALLOWED_CWDS: "/mine" }, quiet).allowedCwds).toEqual([
      "/mine",
    ]);
  });

  it("expands ~ in every path setting", () => {
    expect(loadConfig(["--state-dir", "~/s", "--record-dir", "~"], {}, quiet)).toMatchObject({
      stateDir: path.join(os.homedir(), "s"),
      recordDir: os.homedir(),
    });
  });

  it("runs one kernel: --kernel iac-code with an A2A URL or a kernel command is refused", () => {
    expect(loadConfig(["--kernel", "iac-code"], {}, quiet).kernel).toBe("iac-code");
    expect(() => loadConfig(["--kernel", "iac-code", "--a2a-url", "http://127.0.0.1:1/"], {}, quiet)).toThrow(
      /IAC_CODE_AGUI_A2A_URL are both set/,
    );
    expect(() => loadConfig(["--kernel", "iac-code"], { IAC_CODE_AGUI_KERNEL_COMMAND: "k {port}" }, quiet)).toThrow(/both set/);
    expect(() => loadConfig(["--kernel", "other"], {}, quiet)).toThrow(/must be one of iac-code/);
  });
});
