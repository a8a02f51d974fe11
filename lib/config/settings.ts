/**
 * Every setting, written once: its variable and flag, how its text is read,
 * its default and what `--help` says of it. The `Config` type, `--help`,
 * the reading of the environment and the flags, and the defaults all come
 * from this table (see `load.ts`); a setting added here is read, typed and
 * described, and one left out is none of these.
 */
import os from "node:os";
import path from "node:path";
import {
  DEFAULT_KERNEL_FIRST_BYTE_TIMEOUT_S,
  DEFAULT_KERNEL_REQUEST_TIMEOUT_S,
  DEFAULT_MAX_KERNEL_RECORD_BYTES,
  DEFAULT_MAX_KERNEL_RESPONSE_BYTES,
} from "../a2a/limits.js";
import { DIALECT_SETTINGS } from "../a2a/dialect.js";
import { DEFAULT_SANDBOX_MAX_REPLAYS } from "../http/replay-slots.js";
import { DEFAULT_HISTORY_BUDGET_BYTES, DEFAULT_HISTORY_PROCESS_BUDGET_BYTES } from "../a2a/history-budget.js";
import { LOG_LEVELS, DEFAULT_LOG_LEVEL } from "../log.js";
import { originOf } from "../net/host-names.js";
import { DEFAULT_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from "../state/lease-ttl.js";
import { DEFAULT_THREAD_RETENTION_S } from "../state/thread-retention.js";
import { setting, settingName, type ConfigOf } from "./descriptor.js";
import {
  allowedHost,
  bearerToken,
  boolean,
  checkLoopbackUrl,
  commaList,
  commandLine,
  dialect,
  expandHome,
  integer,
  oneOf,
  pathList,
  redisUrl,
  resolvedPath,
  text,
} from "./parsers.js";

export const CLIENT_TOOLS_POLICIES = ["refuse", "ignore"] as const;
export type ClientToolsPolicy = (typeof CLIENT_TOOLS_POLICIES)[number];

export const SANDBOX_SETTINGS = ["on", "off"] as const;

/** Kernels the service knows how to run by name. */
export const KERNELS = ["iac-code"] as const;
export type SandboxSetting = (typeof SANDBOX_SETTINGS)[number];

export const DEFAULT_INTERRUPT_TTL_S = 540;
/** Two minutes without a byte taken: longer than any real client on a bad network stays silent (see README). */
export const DEFAULT_CLIENT_STALL_S = 120;
export const DEFAULT_DRAIN_S = 10;
/** A real kernel loads its model clients and tools before it answers: half a minute, not the demo's split second. */
export const DEFAULT_KERNEL_START_TIMEOUT_S = 30;

/** Where per-user configuration lives: `$XDG_CONFIG_HOME`, else `~/.config` (`%APPDATA%` on Windows). */
export function configHome(env: NodeJS.ProcessEnv): string {
  if (env.XDG_CONFIG_HOME) return env.XDG_CONFIG_HOME;
  if (process.platform === "win32" && env.APPDATA) return env.APPDATA;
  return path.join(os.homedir(), ".config");
}

/**
 * The reference adapter's state directory, so its threads are this service's: `$IAC_CODE_CONFIG_DIR/agui`
 * (iac-code's own configuration directory), else `~/.iac-code/agui`.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv): string {
  const configDir = env.IAC_CODE_CONFIG_DIR ? expandHome(env.IAC_CODE_CONFIG_DIR) : path.join(os.homedir(), ".iac-code");
  return path.resolve(configDir, "agui");
}

/** Where versions before 0.2 kept thread state by default: read too, so an upgrade loses no thread (see `legacy-state-dir.ts`). */
export const legacyStateDir = (env: NodeJS.ProcessEnv): string => path.resolve(configHome(env), "agui");

/** Every setting, in the order `--help` lists them. The comment on a row is its `Config` field's. */
export const SETTING_TABLE = {
  host: setting({
    env: "IAC_CODE_AGUI_HOST",
    parse: text,
    default: { value: "127.0.0.1" },
    description: "The address the service listens on.",
  }),
  port: setting({
    env: "IAC_CODE_AGUI_PORT",
    parse: integer(0),
    // The reference adapter's port: a client or proxy set up for `iac-code agui` finds this service where it was.
    default: { value: 8000 },
    description: "The port the service listens on; 0 picks a free one (the log says which).",
  }),
  /** The kernel's JSON-RPC URL; undefined → start the embedded demo kernel. */
  a2aUrl: setting({
    env: "IAC_CODE_AGUI_A2A_URL",
    parse: checkLoopbackUrl,
    default: { unset: true, note: "the embedded demo kernel" },
    description: "The JSON-RPC URL of the A2A kernel; it must be on loopback.",
  }),
  a2aToken: setting({
    env: "IAC_CODE_AGUI_A2A_TOKEN",
    parse: text,
    default: { unset: true, note: "none sent" },
    description: "The bearer token sent to the kernel on every call.",
  }),
  authToken: setting({
    env: "IAC_CODE_AGUI_AUTH_TOKEN",
    parse: bearerToken,
    readsEmpty: true,
    default: { unset: true, note: "no authentication" },
    description: "The bearer token clients must send (every route but /health, /ready and the sandbox page).",
  }),
  stateDir: setting({
    env: "IAC_CODE_AGUI_STATE_DIR",
    parse: resolvedPath,
    default: { from: defaultStateDir, told: "$IAC_CODE_CONFIG_DIR/agui (~/.iac-code/agui)" },
    description: "Where the file store keeps thread state (threads left in ~/.config/agui by earlier versions are read too).",
  }),
  allowedCwds: setting({
    env: "IAC_CODE_AGUI_ALLOWED_CWDS",
    parse: pathList,
    default: {
      from: (env) =>
        env.IACCODE_A2A_ALLOWED_CWDS
          ? pathList(env.IACCODE_A2A_ALLOWED_CWDS, settingName("IACCODE_A2A_ALLOWED_CWDS"), () => {})
          : [process.cwd(), os.tmpdir()].map((p) => path.resolve(p)),
      told: "$IACCODE_A2A_ALLOWED_CWDS (the kernel's own setting), else the working directory and the temp directory",
    },
    description: `The directories a run's workspace may be in, separated by "${path.delimiter}".`,
  }),
  heartbeatMs: setting({
    env: "IAC_CODE_AGUI_HEARTBEAT_MS",
    parse: integer(1),
    default: { value: 15_000 },
    description: "How often an idle stream sends a heartbeat, in milliseconds.",
  }),
  /** Interrupt time-to-live in seconds; 0 disables expiry. */
  interruptTtlS: setting({
    env: "IAC_CODE_AGUI_INTERRUPT_TTL_S",
    parse: integer(0),
    default: { value: DEFAULT_INTERRUPT_TTL_S },
    description: "How long an interrupt waits for its answer, in seconds; 0 = forever.",
  }),
  /** Recorder mode: each upstream run is written here as a replayable fixture. */
  recordDir: setting({
    env: "IAC_CODE_AGUI_RECORD_DIR",
    parse: resolvedPath,
    default: { unset: true, note: "nothing recorded" },
    description: "Records each kernel stream there as a replayable fixture.",
  }),
  /** How long a disconnected client may come back (as an observer) before its task is cancelled; 0 = at once. */
  disconnectGraceMs: setting({
    env: "IAC_CODE_AGUI_DISCONNECT_GRACE_MS",
    parse: integer(0),
    default: { value: 0, note: "at once" },
    description: "How long a client that left may come back before its task is cancelled, in milliseconds.",
  }),
  /** How long a client may take nothing of its stream while bytes wait for it before it counts as gone, in seconds. */
  clientStallS: setting({
    env: "IAC_CODE_AGUI_CLIENT_STALL_S",
    parse: integer(1),
    default: { value: DEFAULT_CLIENT_STALL_S },
    description: "How long a client may take nothing of its stream before it counts as gone, in seconds.",
  }),
  /** On SIGTERM or SIGINT, how long runs in flight may go on before they are stopped, in seconds; 0 = stop them at once. */
  drainS: setting({
    env: "IAC_CODE_AGUI_DRAIN_S",
    parse: integer(0),
    default: { value: DEFAULT_DRAIN_S },
    description: "On SIGTERM or SIGINT, how long runs in flight may go on, in seconds; 0 = stop them at once.",
  }),
  // The HTTP edge (see `http/origin-guard.ts` and `http/json-body.ts`).
  /** Host names requests may name besides loopback and `host` (normalized by `hostnameOf`). */
  allowedHosts: setting({
    env: "IAC_CODE_AGUI_ALLOWED_HOSTS",
    parse: commaList(allowedHost, "a host name or address without a port"),
    default: { value: [], note: "loopback names and the host only" },
    description: "Comma-separated host names requests may name besides loopback and the host.",
  }),
  /** Origins of other sites' pages that may call the service, CORS included (normalized by `originOf`). */
  allowedOrigins: setting({
    env: "IAC_CODE_AGUI_ALLOWED_ORIGINS",
    parse: commaList(originOf, "an origin such as https://app.example:8443"),
    default: { value: [] },
    description: "Comma-separated origins of other sites' pages that may call the service (CORS).",
  }),
  /** How long a request body may take to arrive, in seconds. */
  bodyTimeoutS: setting({
    env: "IAC_CODE_AGUI_BODY_TIMEOUT_S",
    parse: integer(1),
    default: { value: 30 },
    description: "How long a request body may take to arrive, in seconds.",
  }),
  /** Connections held at once; past it a new one closes the longest idle one (see `http/connection-guard.ts`). */
  maxConnections: setting({
    env: "IAC_CODE_AGUI_MAX_CONNECTIONS",
    parse: integer(1),
    default: { value: 1024 },
    description: "Connections held at once; past it a new one closes the longest idle one, or is closed if none is idle.",
  }),
  // What the kernel may send (see `a2a/limits.ts`): past either, the run ends with A2A_PROTOCOL_ERROR.
  /** One SSE record of a kernel stream, in bytes. */
  maxKernelRecordBytes: setting({
    env: "IAC_CODE_AGUI_MAX_KERNEL_RECORD_BYTES",
    parse: integer(64 * 1024),
    default: { value: DEFAULT_MAX_KERNEL_RECORD_BYTES },
    description: "The largest SSE record of a kernel stream, in bytes (at least 65536).",
  }),
  /** A non-SSE (JSON) answer of the kernel, in bytes. */
  maxKernelResponseBytes: setting({
    env: "IAC_CODE_AGUI_MAX_KERNEL_RESPONSE_BYTES",
    parse: integer(1024),
    default: { value: DEFAULT_MAX_KERNEL_RESPONSE_BYTES },
    description: "The largest JSON answer of the kernel, in bytes (at least 1024).",
  }),
  // What reconnects may hold of conversations read back from the kernel (see `a2a/history-budget.ts`).
  /** One reconnect's conversation snapshot, in characters of kept text: the newest turns that fit. */
  historyBudgetBytes: setting({
    env: "IAC_CODE_AGUI_HISTORY_BUDGET_BYTES",
    parse: integer(1024),
    optionalInConfig: true,
    default: { value: DEFAULT_HISTORY_BUDGET_BYTES },
    description: "The most one reconnect's conversation snapshot holds, in characters (at least 1024); older turns are left out.",
  }),
  /** Every conversation snapshot held at once in this process, in characters. */
  historyProcessBudgetBytes: setting({
    env: "IAC_CODE_AGUI_HISTORY_PROCESS_BUDGET_BYTES",
    parse: integer(1024),
    optionalInConfig: true,
    default: { value: DEFAULT_HISTORY_PROCESS_BUDGET_BYTES },
    description: "The most all conversation snapshots hold at once in this process, in characters (at least 1024).",
  }),
  // Generic AG-UI clients (CopilotKit and the like), both off by default: the strict protocol stays the default.
  /** The workspace of a request that sends no `forwardedProps.iacCode`; unset, such a request is refused. */
  defaultCwd: setting({
    env: "IAC_CODE_AGUI_DEFAULT_CWD",
    parse: resolvedPath,
    optionalInConfig: true,
    default: { unset: true, note: "such requests are refused" },
    description: "The workspace of a request that sends no forwardedProps.iacCode (generic AG-UI clients).",
  }),
  /** Declared client `tools`: refused (unset, "refuse") or accepted and never offered to the kernel ("ignore"). */
  clientTools: setting({
    env: "IAC_CODE_AGUI_CLIENT_TOOLS",
    parse: oneOf(CLIENT_TOOLS_POLICIES),
    optionalInConfig: true,
    default: { applied: "refuse" },
    description: `What to do with a request's declared client tools: ${CLIENT_TOOLS_POLICIES.join(" or ")}.`,
  }),
  // A kernel the service runs itself (see `kernel-process/supervisor.ts`); unset, the kernel is `a2aUrl` or the embedded demo.
  /** `IAC_CODE_AGUI_KERNEL_COMMAND` as the words to spawn, `{port}` among them (see `kernel-process/command-line.ts`). */
  kernelCommand: setting({
    env: "IAC_CODE_AGUI_KERNEL_COMMAND",
    parse: commandLine,
    optionalInConfig: true,
    default: { unset: true },
    description: "A kernel for the service to run itself: the command line, with {port} where its port goes.",
  }),
  /** How long that kernel may take to answer its agent card after a start, in seconds; unset, `DEFAULT_KERNEL_START_TIMEOUT_S`. */
  kernelStartTimeoutS: setting({
    env: "IAC_CODE_AGUI_KERNEL_START_TIMEOUT_S",
    parse: integer(1),
    optionalInConfig: true,
    default: { applied: DEFAULT_KERNEL_START_TIMEOUT_S },
    description: "How long that kernel may take to answer its agent card after a start, in seconds.",
  }),
  /** The least severe log records written (see `log.ts`); default `info`. */
  logLevel: setting({
    env: "IAC_CODE_AGUI_LOG_LEVEL",
    parse: oneOf(LOG_LEVELS),
    optionalInConfig: true,
    default: { value: DEFAULT_LOG_LEVEL },
    description: `The least severe log records written: ${LOG_LEVELS.join(", ")}.`,
  }),
  /** Kernel calls other than open streams, in seconds; unset, `DEFAULT_KERNEL_REQUEST_TIMEOUT_S` (an hour: a restore is slow). */
  kernelRequestTimeoutS: setting({
    env: "IAC_CODE_AGUI_KERNEL_REQUEST_TIMEOUT_S",
    parse: integer(1),
    optionalInConfig: true,
    default: { applied: DEFAULT_KERNEL_REQUEST_TIMEOUT_S },
    description: "How long a kernel call other than an open stream may take, in seconds.",
  }),
  /** How long the kernel may take to start answering a call (a stream's headers included), in seconds; unset, `DEFAULT_KERNEL_FIRST_BYTE_TIMEOUT_S`. */
  kernelFirstByteTimeoutS: setting({
    env: "IAC_CODE_AGUI_KERNEL_FIRST_BYTE_TIMEOUT_S",
    parse: integer(1),
    optionalInConfig: true,
    default: { applied: DEFAULT_KERNEL_FIRST_BYTE_TIMEOUT_S },
    description: "How long the kernel may take to start answering a call or a stream, in seconds (not a session restore).",
  }),
  // Several instances on one set of threads (see `state/redis-thread-store.ts`).
  /** Redis URL (`redis://host:port/db`) where thread state and leases live, shared by every instance; unset, the file store under `stateDir`. */
  redisUrl: setting({
    env: "IAC_CODE_AGUI_REDIS_URL",
    parse: redisUrl,
    optionalInConfig: true,
    default: { unset: true, note: "the file store under the state directory" },
    description: "The Redis (redis:// or rediss://) where thread state and leases live, shared by every instance.",
  }),
  /**
   * How long a run's lease on its thread lasts without renewal, in milliseconds (renewed every third of it while the run
   * lives). With Redis, an instance that dies mid-run blocks its threads for at most this long.
   */
  leaseTtlMs: setting({
    env: "IAC_CODE_AGUI_LEASE_TTL_MS",
    parse: integer(MIN_LEASE_TTL_MS),
    optionalInConfig: true,
    default: { value: DEFAULT_LEASE_TTL_MS },
    description: `How long a run's lease on its thread lasts unrenewed, in milliseconds (at least ${MIN_LEASE_TTL_MS}): how long a dead instance's threads wait.`,
  }),
  /** How long a thread may stay unsaved before it is removed (file store) or expires (Redis), in seconds; 0 = kept forever (see `state/thread-retention.ts`). */
  threadRetentionS: setting({
    env: "IAC_CODE_AGUI_THREAD_RETENTION_S",
    parse: integer(0),
    optionalInConfig: true,
    default: { applied: DEFAULT_THREAD_RETENTION_S, note: "30 days" },
    description:
      "How long a thread may stay idle (unsaved) before it is removed, in seconds; 0 = forever. A pending interrupt keeps it until it expires.",
  }),
  /** The A2A dialect the kernel speaks: read from its agent card (`auto`, unset), or fixed (see `a2a/dialect.ts`). */
  a2aDialect: setting({
    env: "IAC_CODE_AGUI_A2A_DIALECT",
    parse: dialect,
    optionalInConfig: true,
    default: { applied: "auto", note: "from the agent card" },
    description: `The A2A dialect the kernel speaks: ${DIALECT_SETTINGS.join(", ")} (auto reads the agent card's protocol version).`,
  }),
  /** The sandbox page and its fixture replay (`GET /sandbox`, `POST /sandbox/replay`): served (`on`, unset) or not at all (`off`). */
  sandbox: setting({
    env: "IAC_CODE_AGUI_SANDBOX",
    parse: oneOf(SANDBOX_SETTINGS),
    optionalInConfig: true,
    default: { applied: "on" },
    description: "Whether the sandbox page and its fixture replay are served (on, off); a production service may leave them off.",
  }),
  /** Sandbox replays going at once (`http/replay-slots.ts`); past it, 429 TOO_MANY_RUNS. */
  sandboxMaxReplays: setting({
    env: "IAC_CODE_AGUI_SANDBOX_MAX_REPLAYS",
    parse: integer(1),
    optionalInConfig: true,
    default: { applied: DEFAULT_SANDBOX_MAX_REPLAYS },
    description: "How many sandbox fixture replays (POST /sandbox/replay) go at once; past it a replay is refused with 429 TOO_MANY_RUNS.",
  }),
  // Bounded load (see `runs/run-slots.ts`): past either cap a run is refused with 429 TOO_MANY_RUNS and Retry-After.
  /** Runs going at once in this instance, resumes included; unset, no cap. */
  maxActiveRuns: setting({
    env: "IAC_CODE_AGUI_MAX_ACTIVE_RUNS",
    parse: integer(1),
    optionalInConfig: true,
    default: { unset: true, note: "no cap" },
    description: "How many runs this instance takes at once, resumes included; past it a run is refused with 429 TOO_MANY_RUNS.",
  }),
  /** Runs going at once for one `iacCode.userId`, across every instance on the same Redis; unset, no cap. */
  maxRunsPerUser: setting({
    env: "IAC_CODE_AGUI_MAX_RUNS_PER_USER",
    parse: integer(1),
    optionalInConfig: true,
    default: { unset: true, note: "no cap" },
    description:
      "How many runs one iacCode.userId may have going at once, counted across instances when Redis is set; past it, 429 TOO_MANY_RUNS.",
  }),
  /** A YAML file of settings, read under flags and over the environment (see `config-file.ts`). */
  config: setting({
    env: "IAC_CODE_AGUI_CONFIG",
    parse: resolvedPath,
    optionalInConfig: true,
    default: { unset: true, note: "none" },
    description:
      "A YAML file of settings (the reference's keys: host, port, a2a_url, auth_token, …); flags win over it, it wins over the environment.",
  }),
  /** Debug logging: `logLevel` debug unless that is set itself. */
  debug: setting({
    env: "IAC_CODE_AGUI_DEBUG",
    parse: boolean,
    optionalInConfig: true,
    default: { applied: false },
    description: "Logs at debug level (as IAC_CODE_AGUI_LOG_LEVEL=debug, which wins when set).",
  }),
  /** Seconds with no run and no request (probes aside) after which the service shuts down by itself; 0 = never. */
  idleShutdown: setting({
    env: "IAC_CODE_AGUI_IDLE_SHUTDOWN",
    parse: integer(0),
    optionalInConfig: true,
    default: { applied: 0, note: "never" },
    description: "Shuts down after this many seconds with no run and no request (probes aside), as a desktop sidecar does; 0 = never.",
  }),
  /** `iac-code`: the service runs the real kernel, `iac-code a2a`, as the reference adapter does (see `kernel-process/iac-code-kernel.ts`). */
  kernel: setting({
    env: "IAC_CODE_AGUI_KERNEL",
    parse: oneOf(KERNELS),
    optionalInConfig: true,
    default: { unset: true, note: "the kernel at the A2A URL, of the kernel command, or the embedded demo" },
    description: `A kernel the service runs itself by name: ${KERNELS.join(", ")} (iac-code a2a from PATH, with a token of its own).`,
  }),
} as const;

export type SettingKey = keyof typeof SETTING_TABLE;

export type Config = ConfigOf<typeof SETTING_TABLE>;
