import { describe, expect, it } from "@jest/globals";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { AguiError, ERROR_CODES, type ErrorCode } from "../../lib/errors.js";
import { messageFor, resolveLanguage, supportedLanguages, translate } from "../../lib/i18n/index.js";
import { LOCALES_DIR } from "../../lib/paths.js";

const locales = Object.fromEntries(
  readdirSync(LOCALES_DIR)
    .filter((file) => file.endsWith(".json"))
    .map((file) => [
      path.basename(file, ".json"),
      JSON.parse(readFileSync(path.join(LOCALES_DIR, file), "utf8")) as Record<string, string>,
    ]),
);
const english = locales.en!;
const codes: readonly ErrorCode[] = ERROR_CODES;
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("locale files", () => {
  it("include at least English and Japanese", () => {
    expect(supportedLanguages()).toEqual(expect.arrayContaining(["en", "ja"]));
    expect(supportedLanguages()).toEqual(Object.keys(locales).sort());
  });

  it.each(Object.keys(locales))("%s has a non-empty message for every ErrorCode", (language) => {
    const missing = codes.filter((code) => !locales[language]![code]?.trim());
    expect(missing).toEqual([]);
  });

  it.each(Object.keys(locales))("%s has no key that en.json lacks", (language) => {
    const extra = Object.keys(locales[language]!).filter((key) => !(key in english));
    expect(extra).toEqual([]);
  });

  it.each(Object.keys(locales))("%s uses the same placeholders as English", (language) => {
    for (const [key, text] of Object.entries(locales[language]!)) {
      expect([key, placeholders(text)]).toEqual([key, placeholders(english[key] ?? "")]);
    }
  });

  it("keeps the reference adapter's English wording where the wire contract quotes it", () => {
    expect(english).toMatchObject({
      A2A_EXECUTION_FAILED: "The A2A execution failed.",
      A2A_UNAVAILABLE: "The local A2A execution service is unavailable.",
      UNAUTHORIZED: "A valid bearer token is required.",
      UNSUPPORTED_MEDIA_TYPE: "Content-Type must be application/json.",
      REQUEST_TOO_LARGE: "The AG-UI request body is too large.",
      INVALID_INPUT: "Invalid AG-UI RunAgentInput envelope.",
      "INVALID_INPUT.forwardedProps": "Invalid iac-code forwarded properties.",
      EXECUTION_NOT_FOUND: "The execution was not found.",
      RESUME_PAYLOAD_INVALID: "The interrupt response payload is invalid.",
      SESSION_BACKUP_NOT_READY: "Session backup is still synchronizing. Retry after 3 seconds.",
    });
  });
});

describe("resolveLanguage", () => {
  it("prefers forwardedProps.iacCode.preferredLanguage over Accept-Language", () => {
    expect(resolveLanguage("ja", "en")).toBe("ja");
  });

  it("reduces tags to their primary subtag, in any case or separator", () => {
    expect(resolveLanguage("ja-JP", undefined)).toBe("ja");
    expect(resolveLanguage("JA_jp", undefined)).toBe("ja");
    expect(resolveLanguage(undefined, "en-GB")).toBe("en");
  });

  it("falls back to Accept-Language when the preferred language has no locale file", () => {
    expect(resolveLanguage("tlh", "ja")).toBe("ja");
  });

  it("takes the highest q first, whatever the header order", () => {
    expect(resolveLanguage(undefined, "en;q=0.5, ja;q=0.9")).toBe("ja");
    expect(resolveLanguage(undefined, "ja;q=0.4, en-US;q=0.8")).toBe("en");
  });

  it("keeps the header order between equal q values (a missing q is 1)", () => {
    expect(resolveLanguage(undefined, "ja, en")).toBe("ja");
    expect(resolveLanguage(undefined, "en;q=1, ja")).toBe("en");
  });

  it("skips languages without a locale file, q=0 and malformed q", () => {
    expect(resolveLanguage(undefined, "tlh, ja;q=0.1")).toBe("ja");
    expect(resolveLanguage(undefined, "ja;q=0, en;q=0.1")).toBe("en");
    expect(resolveLanguage(undefined, "ja;q=abc")).toBe("en");
    expect(resolveLanguage(undefined, "ja;q=0")).toBe("en");
  });

  it("reads * as the default language", () => {
    expect(resolveLanguage(undefined, "*;q=0.9, ja;q=0.8")).toBe("en");
    expect(resolveLanguage(undefined, "tlh, *;q=0.5, ja;q=0.1")).toBe("en");
  });

  it("defaults to English", () => {
    expect(resolveLanguage(undefined, undefined)).toBe("en");
    expect(resolveLanguage("", "")).toBe("en");
  });
});

describe("translate", () => {
  it("reads the language's own file", () => {
    expect(translate("A2A_EXECUTION_FAILED", "ja")).toBe(locales.ja!.A2A_EXECUTION_FAILED);
  });

  it("falls back to English for a language without a file, then to the key", () => {
    expect(translate("A2A_EXECUTION_FAILED", "tlh")).toBe("The A2A execution failed.");
    expect(translate("NO_SUCH_KEY", "ja")).toBe("NO_SUCH_KEY");
  });

  it("interpolates {name} placeholders from params and leaves unknown ones visible", () => {
    expect(translate("Retry {what} in {seconds}s", "en", { what: "run", seconds: 3 })).toBe("Retry run in 3s");
    expect(translate("Hello {name}", "en")).toBe("Hello {name}");
  });
});

describe("messageFor", () => {
  it("uses the reason-specific message for forwardedProps failures and appends the detail", () => {
    const error = new AguiError("INVALID_INPUT", { reason: "forwardedProps", detail: "/tools: must NOT have more than 0 items" });
    expect(messageFor(error, "en")).toBe("Invalid iac-code forwarded properties. (/tools: must NOT have more than 0 items)");
    expect(messageFor(error, "ja")).toBe(`${locales.ja!["INVALID_INPUT.forwardedProps"]} (/tools: must NOT have more than 0 items)`);
  });

  it("uses the envelope message when there is no reason, or an unknown one", () => {
    expect(messageFor(new AguiError("INVALID_INPUT", { detail: "/: must be object" }), "en")).toBe(
      "Invalid AG-UI RunAgentInput envelope. (/: must be object)",
    );
    expect(messageFor(new AguiError("INVALID_INPUT", { reason: "nonsense" }), "en")).toBe("Invalid AG-UI RunAgentInput envelope.");
  });

  it("translates every code", () => {
    for (const code of codes) {
      expect(messageFor(new AguiError(code), "ja")).toBe(locales.ja![code]);
      expect(messageFor(new AguiError(code), "en")).toBe(english[code]);
    }
  });
});
