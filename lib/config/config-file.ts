/**
 * `--config FILE` (`IAC_CODE_AGUI_CONFIG`): settings from a YAML file, as
 * the reference adapter (`iac-code agui --config`) reads them. Its keys are
 * the reference's (`host`, `port`, `a2a_url`, `debug`, `log_stdout`,
 * `state_dir`, `idle_shutdown`, `auth_token`, `a2a_token`) and, the same
 * way, every other setting by its flag without the dashes, in snake case
 * (`max_active_runs`, `redis_url`): each key is the setting's variable
 * without `IAC_CODE_AGUI_`, lowercased.
 *
 * The file is one flat mapping of scalars, which is all the reference's
 * keys need: `key: value`, `#` comments, values plain or quoted ('…' or
 * "…" with the usual escapes), `null` and `~` for unset, each value given
 * to its setting as its text. Anything nested
 * (an indented line, a list, a flow mapping, an anchor) is refused with the
 * line that holds it rather than half read: a file the service cannot read
 * whole must not start it with half its settings.
 */
import { readFileSync } from "node:fs";
import { ConfigError, type Warn } from "./descriptor.js";

/** The reference's keys that are not this service's settings' own names. */
const LOG_STDOUT = "log_stdout";

export interface ConfigFile {
  /** Setting values by variable (`IAC_CODE_AGUI_PORT` → "8000"), as if set in the environment. */
  values: Record<string, string>;
}

/** Reads `file` into setting values; `knownEnvs` are the variables of every setting. */
export function readConfigFile(file: string, knownEnvs: ReadonlySet<string>, warn: Warn): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(
      `IAC_CODE_AGUI_CONFIG (--config) "${file}" cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
    );
  }
  const values: Record<string, string> = {};
  const seen = new Set<string>();
  text.split(/\r?\n/).forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    const content = withoutComment(line);
    if (content.trim() === "" || content.trim() === "---") return;
    if (/^\s/.test(content)) throw new ConfigError(`${where}: only top-level "key: value" lines are read; this one is indented.`);
    const match = /^([A-Za-z_][\w-]*)\s*:(?:\s+(.*))?$/.exec(content.trimEnd());
    if (!match) throw new ConfigError(`${where}: expected "key: value".`);
    const key = match[1]!.replaceAll("-", "_").toLowerCase();
    if (seen.has(key)) throw new ConfigError(`${where}: ${key} is set twice.`);
    seen.add(key);
    const value = scalar(match[2] ?? "", where);
    if (key === LOG_STDOUT) {
      // This service always writes its log to stdout, as JSON lines (see `log.ts`).
      if (value !== undefined && !/^(true|yes|on|1)$/i.test(value))
        warn(`${where}: log_stdout: ${value} is ignored; the log always goes to stdout.`);
      return;
    }
    const env = `IAC_CODE_AGUI_${key.toUpperCase()}`;
    if (!knownEnvs.has(env) || env === "IAC_CODE_AGUI_CONFIG") {
      throw new ConfigError(
        `${where}: unknown setting "${key}". \`iac-code-agui --help\` lists them (a key is a flag without "--", in snake case).`,
      );
    }
    if (value !== undefined) values[env] = value;
  });
  return { values };
}

/** The line up to a `#` that starts a comment (at the start or after a space, outside quotes). */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote) {
      if (char === "\\" && quote === '"') i++;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === "#" && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

/** A YAML scalar as the text a setting's parser reads; undefined for null. */
function scalar(raw: string, where: string): string | undefined {
  const value = raw.trim();
  if (value === "" || value === "~" || value === "null" || value === "Null" || value === "NULL") return undefined;
  if (value.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(value)) throw new ConfigError(`${where}: an unclosed '.`);
    return value.slice(1, -1).replaceAll("''", "'");
  }
  if (value.startsWith('"')) {
    try {
      return JSON.parse(value) as string;
    } catch {
      throw new ConfigError(`${where}: a "…" value with an unclosed quote or an escape JSON does not know.`);
    }
  }
  if (/^[[{&*!|>]/.test(value) || /^-(\s|$)/.test(value)) {
    throw new ConfigError(`${where}: only plain values are read (a string, a number, true or false), not lists, mappings or anchors.`);
  }
  // As written: the setting reads it (YAML 1.2's booleans are true and false, which a yes-or-no setting reads; `sandbox: off` stays "off").
  return value;
}
