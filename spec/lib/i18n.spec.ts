import { describe, expect, it } from "@jest/globals";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { AguiError, ERROR_CODES, type ErrorCode } from "../../lib/errors.js";
import { DETAIL_PHRASES, detailParams } from "../../lib/i18n/detail.js";
import {
  describeError,
  detailFor,
  messageFor,
  processLanguage,
  resolveLanguage,
  supportedLanguages,
  translate,
} from "../../lib/i18n/index.js";
import { LOCALES_DIR, PROJECT_ROOT } from "../../lib/paths.js";

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
/** The seven languages of the reference adapter (wire contract §9, issue 13). */
const LANGUAGES = ["de", "en", "es", "fr", "ja", "pt", "zh"];
const translations = Object.keys(locales).filter((language) => language !== "en");

describe("locale files", () => {
  it("are the seven languages of the reference", () => {
    expect(supportedLanguages()).toEqual(LANGUAGES);
    expect(supportedLanguages()).toEqual(Object.keys(locales).sort());
  });

  it.each(Object.keys(locales))("%s has a non-empty message for every ErrorCode", (language) => {
    const missing = codes.filter((code) => !locales[language]![code]?.trim());
    expect(missing).toEqual([]);
  });

  it.each(Object.keys(locales))("%s has exactly the keys of en.json, none of them empty", (language) => {
    expect(Object.keys(locales[language]!).sort()).toEqual(Object.keys(english).sort());
    const empty = Object.entries(locales[language]!).filter(([, text]) => typeof text !== "string" || text.trim() === "");
    expect(empty).toEqual([]);
  });

  it.each(Object.keys(locales))("%s uses the same placeholders as English", (language) => {
    for (const [key, text] of Object.entries(locales[language]!)) {
      expect([key, placeholders(text)]).toEqual([key, placeholders(english[key] ?? "")]);
    }
  });

  it.each(translations)("%s translates every error message rather than copying the English", (language) => {
    const copied = Object.keys(english).filter((key) => /^[A-Z_]+(\.|$)/.test(key) && locales[language]![key] === english[key]);
    expect(copied).toEqual([]);
  });

  it("has a phrase for every detail the code can build, and no phrase the code cannot", () => {
    const phrases = Object.keys(english)
      .filter((key) => key.startsWith("detail."))
      .map((key) => key.slice("detail.".length));
    expect(phrases.sort()).toEqual([...DETAIL_PHRASES, "attached", "located"].sort());
  });

  it("has a message for every reason the code raises with a literal code and reason", () => {
    const sources = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
          ? sources(path.join(dir, entry.name))
          : entry.name.endsWith(".ts")
            ? [readFileSync(path.join(dir, entry.name), "utf8")]
            : [],
      );
    const raised = sources(path.join(PROJECT_ROOT, "lib")).flatMap((text) =>
      [...text.matchAll(/new AguiError\(\s*"([A-Z_0-9]+)",\s*\{[^}]*?reason: "(\w+)"/g)].map((m) => `${m[1]}.${m[2]}`),
    );
    expect(raised.length).toBeGreaterThan(20);
    // A reason says its situation in the message, or only in the detail under the code's message.
    expect(raised.filter((key) => !(key in english) && !(`${key}.detail` in english))).toEqual([]);
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
  it.each([
    ["zh-CN", "zh"],
    ["zh-Hans-CN", "zh"],
    ["ja-JP", "ja"],
    ["es-419", "es"],
    ["fr-CA", "fr"],
    ["de-AT", "de"],
    ["pt-BR", "pt"],
    ["pt_PT", "pt"],
    ["en-US", "en"],
  ])("finds %s as %s, from preferredLanguage and from Accept-Language", (tag, language) => {
    expect(resolveLanguage(tag, undefined)).toBe(language);
    expect(resolveLanguage(tag, "tlh")).toBe(language);
    expect(resolveLanguage(undefined, tag)).toBe(language);
    expect(resolveLanguage(undefined, `tlh, ${tag};q=0.8, en;q=0.5`)).toBe(language);
  });

  it("falls back to the process's locale when the request names no language it has, else to English", () => {
    const saved = { LC_ALL: process.env.LC_ALL, LC_MESSAGES: process.env.LC_MESSAGES, LANG: process.env.LANG };
    try {
      process.env.LC_ALL = "";
      process.env.LC_MESSAGES = "C";
      process.env.LANG = "de_DE.UTF-8";
      expect(resolveLanguage(undefined, undefined)).toBe("de");
      expect(resolveLanguage("tlh", "*")).toBe("de");
      expect(resolveLanguage(undefined, "ja")).toBe("ja");
      process.env.LC_ALL = "fr_FR.UTF-8";
      expect(resolveLanguage(undefined, undefined)).toBe("fr");
      expect(processLanguage({ LANG: "C.UTF-8" })).toBe(processLanguage({}));
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

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

describe("messageFor and detailFor", () => {
  it("keep the message to the reason's sentence and say the detail apart", () => {
    const error = new AguiError("INVALID_INPUT", { reason: "forwardedProps", ...detailParams("/tools", "maxItems", { limit: 0 }) });
    expect(error.params.detail).toBe("/tools: must NOT have more than 0 items");
    expect(messageFor(error, "en")).toBe("Invalid iac-code forwarded properties.");
    expect(detailFor(error, "en")).toBe("/tools: must NOT have more than 0 items");
    expect(describeError(error, "ja")).toEqual({
      message: locales.ja!["INVALID_INPUT.forwardedProps"],
      detail: "/tools：要素は 0 個以下である必要があります",
    });
  });

  it.each(translations)("say a cwd's problem in %s: the reference's sentence for it, and where as the detail", (language) => {
    const error = new AguiError("INVALID_INPUT", {
      reason: "forwardedProps",
      ...detailParams("/forwardedProps/iacCode/cwd", "outsideRoots"),
    });
    const catalog = locales[language]!;
    const what = catalog["detail.outsideRoots"]!;
    expect(messageFor(error, language)).toBe(catalog["INVALID_INPUT.forwardedProps.outsideRoots"]);
    expect(detailFor(error, language)).toBe(
      catalog["detail.located"]!.replace("{at}", "/forwardedProps/iacCode/cwd").replace("{what}", what),
    );
    expect(detailFor(error, language)).not.toContain(english["detail.outsideRoots"]);
  });

  it("interpolates a phrase's values in every language", () => {
    const error = new AguiError("INCOMPLETE_RESUME", detailParams("/resume", "unanswered", { count: 2 }));
    for (const language of LANGUAGES) expect(detailFor(error, language)).toContain("2");
    expect(describeError(error, "en")).toEqual({
      message: english.INCOMPLETE_RESUME,
      detail: "/resume: 2 pending interrupt(s) without an answer",
    });
    expect(detailFor(error, "de")).toBe("/resume: offene Unterbrechungen ohne Antwort: 2");
  });

  it("keeps a detail without a phrase as given (a position, or the kernel's own words)", () => {
    expect(describeError(new AguiError("UNKNOWN_INTERRUPT", { detail: "/resume/1" }), "fr")).toEqual({
      message: locales.fr!.UNKNOWN_INTERRUPT,
      detail: "/resume/1",
    });
  });

  it("puts a reason's own note first in the detail, the kernel's words after it", () => {
    const error = new AguiError("A2A_UNAVAILABLE", { reason: "answerRejected", detail: "invalid permission response" });
    expect(describeError(error, "en")).toEqual({
      message: "The local A2A execution service rejected the interrupt response.",
      detail: `${english["A2A_UNAVAILABLE.answerRejected.detail"]} (invalid permission response)`,
    });
  });

  it("use the envelope message when there is no reason, or an unknown one, and no detail when there is none", () => {
    expect(describeError(new AguiError("INVALID_INPUT", { detail: "/: must be object" }), "en")).toEqual({
      message: "Invalid AG-UI RunAgentInput envelope.",
      detail: "/: must be object",
    });
    expect(describeError(new AguiError("INVALID_INPUT", { reason: "nonsense" }), "en")).toEqual({
      message: "Invalid AG-UI RunAgentInput envelope.",
    });
  });

  it("translate every code and every reason, in every language", () => {
    for (const language of LANGUAGES) {
      for (const code of codes) expect(messageFor(new AguiError(code), language)).toBe(locales[language]![code]);
      for (const key of Object.keys(english).filter((k) => /^[A-Z_0-9]+\.\w+$/.test(k))) {
        const [code, reason] = key.split(".") as [ErrorCode, string];
        expect(messageFor(new AguiError(code, { reason }), language)).toBe(locales[language]![key]);
      }
      for (const key of Object.keys(english).filter((k) => /^[A-Z_0-9]+(\.\w+)?\.detail$/.test(k))) {
        const [code, reason] = key.split(".") as [ErrorCode, string];
        const error = new AguiError(code, reason === "detail" ? {} : { reason });
        expect(detailFor(error, language)).toBe(locales[language]![key]);
      }
    }
  });
});
