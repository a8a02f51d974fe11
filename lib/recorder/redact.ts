/**
 * What the recorder must never write: credentials. Two nets, both applied to
 * every value before it reaches a recording:
 * - by key: any value under a key that names a credential (`llmApiKey`,
 *   `alibaba_cloud_access_key_secret`, `authorization`, `token`, …; compared
 *   case-insensitively with `_`, `-` and `.` ignored, at any depth) becomes
 *   `"[redacted]"`, whatever it is;
 * - by value: a string equal to a credential the request carried (or the
 *   service's own tokens) becomes `"[redacted]"`, and a longer string that
 *   contains one has each occurrence replaced, so an agent that echoes a key
 *   into its text or into an innocently named field does not leak it.
 */
import { isJsonObject } from "../model/json.js";

export const REDACTED = "[redacted]";

/** Keys that are a credential by themselves (normalized: lower case, no `_`, `-`, `.`). */
const SECRET_KEYS = new Set([
  "authorization",
  "proxyauthorization",
  "cookie",
  "setcookie",
  "token",
  "apikey",
  "password",
  "passwd",
  "secret",
  "privatekey",
  "credentials",
]);

/**
 * Endings that make a key a credential: `iac_code_api_key`, `llmApiKey`,
 * `accessKeySecret`, `alibaba_cloud_security_token`, `clientSecret`, …
 * A bare `…token` is not among them: `progressToken` (MCP) and token
 * counts are not credentials, so only the kinds of token that are
 * (`accessToken`, `securityToken`, …) are listed.
 */
const SECRET_KEY_ENDINGS = [
  "apikey",
  "secret",
  "password",
  "passwd",
  "privatekey",
  "accesstoken",
  "refreshtoken",
  "sessiontoken",
  "securitytoken",
  "authtoken",
  "apitoken",
  "bearertoken",
  "idtoken",
];

/** Whether a value stored under `key` is a credential. */
export function isSecretKey(key: string): boolean {
  const normalized = key.toLowerCase().replace(/[-_.]/g, "");
  return SECRET_KEYS.has(normalized) || SECRET_KEY_ENDINGS.some((ending) => normalized.endsWith(ending));
}

/**
 * Every non-empty string found under a credential key anywhere in `value`:
 * for a SendStreamingMessage request, `metadata.iac_code.iac_code_api_key`,
 * `alibaba_cloud_access_key_secret`, `alibaba_cloud_security_token`, and any
 * credential header in `llm_headers`.
 */
export function secretsIn(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) {
    value.forEach((item) => secretsIn(item, found));
  } else if (isJsonObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (isSecretKey(key)) collectStrings(item, found);
      else secretsIn(item, found);
    }
  }
  return found;
}

function collectStrings(value: unknown, found: Set<string>): void {
  if (typeof value === "string") {
    if (value !== "") found.add(value);
  } else if (Array.isArray(value)) {
    value.forEach((item) => collectStrings(item, found));
  } else if (isJsonObject(value)) {
    Object.values(value).forEach((item) => collectStrings(item, found));
  }
}

/**
 * Occurrences inside longer strings are replaced only for credentials at
 * least this long: a two-letter "secret" would otherwise shred every text.
 * Shorter ones are still redacted where a whole string equals them.
 */
export const MIN_EMBEDDED_SECRET_LENGTH = 6;

/** A string with every known credential taken out. */
export function redactString(text: string, secrets: ReadonlySet<string>): string {
  if (secrets.has(text)) return REDACTED;
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= MIN_EMBEDDED_SECRET_LENGTH && out.includes(secret)) out = out.replaceAll(secret, REDACTED);
  }
  return out;
}

/**
 * A deep copy of `value` (JSON data) with credentials redacted, by key and
 * by value; object keys are checked by value too. The input is not changed.
 */
export function redact(value: unknown, secrets: ReadonlySet<string>): unknown {
  if (typeof value === "string") return redactString(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redact(item, secrets));
  if (isJsonObject(value)) {
    // fromEntries, not assignment: a `__proto__` key stays a plain key.
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        redactString(key, secrets),
        isSecretKey(key) && item !== null && item !== undefined ? REDACTED : redact(item, secrets),
      ]),
    );
  }
  return value;
}
