import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "@jest/globals";
import { DEFAULT_HISTORY_BUDGET_BYTES, DEFAULT_HISTORY_PROCESS_BUDGET_BYTES } from "../../lib/a2a/history-budget.js";
import { DEFAULT_MAX_KERNEL_RECORD_BYTES, DEFAULT_MAX_KERNEL_RESPONSE_BYTES } from "../../lib/a2a/limits.js";
import { ConfigError, DEFAULT_INTERRUPT_TTL_S, DEFAULT_LEASE_TTL_MS, checkLoopbackUrl, flagName, loadConfig } from "../../lib/config.js";

describe("loadConfig", () => {
  it("has the documented defaults", () => {
    const config = loadConfig([], {});
    expect(config).toEqual({
      host: "127.0.0.1",
      port: 8000,
      a2aUrl: undefined,
      a2aToken: undefined,
      authToken: undefined,
      stateDir: path.join(os.homedir(), ".iac-code", "agui"),
      allowedCwds: [process.cwd(), os.tmpdir()].map((p) => path.resolve(p)),
      heartbeatMs: 15_000,
      interruptTtlS: DEFAULT_INTERRUPT_TTL_S,
      recordDir: undefined,
      disconnectGraceMs: 0,
      clientStallS: 120,
      drainS: 10,
      allowedHosts: [],
      allowedOrigins: [],
      bodyTimeoutS: 30,
      maxConnections: 1024,
      maxKernelRecordBytes: DEFAULT_MAX_KERNEL_RECORD_BYTES,
      maxKernelResponseBytes: DEFAULT_MAX_KERNEL_RESPONSE_BYTES,
      logLevel: "info",
      leaseTtlMs: DEFAULT_LEASE_TTL_MS,
      historyBudgetBytes: DEFAULT_HISTORY_BUDGET_BYTES,
      historyProcessBudgetBytes: DEFAULT_HISTORY_PROCESS_BUDGET_BYTES,
    });
  });

  it("puts the state under $IAC_CODE_CONFIG_DIR when it is set, as the reference does", () => {
    expect(loadConfig([], { IAC_CODE_CONFIG_DIR: "/etc/iac-code" }).stateDir).toBe(path.resolve("/etc/iac-code/agui"));
    expect(loadConfig([], { IAC_CODE_CONFIG_DIR: "~/conf" }).stateDir).toBe(path.join(os.homedir(), "conf", "agui"));
  });

  it("reads every IAC_CODE_AGUI_* variable", () => {
    const config = loadConfig([], {
      IAC_CODE_AGUI_HOST: "0.0.0.0",
      IAC_CODE_AGUI_PORT: "9000",
      IAC_CODE_AGUI_A2A_URL: "http://localhost:41242/",
      IAC_CODE_AGUI_A2A_TOKEN: "kt",
      IAC_CODE_AGUI_AUTH_TOKEN: "at",
      IAC_CODE_AGUI_STATE_DIR: "/var/lib/agui",
      IAC_CODE_AGUI_ALLOWED_CWDS: ["/srv/a", "/srv/b"].join(path.delimiter),
      IAC_CODE_AGUI_HEARTBEAT_MS: "500",
      IAC_CODE_AGUI_INTERRUPT_TTL_S: "0",
      IAC_CODE_AGUI_RECORD_DIR: "/var/rec",
      IAC_CODE_AGUI_DISCONNECT_GRACE_MS: "5000",
      IAC_CODE_AGUI_CLIENT_STALL_S: "30",
      IAC_CODE_AGUI_DRAIN_S: "3",
      IAC_CODE_AGUI_ALLOWED_HOSTS: "agui.example, ::1,10.0.0.5",
      IAC_CODE_AGUI_ALLOWED_ORIGINS: "https://app.example, http://localhost:3000/",
      IAC_CODE_AGUI_BODY_TIMEOUT_S: "10",
      IAC_CODE_AGUI_MAX_CONNECTIONS: "64",
      IAC_CODE_AGUI_MAX_KERNEL_RECORD_BYTES: "65536",
      IAC_CODE_AGUI_MAX_KERNEL_RESPONSE_BYTES: "131072",
      IAC_CODE_AGUI_LOG_LEVEL: "debug",
      IAC_CODE_AGUI_REDIS_URL: "redis://:secret@127.0.0.1:6380/2",
      IAC_CODE_AGUI_LEASE_TTL_MS: "4000",
    });
    expect(config).toEqual({
      host: "0.0.0.0",
      port: 9000,
      a2aUrl: "http://localhost:41242/",
      a2aToken: "kt",
      authToken: "at",
      stateDir: "/var/lib/agui",
      allowedCwds: ["/srv/a", "/srv/b"],
      heartbeatMs: 500,
      interruptTtlS: 0,
      recordDir: "/var/rec",
      disconnectGraceMs: 5000,
      clientStallS: 30,
      drainS: 3,
      allowedHosts: ["agui.example", "[::1]", "10.0.0.5"],
      allowedOrigins: ["https://app.example", "http://localhost:3000"],
      bodyTimeoutS: 10,
      maxConnections: 64,
      maxKernelRecordBytes: 65_536,
      maxKernelResponseBytes: 131_072,
      logLevel: "debug",
      redisUrl: "redis://:secret@127.0.0.1:6380/2",
      leaseTtlMs: 4000,
      historyBudgetBytes: DEFAULT_HISTORY_BUDGET_BYTES,
      historyProcessBudgetBytes: DEFAULT_HISTORY_PROCESS_BUDGET_BYTES,
    });
  });

  it("takes each setting as a CLI flag too, the flag winning over the environment", () => {
    const config = loadConfig(["--port", "9100", "--heartbeat-ms=250", "--a2a-url", "http://127.0.0.2:1/"], { IAC_CODE_AGUI_PORT: "9000" });
    expect(config).toMatchObject({ port: 9100, heartbeatMs: 250, a2aUrl: "http://127.0.0.2:1/" });
    expect(flagName("IAC_CODE_AGUI_INTERRUPT_TTL_S")).toBe("--interrupt-ttl-s");
  });

  it("refuses unknown flags, missing values and bad numbers with a clear message", () => {
    expect(() => loadConfig(["--prot", "1"], {})).toThrow(/Unknown flag --prot/);
    expect(() => loadConfig(["--port"], {})).toThrow(/needs a value/);
    expect(() => loadConfig([], { IAC_CODE_AGUI_HEARTBEAT_MS: "0" })).toThrow(/IAC_CODE_AGUI_HEARTBEAT_MS must be an integer ≥ 1/);
    expect(() => loadConfig([], { IAC_CODE_AGUI_PORT: "http" })).toThrow(ConfigError);
    expect(() => loadConfig([], { IAC_CODE_AGUI_CLIENT_STALL_S: "0" })).toThrow(/IAC_CODE_AGUI_CLIENT_STALL_S must be an integer ≥ 1/);
    expect(() => loadConfig([], { IAC_CODE_AGUI_ALLOWED_HOSTS: "agui.example:8080" })).toThrow(
      /IAC_CODE_AGUI_ALLOWED_HOSTS lists "agui.example:8080"/,
    );
    expect(() => loadConfig([], { IAC_CODE_AGUI_ALLOWED_ORIGINS: "https://app.example/path" })).toThrow(/IAC_CODE_AGUI_ALLOWED_ORIGINS/);
    expect(() => loadConfig([], { IAC_CODE_AGUI_ALLOWED_ORIGINS: "null" })).toThrow(ConfigError);
  });

  it("reads the log level from IAC_CODE_AGUI_LOG_LEVEL or --log-level, and refuses one pino does not know", () => {
    expect(loadConfig(["--log-level", "warn"], { IAC_CODE_AGUI_LOG_LEVEL: "debug" }).logLevel).toBe("warn");
    expect(loadConfig([], { IAC_CODE_AGUI_LOG_LEVEL: "silent" }).logLevel).toBe("silent");
    expect(() => loadConfig([], { IAC_CODE_AGUI_LOG_LEVEL: "verbose" })).toThrow(
      /IAC_CODE_AGUI_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"/,
    );
  });
});

