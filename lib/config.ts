/**
 * Service configuration. Every setting is an environment variable and the
 * same-named CLI flag (`IAC_CODE_AGUI_HEARTBEAT_MS` ↔ `--heartbeat-ms`); a
 * flag wins over the environment. The names are a contract: other tools
 * start the service with them.
 *
 * Each setting is written once, as a row of `SETTING_TABLE`
 * (`config/settings.ts`); the `Config` type, `--help`, the reading and the
 * defaults follow from it (`config/load.ts`, `config/descriptor.ts`, `config/parsers.ts`).
 */
export { DEFAULT_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from "./state/lease-ttl.js";
export { ConfigError, flagName } from "./config/descriptor.js";
export { checkLoopbackUrl } from "./config/parsers.js";
export {
  CLIENT_TOOLS_POLICIES,
  DEFAULT_CLIENT_STALL_S,
  DEFAULT_DRAIN_S,
  DEFAULT_INTERRUPT_TTL_S,
  DEFAULT_KERNEL_START_TIMEOUT_S,
  SANDBOX_SETTINGS,
  SETTING_TABLE,
  configHome,
  type ClientToolsPolicy,
  type Config,
  type SandboxSetting,
  type SettingKey,
} from "./config/settings.js";
export { describedSettings, loadConfig, usage, type Setting } from "./config/load.js";
