/**
 * A pending input → the AG-UI `Interrupt` a `RUN_FINISHED` outcome carries
 * (R-INT-2, contract §5 "The AG-UI Interrupt"). Rebuilt from the persisted
 * projection whenever it is shown, so a restart shows the same interrupt.
 */
import type { Interrupt } from "@ag-ui/core";
import { DEFAULT_LANGUAGE, supportedLanguages, translate } from "../i18n/index.js";
import type { PendingInput } from "../state/thread-state.js";
import { deploymentOptions } from "./deployment-options.js";
import { kindOf } from "./kinds.js";
import { selectionMessage, standardOptions, type StandardOption } from "./options.js";
import { pythonStr, pythonTruthy } from "./python-json.js";
import { responseSchemaFor } from "./response-schemas.js";

export const INTERRUPT_METADATA_SCHEMA_VERSION = 1;

/** The first candidate with a locale (`ja-JP` counts as `ja`), else the default. */
function interruptLanguage(...candidates: unknown[]): string {
  const supported = new Set(supportedLanguages());
  for (const candidate of candidates) {
    if (typeof candidate !== "string") continue;
    const primary = candidate.trim().toLowerCase().replaceAll("_", "-").split("-")[0]!;
    if (supported.has(primary)) return primary;
  }
  return DEFAULT_LANGUAGE;
}

/** The first non-empty text the kernel offers; the kernel's wording wins over ours. */
function kernelText(...values: unknown[]): string | undefined {
  const found = values.find(pythonTruthy);
  return found === undefined ? undefined : pythonStr(found);
}

/**
 * `language` is the request's; the projection's own `language` (the one the
 * kernel wrote its prompt in) takes precedence so fallback text matches it.
 * Throws `A2A_PROTOCOL_ERROR` for a deployment confirmation with unusable options.
 */
export function toInterrupt(pending: PendingInput, language?: string): Interrupt {
  const { value } = pending;
  const lang = interruptLanguage(value.language, language);
  const kind = kindOf(value);
  let options: StandardOption[];
  let message: string;
  switch (kind) {
    case "permission":
      options = standardOptions(value.options);
      message = kernelText(value.prompt, value.title) ?? translate("PERMISSION_REQUIRED", lang);
      break;
    case "cloud_resource_selection":
      options = standardOptions(value.options);
      message = kernelText(value.prompt) ?? translate("INPUT_REQUIRED", lang);
      break;
    case "deployment_confirmation":
      options = deploymentOptions(value.options).standard;
      message = selectionMessage(kernelText(value.prompt) ?? translate("INPUT_REQUIRED", lang), options);
      break;
    case "selection":
      options = standardOptions(value.options);
      message = selectionMessage(kernelText(value.prompt) ?? translate("INPUT_REQUIRED", lang), options);
      break;
    default:
      return kind satisfies never;
  }
  const interrupt: Interrupt = {
    id: value.inputId,
    reason: kind === "permission" ? "tool_call" : "input_required",
    message,
  };
  if (typeof value.toolUseId === "string" && value.toolUseId !== "") interrupt.toolCallId = value.toolUseId;
  interrupt.responseSchema = responseSchemaFor(value);
  if (pending.expiresAt !== undefined) interrupt.expiresAt = pending.expiresAt;
  interrupt.metadata = {
    schemaVersion: INTERRUPT_METADATA_SCHEMA_VERSION,
    ...structuredClone(value),
    standardOptions: options,
  };
  return interrupt;
}
