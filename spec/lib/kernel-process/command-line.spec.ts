/**
 * `IAC_CODE_AGUI_KERNEL_COMMAND` as words to spawn without a shell, and the
 * settings around it as `loadConfig` reads them.
 */
import { describe, expect, it } from "@jest/globals";
import { ConfigError, DEFAULT_KERNEL_START_TIMEOUT_S, loadConfig } from "../../../lib/config.js";
import { CommandLineError, splitCommandLine, withPort } from "../../../lib/kernel-process/command-line.js";

describe("splitCommandLine", () => {
  it.each([
    ["node dist/lib/kernel/main.js --port {port}", ["node", "dist/lib/kernel/main.js", "--port", "{port}"]],
    ["  iac-code   a2a\t--port={port}  ", ["iac-code", "a2a", "--port={port}"]],
    [`'/opt/my kernel/bin' --port {port}`, ["/opt/my kernel/bin", "--port", "{port}"]],
    [`"/opt/my kernel/bin" --name "say \\"hi\\" \\\\ there" {port}`, ["/opt/my kernel/bin", "--name", 'say "hi" \\ there', "{port}"]],
    [`kernel --motd 'a $HOME | b; c' {port}`, ["kernel", "--motd", "a $HOME | b; c", "{port}"]],
    [`kernel my\\ dir '' {port}`, ["kernel", "my dir", "", "{port}"]],
    [`sh -c 'exec kernel --port "$0"' {port}`, ["sh", "-c", 'exec kernel --port "$0"', "{port}"]],
    [`kernel --listen=127.0.0.1:{port}`, ["kernel", "--listen=127.0.0.1:{port}"]],
  ])("splits %s", (line, words) => {
    expect(splitCommandLine(line)).toEqual(words);
  });

  it.each([
    ["kernel --port {port} && echo started", /unquoted "&"/],
    ["kernel --port {port} | tee log", /unquoted "\|"/],
    ["kernel --port {port} > log", /unquoted ">"/],
    ["$HOME/kernel --port {port}", /unquoted "\$"/],
    ["kernel --port `free-port`", /unquoted "`"/],
    ["kernel --port {port}; rm -rf x", /unquoted ";"/],
    ["kernel 'unclosed {port}", /unclosed '/],
    ['kernel "unclosed {port}', /unclosed "/],
    ["kernel {port} \\", /lone backslash/],
    ["   ", /is empty/],
    ["kernel --port 41242", /does not name \{port\}/],
  ])("refuses %s", (line, reason) => {
    expect(() => splitCommandLine(line)).toThrow(CommandLineError);
    expect(() => splitCommandLine(line)).toThrow(reason);
  });

  it("puts the port in every word that names it", () => {
    expect(withPort(["kernel", "--port", "{port}", "--url=http://127.0.0.1:{port}/"], 41999)).toEqual([
      "kernel",
      "--port",
      "41999",
      "--url=http://127.0.0.1:41999/",
    ]);
  });
});

describe("the kernel command settings", () => {
  const load = (argv: string[], env: Record<string, string> = {}) => loadConfig(argv, env, () => {});

  it("are unset by default: the embedded demo kernel, or the given URL, is the kernel", () => {
    const config = load([]);
    expect(config.kernelCommand).toBeUndefined();
    // The service applies DEFAULT_KERNEL_START_TIMEOUT_S (see service-kernel.ts).
    expect(config.kernelStartTimeoutS).toBeUndefined();
    expect(DEFAULT_KERNEL_START_TIMEOUT_S).toBe(30);
  });

  it("read the command from the environment or the flag, the flag winning", () => {
    expect(load([], { IAC_CODE_AGUI_KERNEL_COMMAND: "iac-code a2a --port {port}" }).kernelCommand).toEqual([
      "iac-code",
      "a2a",
      "--port",
      "{port}",
    ]);
    const both = load(["--kernel-command", "node kernel.js --port={port}", "--kernel-start-timeout-s=5"], {
      IAC_CODE_AGUI_KERNEL_COMMAND: "iac-code a2a --port {port}",
    });
    expect(both.kernelCommand).toEqual(["node", "kernel.js", "--port={port}"]);
    expect(both.kernelStartTimeoutS).toBe(5);
  });

  it("refuse a command that cannot run without a shell, naming the setting", () => {
    expect(() => load([], { IAC_CODE_AGUI_KERNEL_COMMAND: "kernel --port {port} &" })).toThrow(ConfigError);
    expect(() => load([], { IAC_CODE_AGUI_KERNEL_COMMAND: "kernel --port {port} &" })).toThrow(
      /^IAC_CODE_AGUI_KERNEL_COMMAND \(--kernel-command\) has an unquoted "&"/,
    );
    expect(() => load(["--kernel-command", "kernel"])).toThrow(/does not name \{port\}/);
  });

  it("refuse a command together with a kernel URL", () => {
    expect(() =>
      load([], { IAC_CODE_AGUI_KERNEL_COMMAND: "kernel --port {port}", IAC_CODE_AGUI_A2A_URL: "http://127.0.0.1:41242/" }),
    ).toThrow(/IAC_CODE_AGUI_KERNEL_COMMAND \(--kernel-command\) and IAC_CODE_AGUI_A2A_URL are both set/);
  });

  it("refuse a start timeout under a second", () => {
    expect(() => load([], { IAC_CODE_AGUI_KERNEL_START_TIMEOUT_S: "0" })).toThrow(
      /IAC_CODE_AGUI_KERNEL_START_TIMEOUT_S must be an integer ≥ 1/,
    );
  });
});
