/**
 * User-facing error messages in the request's language (R-HTTP-6, wire
 * contract §9). One JSON file per language in `locales/`: adding a language
 * is adding a file. `en.json` is the source every other file translates.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { AguiError, MessageParams } from "../errors.js";
import { LOCALES_DIR } from "../paths.js";

export const DEFAULT_LANGUAGE = "en";

type Catalog = Readonly<Record<string, string>>;

let catalogs: ReadonlyMap<string, Catalog> | undefined;

/** Every locale file, read once on first use. */
export function loadCatalogs(): ReadonlyMap<string, Catalog> {
  catalogs ??= new Map(
    readdirSync(LOCALES_DIR)
      .filter((file) => file.endsWith(".json"))
      .map((file) => [path.basename(file, ".json"), JSON.parse(readFileSync(path.join(LOCALES_DIR, file), "utf8")) as Catalog]),
  );
  return catalogs;
}

export function supportedLanguages(): string[] {
  return [...loadCatalogs().keys()].sort();
}

/** `zh-CN`, `ZH_cn` and `zh` all mean `zh`; undefined unless a locale file exists for it. */
function supported(tag: string): string | undefined {
  const primary = tag.trim().toLowerCase().replaceAll("_", "-").split("-")[0]!;
  return loadCatalogs().has(primary) ? primary : undefined;
}

/** `Accept-Language` preferences by descending q, the header's order breaking ties; q=0 means "not this one". */
function acceptedLanguages(header: string): string[] {
  return header
    .split(",")
    .map((entry, index) => {
      const [tag = "", ...params] = entry.split(";").map((s) => s.trim());
      const q = params.find((p) => /^q\s*=/i.test(p));
      const quality = q === undefined ? 1 : Number(q.slice(q.indexOf("=") + 1).trim());
      return { tag, quality: Number.isFinite(quality) ? quality : 0, index };
    })
    .filter(({ tag, quality }) => tag !== "" && quality > 0 && quality <= 1)
    .sort((a, b) => b.quality - a.quality || a.index - b.index)
    .map(({ tag }) => tag);
}

/**
 * The language of the process, as the reference adapter falls back to it:
 * the POSIX locale variables in their order of precedence (`C` and `POSIX`
 * name none), else the runtime's own locale; undefined unless a locale file
 * exists for it. The variables are read on each call (a test may set
 * them); the runtime's locale, fixed when the process starts, is read once:
 * making a `DateTimeFormat` to ask costs about a third of a millisecond,
 * and most requests name no language.
 */
export function processLanguage(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const value of [env.LC_ALL, env.LC_MESSAGES, env.LANG]) {
    if (!value) continue;
    const language = supported(value);
    if (language) return language;
  }
  runtimeLocale ??= Intl.DateTimeFormat().resolvedOptions().locale;
  return supported(runtimeLocale);
}

let runtimeLocale: string | undefined;

/**
 * The language of a request's messages, also forwarded to the kernel as
 * `preferredLanguage`: `forwardedProps.iacCode.preferredLanguage` if a locale
 * exists for it, else the best `Accept-Language` match before a `*`, else
 * the process's language, else the default.
 */
export function resolveLanguage(preferred: string | undefined, acceptLanguage: string | undefined): string {
  const fromPreferred = preferred === undefined ? undefined : supported(preferred);
  if (fromPreferred) return fromPreferred;
  for (const tag of acceptedLanguages(acceptLanguage ?? "")) {
    // Any language names none (fetch sends `*` unless told otherwise).
    if (tag === "*") break;
    const language = supported(tag);
    if (language) return language;
  }
  return processLanguage() ?? DEFAULT_LANGUAGE;
}

/** `{name}` → `params.name`; a placeholder without a value stays as written so the gap is visible. */
function interpolate(template: string, params: MessageParams): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** The message for `key` in `language`, else in English, else the key itself. */
export function translate(key: string, language: string, params: MessageParams = {}): string {
  const all = loadCatalogs();
  const template = all.get(language)?.[key] ?? all.get(DEFAULT_LANGUAGE)?.[key] ?? key;
  return interpolate(template, params);
}

const hasMessage = (key: string) => loadCatalogs().get(DEFAULT_LANGUAGE)?.[key] !== undefined;

/**
 * The detail in `language`: `at` and a `detail.<phrase>` (see `detail.ts`)
 * when the error carries them, else the `detail` text as given (the
 * kernel's own words, say), else none.
 */
function detailIn(params: MessageParams, language: string): string | undefined {
  const { at, phrase, detail } = params;
  if (typeof phrase === "string" && hasMessage(`detail.${phrase}`)) {
    const what = translate(`detail.${phrase}`, language, params);
    return at === undefined ? what : translate("detail.located", language, { at, what });
  }
  return detail === undefined ? undefined : String(detail);
}

/**
 * The message key of an error, the most specific one a message exists for:
 * `<code>.<reason>.<phrase>` (the reference says what is wrong with a cwd
 * in the message itself), `<code>.<reason>`, else `<code>`.
 */
function messageKeyOf(error: AguiError): string {
  const { reason, phrase } = error.params;
  if (reason === undefined) return error.code;
  const candidates = [phrase === undefined ? undefined : `${error.code}.${reason}.${phrase}`, `${error.code}.${reason}`];
  return candidates.find((key) => key !== undefined && hasMessage(key)) ?? error.code;
}

/**
 * The user-facing text of an error. For the codes the reference adapter
 * names it is the reference's own sentence, word for word, so a client that
 * matches on it sees the same text from both; what we know beyond it is in
 * `detailFor`. Only a message of our own may place the detail (`{detail}`).
 */
export function messageFor(error: AguiError, language: string): string {
  const detail = detailIn(error.params, language);
  return translate(messageKeyOf(error), language, detail === undefined ? error.params : { ...error.params, detail });
}

/**
 * What we can say beyond the message, in the same language: why this
 * reason applies (`<code>.<reason>.detail`, else `<code>.detail`), then
 * which field failed and how. Undefined when there is nothing more to say.
 */
export function detailFor(error: AguiError, language: string): string | undefined {
  const { reason } = error.params;
  const noteKey = reason === undefined ? `${error.code}.detail` : `${error.code}.${reason}.detail`;
  const note = hasMessage(noteKey) ? translate(noteKey, language, error.params) : undefined;
  const located = detailIn(error.params, language);
  if (note === undefined || located === undefined) return note ?? located;
  return translate("detail.attached", language, { message: note, detail: located });
}

/** An error as a client reads it: the message, and the detail when there is one. */
export interface ErrorText {
  message: string;
  detail?: string;
}

export function describeError(error: AguiError, language: string): ErrorText {
  const detail = detailFor(error, language);
  return detail === undefined ? { message: messageFor(error, language) } : { message: messageFor(error, language), detail };
}