describe("the shared store's settings", () => {
  it("takes a redis:// or rediss:// URL, and refuses anything else without echoing it (it may hold a password)", () => {
    expect(loadConfig(["--redis-url", "rediss://db.internal:6380/0"], {}).redisUrl).toBe("rediss://db.internal:6380/0");
    expect(() => loadConfig([], { IAC_CODE_AGUI_REDIS_URL: "http://127.0.0.1:6379/" })).toThrow(/must be a redis:\/\/ or rediss:\/\/ URL/);
    const refused = (() => {
      try {
        loadConfig([], { IAC_CODE_AGUI_REDIS_URL: "not a url with hunter2" });
      } catch (error) {
        return error as Error;
      }
    })();
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused?.message).not.toContain("hunter2");
  });

  it("takes the lease TTL in milliseconds, at least 300", () => {
    expect(loadConfig(["--lease-ttl-ms", "1000"], {}).leaseTtlMs).toBe(1000);
    expect(() => loadConfig([], { IAC_CODE_AGUI_LEASE_TTL_MS: "299" })).toThrow(/IAC_CODE_AGUI_LEASE_TTL_MS must be an integer ≥ 300/);
  });
});

describe("checkLoopbackUrl (R-CON-2)", () => {
  it.each(["http://127.0.0.1:41242/", "http://localhost:1/", "https://[::1]:8443/", "http://127.8.9.10/"])("accepts %s", (url) => {
    expect(checkLoopbackUrl(url)).toBe(new URL(url).toString());
  });

  it.each([
    "http://10.0.0.5:41242/",
    "http://example.com/",
    "http://127.0.0.1.nip.io/",
    "http://0.0.0.0:1/",
    "ftp://127.0.0.1/",
    "not a url",
  ])("refuses %s", (url) => {
    expect(() => checkLoopbackUrl(url)).toThrow(ConfigError);
  });
});
