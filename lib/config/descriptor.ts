/**
 * What a setting is made of: its variable (the flag is named after it), how
 * its text is read (`parsers.ts`), what it is when nothing sets it, and what
 * `--help` says of it. `settings.ts` writes each setting once as one of
 * these; `load.ts` reads them, and the `Config` type follows from them
 * (`ConfigOf`).
 */
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

/** How a message names the setting it is about. */
export interface SettingName {
  /** `IAC_CODE_AGUI_HEARTBEAT_MS` */
  env: string;
  /** `IAC_CODE_AGUI_HEARTBEAT_MS (--heartbeat-ms)` */
  envAndFlag: string;
}

export const settingName = (env: string): SettingName => ({ env, envAndFlag: `${env} (${flagName(env)})` });

export type Warn = (message: string) => void;

/** Reads a setting's text, which is set; a text it cannot use throws a `ConfigError` that names the setting. */
export type Parse<T> = (raw: string, name: SettingName, warn: Warn) => T;

/** Filled in by `loadConfig` when nothing sets the setting; `--help` shows it, then the note. */
export interface ValueDefault<T> {
  readonly value: T;
  readonly note?: string;
}

/** Worked out from the environment by `loadConfig`; `told` is how `--help` says it. */
export interface ComputedDefault<T> {
  readonly from: (env: NodeJS.ProcessEnv) => T;
  readonly told: string;
}

/**
 * Left undefined in `Config`: the code that reads the setting applies this
 * value itself (with the same constant), and `--help` tells it as the default.
 */
export interface AppliedDefault<T> {
  readonly applied: T;
  readonly note?: string;
}

/** Left undefined in `Config`, which means what the note says. */
export interface NoDefault {
  readonly unset: true;
  readonly note?: string;
}

/** What a setting is when nothing sets it. */
export type Default<T> = ValueDefault<T> | ComputedDefault<T> | AppliedDefault<T> | NoDefault;

/** One row of the settings table: a setting whose value is a `T`, with a default of kind `D`. */
export interface SettingDescriptor<T, D extends Default<T> = Default<T>, Optional extends boolean = boolean> {
  readonly env: `IAC_CODE_AGUI_${string}`;
  readonly parse: Parse<T>;
  readonly default: D;
  /** What `--help` says the setting does. */
  readonly description: string;
  /** Set but empty is a value (the parser's to judge), not "unset": where empty would quietly mean something else. */
  readonly readsEmpty?: true;
  /** A `Config` built in code (specs, the bench) may leave it out; whoever reads it applies the default. */
  readonly optionalInConfig?: Optional;
}

/**
 * One row of the table. Its value type is its parser's and its default is
 * held to that type; the row's type keeps the kind of its default and
 * `optionalInConfig`, which `ConfigOf` reads (one overload per kind, so
 * neither depends on how a default's literal is inferred).
 */
export function setting<T, Optional extends boolean = false>(
  descriptor: SettingDescriptor<T, ValueDefault<NoInfer<T>>, Optional>,
): SettingDescriptor<T, ValueDefault<T>, Optional>;
export function setting<T, Optional extends boolean = false>(
  descriptor: SettingDescriptor<T, ComputedDefault<NoInfer<T>>, Optional>,
): SettingDescriptor<T, ComputedDefault<T>, Optional>;
export function setting<T, Optional extends boolean = false>(
  descriptor: SettingDescriptor<T, AppliedDefault<NoInfer<T>>, Optional>,
): SettingDescriptor<T, AppliedDefault<T>, Optional>;
export function setting<T, Optional extends boolean = false>(
  descriptor: SettingDescriptor<T, NoDefault, Optional>,
): SettingDescriptor<T, NoDefault, Optional>;
export function setting(descriptor: SettingDescriptor<unknown>): SettingDescriptor<unknown> {
  return descriptor;
}

/** The value a setting has in `Config`: undefined is possible unless `loadConfig` fills in a default. */
export type ValueOf<S> =
  S extends SettingDescriptor<infer T, infer D> ? (D extends ValueDefault<unknown> | ComputedDefault<unknown> ? T : T | undefined) : never;

type OptionalKey<Table, K extends keyof Table> = Table[K] extends { readonly optionalInConfig?: true } ? K : never;

/** The `Config` a settings table describes: one field per row, under the row's key (the row's comment is the field's). */
export type ConfigOf<Table> = {
  -readonly [K in keyof Table as K extends OptionalKey<Table, K> ? never : K]: ValueOf<Table[K]>;
} & {
  -readonly [K in keyof Table as K extends OptionalKey<Table, K> ? K : never]?: ValueOf<Table[K]>;
};

/** What `--help` prints after "Default:". */
export function toldDefault(value: Default<unknown>): string {
  const told = "told" in value ? value.told : "unset" in value ? "unset" : shown("value" in value ? value.value : value.applied);
  const note = "note" in value ? value.note : undefined;
  return note === undefined ? told : `${told}: ${note}`;
}

/** A default as a person would type it; an empty list is "none". */
function shown(value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.join(",");
  return String(value);
}
