/**
 * Service configuration. Every setting is an environment variable and the
 * same-named CLI flag (`IAC_CODE_AGUI_HEARTBEAT_MS` ↔ `--heartbeat-ms`); a
 * flag wins over the environment. The names are a contract: other tools
 * start the service with them.
 */
import os from "node:os";
import path from "node:path";
import { DEFAULT_KERNEL_REQUEST_TIMEOUT_S, DEFAULT_MAX_KERNEL_RECORD_BYTES, DEFAULT_MAX_KERNEL_RESPONSE_BYTES } from "./a2a/limits.js";
import { DIALECT_SETTINGS, type DialectSetting } from "./a2a/dialect.js";
import { isLoopbackHost } from "./a2a/loopback.js";
import { hostnameOf, originOf } from "./net/host-names.js";
import { CommandLineError, splitCommandLine } from "./kernel-process/command-line.js";
import { DEFAULT_LOG_LEVEL, isLogLevel, LOG_LEVELS, type LogLevel } from "./log.js";
import { DEFAULT_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from "./state/lease-ttl.js";
import { workspaceProblem } from "./workspace.js";

export { DEFAULT_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from "./state/lease-ttl.js";

export interface Config {
  host: string;
  port: number;
  /** The kernel's JSON-RPC URL; undefined → start the embedded demo kernel. */
  a2aUrl: string | undefined;
  a2aToken: string | undefined;
  authToken: string | undefined;
  stateDir: string;
  allowedCwds: string[];
  heartbeatMs: number;
  /** Interrupt time-to-live in seconds; 0 disables expiry. */
  interruptTtlS: number;
  /** Recorder mode: each upstream run is written here as a replayable fixture. */
  recordDir: string | undefined;
  /** How long a disconnected client may come back (as an observer) before its task is cancelled; 0 = at once. */
  disconnectGraceMs: number;
  /** How long a client may take nothing of its stream while bytes wait for it before it counts as gone, in seconds. */
  clientStallS: number;
  /** On SIGTERM or SIGINT, how long runs in flight may go on before they are stopped, in seconds; 0 = stop them at once. */
  drainS: number;
  // The HTTP edge (see `http/origin-guard.ts` and `http/json-body.ts`).
  /** Host names requests may name besides loopback and `host` (normalized by `hostnameOf`). */
  allowedHosts: string[];
  /** Origins of other sites' pages that may call the service, CORS included (normalized by `originOf`). */
  allowedOrigins: string[];
  /** How long a request body may take to arrive, in seconds. */
  bodyTimeoutS: number;
  /** Connections held at once; further ones are closed as they arrive. */
  maxConnections: number;
  // What the kernel may send (see `a2a/limits.ts`): past either, the run ends with A2A_PROTOCOL_ERROR.
  /** One SSE record of a kernel stream, in bytes. */
  maxKernelRecordBytes: number;
  /** A non-SSE (JSON) answer of the kernel, in bytes. */
  maxKernelResponseBytes: number;
  // Generic AG-UI clients (CopilotKit and the like), both off by default: the strict protocol stays the default.
  /** The workspace of a request that sends no `forwardedProps.iacCode`; unset, such a request is refused. */
  defaultCwd?: string | undefined;
  /** Declared client `tools`: refused (unset, "refuse") or accepted and never offered to the kernel ("ignore"). */
  clientTools?: ClientToolsPolicy | undefined;
  // A kernel the service runs itself (see `kernel-process/supervisor.ts`); unset, the kernel is `a2aUrl` or the embedded demo.
  /** `IAC_CODE_AGUI_KERNEL_COMMAND` as the words to spawn, `{port}` among them (see `kernel-process/command-line.ts`). */
  kernelCommand?: string[] | undefined;
  /** How long that kernel may take to answer its agent card after a start, in seconds; unset, `DEFAULT_KERNEL_START_TIMEOUT_S`. */
  kernelStartTimeoutS?: number | undefined;
  /** The least severe log records written (see `log.ts`); default `info`. */
  logLevel?: LogLevel | undefined;
  /** Kernel calls other than open streams, in seconds; unset, `DEFAULT_KERNEL_REQUEST_TIMEOUT_S` (an hour: a restore is slow). */
  kernelRequestTimeoutS?: number | undefined;
  // Several instances on one set of threads (see `state/redis-thread-store.ts`).
  /** Redis URL (`redis://host:port/db`) where thread state and leases live, shared by every instance; unset, the file store under `stateDir`. */
  redisUrl?: string | undefined;
  /**
   * How long a run's lease on its thread lasts without renewal, in milliseconds (renewed every third of it while the run
   * lives). With Redis, an instance that dies mid-run blocks its threads for at most this long.
   */
  leaseTtlMs?: number | undefined;
  /** The A2A dialect the kernel speaks: read from its agent card (`auto`, unset), or fixed (see `a2a/dialect.ts`). */
  a2aDialect?: DialectSetting | undefined;
  /** The sandbox page and its fixture replay (`GET /sandbox`, `POST /sandbox/replay`): served (`on`, unset) or not at all (`off`). */
  sandbox?: SandboxSetting | undefined;
}

export const CLIENT_TOOLS_POLICIES = ["refuse", "ignore"] as const;
export type ClientToolsPolicy = (typeof CLIENT_TOOLS_POLICIES)[number];

export const SANDBOX_SETTINGS = ["on", "off"] as const;
export type SandboxSetting = (typeof SANDBOX_SETTINGS)[number];

export const DEFAULT_INTERRUPT_TTL_S = 540;
/** Two minutes without a byte taken: longer than any real client on a bad network stays silent (see README). */
export const DEFAULT_CLIENT_STALL_S = 120;
export const DEFAULT_DRAIN_S = 10;
/** A real kernel loads its model clients and tools before it answers: half a minute, not the demo's split second. */
export const DEFAULT_KERNEL_START_TIMEOUT_S = 30;

/** One setting as `--help` tells it: its variable (the flag is named after it, see `flagName`), its default, what it does. */
export interface Setting {
  env: string;
  /** As a reader would write it, or what happens when it is unset. */
  default: string;
  description: string;
}

/**
 * Every setting, with what `--help` says of it: a setting added to `Config`
 * must be described here, or this does not compile.
 */
const SETTING_TABLE = {
  host: { env: "IAC_CODE_AGUI_HOST", default: "127.0.0.1", description: "The address the service listens on." },
  port: {
    env: "IAC_CODE_AGUI_PORT",
    default: "8080",
    description: "The port the service listens on; 0 picks a free one (the log says which).",
  },
  a2aUrl: {
    env: "IAC_CODE_AGUI_A2A_URL",
    default: "unset: the embedded demo kernel",
    description: "The JSON-RPC URL of the A2A kernel; it must be on loopback.",
  },
  a2aToken: { env: "IAC_CODE_AGUI_A2A_TOKEN", default: "none", description: "The bearer token sent to the kernel on every call." },
  authToken: {
    env: "IAC_CODE_AGUI_AUTH_TOKEN",
    default: "none: no authentication",
    description: "The bearer token clients must send (every route but /health, /ready and the sandbox page).",
  },
  stateDir: {
    env: "IAC_CODE_AGUI_STATE_DIR",
    default: "$XDG_CONFIG_HOME/agui (~/.config/agui)",
    description: "Where the file store keeps thread state.",
  },
  allowedCwds: {
    env: "IAC_CODE_AGUI_ALLOWED_CWDS",
    default: "the working directory and the temp directory",
    description: `The directories a run's workspace may be in, separated by "${path.delimiter}".`,
  },
  heartbeatMs: {
    env: "IAC_CODE_AGUI_HEARTBEAT_MS",
    default: "15000",
    description: "How often an idle stream sends a heartbeat, in milliseconds.",
  },
  interruptTtlS: {
    env: "IAC_CODE_AGUI_INTERRUPT_TTL_S",
    default: `${DEFAULT_INTERRUPT_TTL_S}`,
    description: "How long an interrupt waits for its answer, in seconds; 0 = forever.",
  },
  recordDir: {
    env: "IAC_CODE_AGUI_RECORD_DIR",
    default: "unset: nothing recorded",
    description: "Records each kernel stream there as a replayable fixture.",
  },
  disconnectGraceMs: {
    env: "IAC_CODE_AGUI_DISCONNECT_GRACE_MS",
    default: "0: at once",
    description: "How long a client that left may come back before its task is cancelled, in milliseconds.",
  },
  clientStallS: {
    env: "IAC_CODE_AGUI_CLIENT_STALL_S",
    default: `${DEFAULT_CLIENT_STALL_S}`,
    description: "How long a client may take nothing of its stream before it counts as gone, in seconds.",
  },
  drainS: {
    env: "IAC_CODE_AGUI_DRAIN_S",
    default: `${DEFAULT_DRAIN_S}`,
    description: "On SIGTERM or SIGINT, how long runs in flight may go on, in seconds; 0 = stop them at once.",
  },
  allowedHosts: {
    env: "IAC_CODE_AGUI_ALLOWED_HOSTS",
    default: "none: loopback names and the host only",
    description: "Comma-separated host names requests may name besides loopback and the host.",
  },
  allowedOrigins: {
    env: "IAC_CODE_AGUI_ALLOWED_ORIGINS",
    default: "none",
    description: "Comma-separated origins of other sites' pages that may call the service (CORS).",
  },
  bodyTimeoutS: {
    env: "IAC_CODE_AGUI_BODY_TIMEOUT_S",
    default: "30",
    description: "How long a request body may take to arrive, in seconds.",
  },
  maxConnections: {
    env: "IAC_CODE_AGUI_MAX_CONNECTIONS",
    default: "1024",
    description: "Connections held at once; further ones are closed as they arrive.",
  },
  maxKernelRecordBytes: {
    env: "IAC_CODE_AGUI_MAX_KERNEL_RECORD_BYTES",
    default: `${DEFAULT_MAX_KERNEL_RECORD_BYTES}`,
    description: "The largest SSE record of a kernel stream, in bytes (at least 65536).",
  },
  maxKernelResponseBytes: {
    env: "IAC_CODE_AGUI_MAX_KERNEL_RESPONSE_BYTES",
    default: `${DEFAULT_MAX_KERNEL_RESPONSE_BYTES}`,
    description: "The largest JSON answer of the kernel, in bytes (at least 1024).",
  },
  defaultCwd: {
    env: "IAC_CODE_AGUI_DEFAULT_CWD",
    default: "unset: such requests are refused",
    description: "The workspace of a request that sends no forwardedProps.iacCode (generic AG-UI clients).",
  },
  clientTools: {
    env: "IAC_CODE_AGUI_CLIENT_TOOLS",
    default: "refuse",
    description: `What to do with a request's declared client tools: ${CLIENT_TOOLS_POLICIES.join(" or ")}.`,
  },
  kernelCommand: {
    env: "IAC_CODE_AGUI_KERNEL_COMMAND",
    default: "unset",
    description: "A kernel for the service to run itself: the command line, with {port} where its port goes.",
  },
  kernelStartTimeoutS: {
    env: "IAC_CODE_AGUI_KERNEL_START_TIMEOUT_S",
    default: `${DEFAULT_KERNEL_START_TIMEOUT_S}`,
    description: "How long that kernel may take to answer its agent card after a start, in seconds.",
  },
  logLevel: {
    env: "IAC_CODE_AGUI_LOG_LEVEL",
    default: DEFAULT_LOG_LEVEL,
    description: `The least severe log records written: ${LOG_LEVELS.join(", ")}.`,
  },
  kernelRequestTimeoutS: {
    env: "IAC_CODE_AGUI_KERNEL_REQUEST_TIMEOUT_S",
    default: `${DEFAULT_KERNEL_REQUEST_TIMEOUT_S}`,
    description: "How long a kernel call other than an open stream may take, in seconds.",
  },
  redisUrl: {
    env: "IAC_CODE_AGUI_REDIS_URL",
    default: "unset: the file store under the state directory",
    description: "The Redis (redis:// or rediss://) where thread state and leases live, shared by every instance.",
  },
  leaseTtlMs: {
    env: "IAC_CODE_AGUI_LEASE_TTL_MS",
    default: `${DEFAULT_LEASE_TTL_MS}`,
    description: `How long a run's lease on its thread lasts unrenewed, in milliseconds (at least ${MIN_LEASE_TTL_MS}): how long a dead instance's threads wait.`,
  },
  a2aDialect: {
    env: "IAC_CODE_AGUI_A2A_DIALECT",
    default: "auto: from the agent card",
    description: `The A2A dialect the kernel speaks: ${DIALECT_SETTINGS.join(", ")} (auto reads the agent card's protocol version).`,
  },
  sandbox: {
    env: "IAC_CODE_AGUI_SANDBOX",
    default: "on",
    description: "Whether the sandbox page and its fixture replay are served (on, off); a production service may leave them off.",
  },
} as const satisfies Record<keyof Config, Setting>;

/** Each setting's variable, by its `Config` key. */
const SETTINGS = Object.fromEntries(Object.entries(SETTING_TABLE).map(([key, setting]) => [key, setting.env])) as {
  readonly [K in keyof Config]-?: (typeof SETTING_TABLE)[K]["env"];
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** `IAC_CODE_AGUI_HEARTBEAT_MS` → `--heartbeat-ms`. */
export const flagName = (envName: string) =>
  "--" +
  envName
    .replace(/^IAC_CODE_AGUI_/, "")
    .toLowerCase()
    .replaceAll("_", "-");

/** Every setting as `--help` tells it, in its order. */
export const describedSettings = (): readonly Setting[] => Object.values(SETTING_TABLE);

/** What `--help` prints: every setting's flag, variable, default and description, from `SETTING_TABLE`. */
export function usage(): string {
  const settings = describedSettings().flatMap((setting) => [
    `  ${flagName(setting.env)} <value>, ${setting.env}`,
    `      ${setting.description} Default: ${setting.default}.`,
  ]);
  return [
    "Usage: iac-code-agui [--flag value | --flag=value]...",
    "       iac-code-agui --help | --version",
    "",
    "Each flag can also be set by its environment variable; a flag wins.",
    "",
    ...settings,
  ].join("\n");
}

/** Reads `--name value` and `--name=value` pairs into an env-shaped map. */
function parseFlags(argv: readonly string[]): Record<string, string> {
  const byFlag = new Map(Object.values(SETTINGS).map((env) => [flagName(env), env]));
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf("=");
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const env = byFlag.get(flag);
    if (!env) throw new ConfigError(`Unknown flag ${flag}. \`iac-code-agui --help\` lists them all.`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new ConfigError(`Flag ${flag} needs a value.`);
    out[env] = value;
  }
  return out;
}

function integer(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer ≥ ${min}, got "${raw}".`);
  return value;
}

/** Where per-user configuration lives: `$XDG_CONFIG_HOME`, else `~/.config` (`%APPDATA%` on Windows). */
export function configHome(env: NodeJS.ProcessEnv): string {
  if (env.XDG_CONFIG_HOME) return env.XDG_CONFIG_HOME;
  if (process.platform === "win32" && env.APPDATA) return env.APPDATA;
  return path.join(os.homedir(), ".config");
}

/** R-CON-2: the kernel must be on this machine; a remote URL is refused at start (and every request checks again, see `a2a/loopback.ts`). */
export function checkLoopbackUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`IAC_CODE_AGUI_A2A_URL is not a URL: "${raw}".`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`IAC_CODE_AGUI_A2A_URL must be http(s), got "${url.protocol}".`);
  }
  const host = url.hostname;
  if (!isLoopbackHost(host)) {
    throw new ConfigError(
      `IAC_CODE_AGUI_A2A_URL must point at a loopback address (127.0.0.0/8, ::1 or localhost); "${host}" is not one. ` +
        "The adapter forwards credentials to the kernel, so it only talks to a kernel on this machine.",
    );
  }
  return url.toString();
}

/** A comma-separated list, each entry read by `parse`; an entry it cannot read stops the start. */
function list(name: string, raw: string | undefined, parse: (entry: string) => string | undefined, what: string): string[] {
  return (raw ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const parsed = parse(entry);
      if (parsed === undefined) throw new ConfigError(`${name} lists "${entry}", which is not ${what}.`);
      return parsed;
    });
}

/** A bare IPv6 address (`::1`) as a Host header would write it (`[::1]`); a port is not part of an allowed host. */
function allowedHost(entry: string): string | undefined {
  const bracketed = entry.includes(":") && !entry.startsWith("[") ? `[${entry}]` : entry;
  return /\]:/.test(bracketed) ? undefined : hostnameOf(bracketed);
}

/**
 * The token clients must send. Set but empty would turn authentication off
 * without a word, so it stops the start; spaces around it could never be
 * sent (HTTP trims header values), so they are left out, with a warning.
 */
function authToken(raw: string | undefined, warn: (message: string) => void): string | undefined {
  if (raw === undefined) return undefined;
  const name = `${SETTINGS.authToken} (${flagName(SETTINGS.authToken)})`;
  const token = raw.trim();
  if (token === "") {
    throw new ConfigError(`${name} is set but empty, which would turn authentication off. Give a token, or unset it to run without one.`);
  }
  if (token !== raw) warn(`${name} has spaces around it; they are left out, as a client cannot send them in an Authorization header.`);
  return token;
}

/**
 * The workspace of requests that send no iacCode (`IAC_CODE_AGUI_DEFAULT_CWD`),
 * held to what a request's own cwd is held to, at start: a mistake stops the
 * service rather than failing every such request.
 */
function defaultCwd(raw: string | undefined, allowedCwds: readonly string[]): string | undefined {
  if (raw === undefined) return undefined;
  const cwd = path.resolve(raw);
  const problem = workspaceProblem(cwd, allowedCwds);
  if (problem) throw new ConfigError(`${SETTINGS.defaultCwd} (${flagName(SETTINGS.defaultCwd)}) "${raw}" ${problem}.`);
  return cwd;
}

function clientTools(raw: string | undefined): ClientToolsPolicy | undefined {
  if (raw === undefined) return undefined;
  const policy = CLIENT_TOOLS_POLICIES.find((known) => known === raw);
  if (!policy) throw new ConfigError(`${SETTINGS.clientTools} must be one of ${CLIENT_TOOLS_POLICIES.join(", ")}, got "${raw}".`);
  return policy;
}

function sandbox(raw: string | undefined): SandboxSetting | undefined {
  if (raw === undefined) return undefined;
  const setting = SANDBOX_SETTINGS.find((known) => known === raw);
  if (!setting) throw new ConfigError(`${SETTINGS.sandbox} must be one of ${SANDBOX_SETTINGS.join(", ")}, got "${raw}".`);
  return setting;
}

function logLevel(raw: string | undefined): LogLevel {
  if (raw === undefined) return DEFAULT_LOG_LEVEL;
  if (!isLogLevel(raw)) throw new ConfigError(`${SETTINGS.logLevel} must be one of ${LOG_LEVELS.join(", ")}, got "${raw}".`);
  return raw;
}

function optionalInteger(name: string, raw: string | undefined, min: number): number | undefined {
  return raw === undefined ? undefined : integer(name, raw, min, min);
}

/** The command the service runs as its kernel; it replaces a kernel URL, so both together stop the start. */
function kernelCommand(raw: string | undefined, a2aUrl: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const name = `${SETTINGS.kernelCommand} (${flagName(SETTINGS.kernelCommand)})`;
  if (a2aUrl !== undefined) {
    throw new ConfigError(`${name} and ${SETTINGS.a2aUrl} are both set: the service either runs its kernel or is given its URL, not both.`);
  }
  try {
    return splitCommandLine(raw);
  } catch (error) {
    if (error instanceof CommandLineError) throw new ConfigError(`${name} ${error.message}.`);
    throw error;
  }
}

/** `auto` (the agent card decides), `1.0` or `0.3`; anything else stops the service at start. */
function a2aDialect(raw: string | undefined): DialectSetting | undefined {
  if (raw === undefined) return undefined;
  const setting = DIALECT_SETTINGS.find((known) => known === raw.trim().toLowerCase());
  if (setting === undefined) {
    throw new ConfigError(
      `${SETTINGS.a2aDialect} (${flagName(SETTINGS.a2aDialect)}) must be one of ${DIALECT_SETTINGS.join(", ")}, got "${raw}".`,
    );
  }
  return setting;
}

/** A Redis URL (`redis:` or `rediss:`), checked at start so a typo stops the service instead of failing every request. */
function redisUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const name = `${SETTINGS.redisUrl} (${flagName(SETTINGS.redisUrl)})`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not echoed: a Redis URL may carry a password.
    throw new ConfigError(`${name} is not a URL.`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new ConfigError(`${name} must be a redis:// or rediss:// URL, got "${url.protocol}".`);
  }
  return raw;
}

const warnOnStderr = (message: string) => console.error(`iac-code-agui: warning: ${message}`);

export function loadConfig(
  argv: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = warnOnStderr,
): Config {
  const merged = { ...env, ...parseFlags(argv) };
  const read = (key: keyof Config) => {
    const value = merged[SETTINGS[key]];
    return value === undefined || value === "" ? undefined : value;
  };
  const a2aUrl = read("a2aUrl");
  const cwds = read("allowedCwds");
  const allowedCwds = (cwds ? cwds.split(path.delimiter).filter(Boolean) : [process.cwd(), os.tmpdir()]).map((p) => path.resolve(p));
  return {
    host: read("host") ?? "127.0.0.1",
    port: integer(SETTINGS.port, read("port"), 8080, 0),
    a2aUrl: a2aUrl === undefined ? undefined : checkLoopbackUrl(a2aUrl),
    a2aToken: read("a2aToken"),
    authToken: authToken(merged[SETTINGS.authToken], warn),
    stateDir: path.resolve(read("stateDir") ?? path.join(configHome(env), "agui")),
    allowedCwds,
    heartbeatMs: integer(SETTINGS.heartbeatMs, read("heartbeatMs"), 15_000, 1),
    interruptTtlS: integer(SETTINGS.interruptTtlS, read("interruptTtlS"), DEFAULT_INTERRUPT_TTL_S, 0),
    recordDir: read("recordDir") === undefined ? undefined : path.resolve(read("recordDir")!),
    disconnectGraceMs: integer(SETTINGS.disconnectGraceMs, read("disconnectGraceMs"), 0, 0),
    clientStallS: integer(SETTINGS.clientStallS, read("clientStallS"), DEFAULT_CLIENT_STALL_S, 1),
    drainS: integer(SETTINGS.drainS, read("drainS"), DEFAULT_DRAIN_S, 0),
    allowedHosts: list(SETTINGS.allowedHosts, read("allowedHosts"), allowedHost, "a host name or address without a port"),
    allowedOrigins: list(SETTINGS.allowedOrigins, read("allowedOrigins"), originOf, "an origin such as https://app.example:8443"),
    bodyTimeoutS: integer(SETTINGS.bodyTimeoutS, read("bodyTimeoutS"), 30, 1),
    maxConnections: integer(SETTINGS.maxConnections, read("maxConnections"), 1024, 1),
    maxKernelRecordBytes: integer(SETTINGS.maxKernelRecordBytes, read("maxKernelRecordBytes"), DEFAULT_MAX_KERNEL_RECORD_BYTES, 64 * 1024),
    maxKernelResponseBytes: integer(
      SETTINGS.maxKernelResponseBytes,
      read("maxKernelResponseBytes"),
      DEFAULT_MAX_KERNEL_RESPONSE_BYTES,
      1024,
    ),
    defaultCwd: defaultCwd(read("defaultCwd"), allowedCwds),
    clientTools: clientTools(read("clientTools")),
    kernelCommand: kernelCommand(read("kernelCommand"), a2aUrl),
    // Unset stays unset, as for the other optional settings; the service applies DEFAULT_KERNEL_START_TIMEOUT_S.
    kernelStartTimeoutS: optionalInteger(SETTINGS.kernelStartTimeoutS, read("kernelStartTimeoutS"), 1),
    logLevel: logLevel(read("logLevel")),
    kernelRequestTimeoutS: optionalInteger(SETTINGS.kernelRequestTimeoutS, read("kernelRequestTimeoutS"), 1),
    redisUrl: redisUrl(read("redisUrl")),
    leaseTtlMs: integer(SETTINGS.leaseTtlMs, read("leaseTtlMs"), DEFAULT_LEASE_TTL_MS, MIN_LEASE_TTL_MS),
    a2aDialect: a2aDialect(read("a2aDialect")),
    sandbox: sandbox(read("sandbox")),
  };
}
