/**
 * The detail of an error (which field failed, and how) in the language of
 * its message. A detail is built where the error is thrown, before anyone
 * knows the request's language, so it travels as parts: `at`, a place
 * (a JSON pointer or a field path, the same in every language), and
 * `phrase`, a `detail.<phrase>` entry of the catalogues with the values it
 * interpolates. `messageFor` says it in the request's language; `detail`
 * keeps the English sentence for logs and for callers that read params.
 */
import type { ErrorObject } from "ajv";
import type { MessageParams } from "../errors.js";
import { DEFAULT_LANGUAGE, translate } from "./index.js";

/** Every phrase a detail can use: each has a `detail.<phrase>` message in every catalogue (spec/lib/i18n.spec.ts). */
export const DETAIL_PHRASES = [
  // What JSON Schema keywords say, in the words ajv uses for English.
  "type",
  "required",
  "additionalProperty",
  "const",
  "enum",
  "pattern",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "comparison",
  "conditional",
  "oneOf",
  "anyOf",
  "invalid",
  // What the service checks itself.
  "tooDeep",
  "bodyCutOff",
  "contentEncoding",
  "notAbsolute",
  "outsideRoots",
  "notDirectory",
  "cannotCreate",
  "intoProc",
  "tooManyLinks",
  "unpaddedBase64",
  "imageTooLarge",
  "imagesTooLarge",
  "userMessageNeeded",
  "unsupportedPart",
  "unanswered",
  "blankKeys",
  "nonEmptyList",
  "object",
  "optionId",
  "unique",
  "oneOfValues",
] as const;

export type DetailPhrase = (typeof DETAIL_PHRASES)[number];

/** Params that say `at: <phrase>`; `values` fill the phrase's placeholders (never `reason`, `at`, `phrase` or `detail`). */
export function detailParams(at: string, phrase: DetailPhrase, values: MessageParams = {}): MessageParams {
  const what = translate(`detail.${phrase}`, DEFAULT_LANGUAGE, values);
  return { ...values, at, phrase, detail: translate("detail.located", DEFAULT_LANGUAGE, { at, what }) };
}

/** Client-supplied names are capped so a detail stays a short description. */
export const clip = (text: string) => (text.length > 64 ? `${text.slice(0, 61)}...` : text);

/** An ajv error as detail params: where, and the keyword's phrase; never the submitted value, nor a schema pattern. */
export function schemaErrorDetail(error: ErrorObject, at = error.instancePath || "/"): MessageParams {
  const where = clip(at);
  const params = error.params as Record<string, unknown>;
  const limit = typeof params.limit === "number" ? params.limit : 0;
  switch (error.keyword) {
    case "type":
      return detailParams(where, "type", { type: String(params.type) });
    case "required":
      return detailParams(where, "required", { property: clip(String(params.missingProperty)) });
    case "additionalProperties":
      return detailParams(where, "additionalProperty", { property: clip(String(params.additionalProperty)) });
    case "const":
    case "enum":
    case "pattern":
    case "oneOf":
    case "anyOf":
      return detailParams(where, error.keyword);
    case "minLength":
    case "maxLength":
    case "minItems":
    case "maxItems":
      return detailParams(where, error.keyword, { limit });
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return detailParams(where, "comparison", { comparison: String(params.comparison), limit });
    case "if":
      return detailParams(where, "conditional", { branch: String(params.failingKeyword) });
    default:
      return detailParams(where, "invalid");
  }
}
