/**
 * How a setting's text becomes its value: the kinds most settings share
 * (a number, one of a few words, a path, a list), then the few settings
 * with rules of their own. Each takes the text as set (empty counts as
 * unset, see `load.ts`) and throws a `ConfigError` that names the setting.
 */
import os from "node:os";
import path from "node:path";
import { DIALECT_SETTINGS, type DialectSetting } from "../a2a/dialect.js";
import { isLoopbackHost } from "../a2a/loopback.js";
import { CommandLineError, splitCommandLine } from "../kernel-process/command-line.js";
import { hostnameOf } from "../net/host-names.js";
import { ConfigError, type Parse } from "./descriptor.js";

export const text: Parse<string> = (raw) => raw;

/** A whole number, at least `min`. */
export const integer =
  (min: number): Parse<number> =>
  (raw, name) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name.env} must be an integer ≥ ${min}, got "${raw}".`);
    return value;
  };

/** One of `values`, written exactly. */
export const oneOf =
  <const V extends string>(values: readonly V[]): Parse<V> =>
  (raw, name) => {
    const known = values.find((value) => value === raw);
    if (known === undefined) throw new ConfigError(`${name.env} must be one of ${values.join(", ")}, got "${raw}".`);
    return known;
  };

/** `~` or `~/…` as the home directory, as a shell would expand it (a config file or a service unit has no shell). */
export const expandHome = (raw: string): string => (raw === "~" || /^~[/\\]/.test(raw) ? path.join(os.homedir(), raw.slice(1)) : raw);

/** A path, `~` expanded, made absolute against the working directory. */
export const resolvedPath: Parse<string> = (raw) => path.resolve(expandHome(raw));

/** Paths separated by the platform's delimiter (":", ";" on Windows), each `~` expanded and made absolute. */
export const pathList: Parse<string[]> = (raw) =>
  raw
    .split(path.delimiter)
    .filter(Boolean)
    .map((entry) => path.resolve(expandHome(entry)));

/** true or false, as a person or a YAML file writes them (also yes/no, on/off, 1/0). */
export const boolean: Parse<boolean> = (raw, name) => {
  if (/^(true|yes|on|1)$/i.test(raw.trim())) return true;
  if (/^(false|no|off|0)$/i.test(raw.trim())) return false;
  throw new ConfigError(`${name.env} must be true or false, got "${raw}".`);
};

/** A comma-separated list, each entry read by `entry` (undefined: not `what`); an entry it cannot read stops the start. */
export const commaList =
  (entry: (text: string) => string | undefined, what: string): Parse<string[]> =>
  (raw, name) =>
    raw
      .split(",")
      .map((text) => text.trim())
      .filter(Boolean)
      .map((text) => {
        const parsed = entry(text);
        if (parsed === undefined) throw new ConfigError(`${name.env} lists "${text}", which is not ${what}.`);
        return parsed;
      });

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

/** A bare IPv6 address (`::1`) as a Host header would write it (`[::1]`); a port is not part of an allowed host. */
export function allowedHost(entry: string): string | undefined {
  const bracketed = entry.includes(":") && !entry.startsWith("[") ? `[${entry}]` : entry;
  return /\]:/.test(bracketed) ? undefined : hostnameOf(bracketed);
}

/**
 * The token clients must send. Set but empty would turn authentication off
 * without a word, so it stops the start; spaces around it could never be
 * sent (HTTP trims header values), so they are left out, with a warning.
 */
export const bearerToken: Parse<string> = (raw, name, warn) => {
  const token = raw.trim();
  if (token === "") {
    throw new ConfigError(
      `${name.envAndFlag} is set but empty, which would turn authentication off. Give a token, or unset it to run without one.`,
    );
  }
  if (token !== raw)
    warn(`${name.envAndFlag} has spaces around it; they are left out, as a client cannot send them in an Authorization header.`);
  return token;
};

/** The words of the command the service runs as its kernel (see `kernel-process/command-line.ts`). */
export const commandLine: Parse<string[]> = (raw, name) => {
  try {
    return splitCommandLine(raw);
  } catch (error) {
    if (error instanceof CommandLineError) throw new ConfigError(`${name.envAndFlag} ${error.message}.`);
    throw error;
  }
};

/** `auto` (the agent card decides), `1.0` or `0.3`, in any case and with spaces around. */
export const dialect: Parse<DialectSetting> = (raw, name) => {
  const setting = DIALECT_SETTINGS.find((known) => known === raw.trim().toLowerCase());
  if (setting === undefined) throw new ConfigError(`${name.envAndFlag} must be one of ${DIALECT_SETTINGS.join(", ")}, got "${raw}".`);
  return setting;
};

/** A Redis URL (`redis:` or `rediss:`), checked at start so a typo stops the service instead of failing every request. */
export const redisUrl: Parse<string> = (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not echoed: a Redis URL may carry a password.
    throw new ConfigError(`${name.envAndFlag} is not a URL.`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new ConfigError(`${name.envAndFlag} must be a redis:// or rediss:// URL, got "${url.protocol}".`);
  }
  return raw;
};
