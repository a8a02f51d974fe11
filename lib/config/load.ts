/**
 * Reading the settings: flags over the environment, each setting through
 * its row of `SETTING_TABLE`, then the two rules that relate settings to
 * each other. `--help` is printed from the same rows.
 */
import { workspaceProblem } from "../workspace.js";
import { readConfigFile } from "./config-file.js";
import { boolean, resolvedPath } from "./parsers.js";
import { ConfigError, flagName, settingName, toldDefault, type SettingDescriptor, type Warn } from "./descriptor.js";
import { SETTING_TABLE, type Config, type SettingKey } from "./settings.js";

/** One setting as `--help` tells it: its variable (the flag is named after it), its default, what it does. */
export interface Setting {
  key: SettingKey;
  env: string;
  /** As a reader would write it, or what happens when it is unset. */
  default: string;
  description: string;
}

const ROWS = Object.entries(SETTING_TABLE) as ReadonlyArray<[SettingKey, SettingDescriptor<unknown>]>;

/** Every setting as `--help` tells it, in its order. */
export const describedSettings = (): readonly Setting[] =>
  ROWS.map(([key, row]) => ({ key, env: row.env, default: toldDefault(row.default), description: row.description }));

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
  const byFlag = new Map(ROWS.map(([, row]) => [flagName(row.env), row.env]));
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf("=");
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const env = byFlag.get(flag);
    if (!env) throw new ConfigError(`Unknown flag ${flag}. \`iac-code-agui --help\` lists them all.`);
    // A yes-or-no flag alone (`--debug`) means yes, as the reference's does.
    const alone = eq < 0 && SWITCHES.has(env) && (argv[i + 1] === undefined || argv[i + 1]!.startsWith("--"));
    const value = eq >= 0 ? arg.slice(eq + 1) : alone ? "true" : argv[++i];
    if (value === undefined) throw new ConfigError(`Flag ${flag} needs a value.`);
    out[env] = value;
  }
  return out;
}

/** A row's value: its text read by its parser, else its default; set but empty counts as unset unless the row reads empty. */
function valueOf(row: SettingDescriptor<unknown>, raw: string | undefined, env: NodeJS.ProcessEnv, warn: Warn): unknown {
  if (raw !== undefined && (raw !== "" || row.readsEmpty)) return row.parse(raw, settingName(row.env), warn);
  const fallback = row.default;
  // A copy: a list one Config changes must not become the next one's default.
  if ("value" in fallback) return structuredClone(fallback.value);
  if ("from" in fallback) return fallback.from(env);
  return undefined;
}

/** The rules that relate two settings, once each has been read on its own. */
function checkTogether(config: Config, given: Readonly<Record<string, string | undefined>>): void {
  if (config.kernel !== undefined && (config.kernelCommand !== undefined || config.a2aUrl !== undefined)) {
    const kernel = settingName(SETTING_TABLE.kernel.env).envAndFlag;
    const other = config.kernelCommand !== undefined ? SETTING_TABLE.kernelCommand.env : SETTING_TABLE.a2aUrl.env;
    throw new ConfigError(`${kernel} and ${other} are both set: the service runs one kernel, named one way.`);
  }
  if (config.kernelCommand !== undefined && config.a2aUrl !== undefined) {
    // The command replaces a kernel URL.
    const command = settingName(SETTING_TABLE.kernelCommand.env).envAndFlag;
    throw new ConfigError(
      `${command} and ${SETTING_TABLE.a2aUrl.env} are both set: the service either runs its kernel or is given its URL, not both.`,
    );
  }
  if (config.defaultCwd !== undefined) {
    // Held to what a request's own cwd is held to, at start: a mistake stops the service rather than failing every such request.
    const problem = workspaceProblem(config.defaultCwd, config.allowedCwds);
    const { env } = SETTING_TABLE.defaultCwd;
    if (problem) throw new ConfigError(`${settingName(env).envAndFlag} "${given[env]}" ${problem}.`);
  }
}

const warnOnStderr = (message: string) => console.error(`iac-code-agui: warning: ${message}`);

export function loadConfig(argv: readonly string[] = [], env: NodeJS.ProcessEnv = process.env, warn: Warn = warnOnStderr): Config {
  const flags = parseFlags(argv);
  // The reference's order: what the command line says, then its config file, then the environment.
  const file = flags[CONFIG_ENV] ?? env[CONFIG_ENV];
  const fromFile = file ? readConfigFile(resolvedPath(file, settingName(CONFIG_ENV), warn), KNOWN_ENVS, warn).values : {};
  const given: Record<string, string | undefined> = { ...env, ...fromFile, ...flags };
  const config = Object.fromEntries(ROWS.map(([key, row]) => [key, valueOf(row, given[row.env], env, warn)])) as Config;
  // --debug is a shorthand for the log level; a level set itself says more.
  if (config.debug && !given[SETTING_TABLE.logLevel.env]) config.logLevel = "debug";
  checkTogether(config, given);
  return config;
}

const CONFIG_ENV = SETTING_TABLE.config.env;
const SWITCHES: ReadonlySet<string> = new Set(ROWS.filter(([, row]) => row.parse === boolean).map(([, row]) => row.env));
const KNOWN_ENVS: ReadonlySet<string> = new Set(ROWS.map(([, row]) => row.env));
