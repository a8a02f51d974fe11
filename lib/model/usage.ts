/**
 * Token usage as the kernel reports it (`metadata.iac_code.usage`, or the
 * data of a pipeline `usage` envelope) → AG-UI's `TokenUsage`. Both paths
 * read it here, so a run's usage adds up the same whichever one it came by.
 */
import type { TokenUsage } from "@ag-ui/core";
import { nonEmptyString, type JsonObject } from "./json.js";

/** The counts a `TokenUsage` carries. */
export const TOKEN_COUNTS = ["inputTokens", "outputTokens", "totalTokens", "cachedInputTokens"] as const;

/** Struct numbers arrive as floats (`6497.0`); only finite ones are counts, cut to whole tokens. */
const tokenCount = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : undefined;

/** The provider and model when named, and each count the kernel gave as a number; anything else is left out. */
export function tokenUsageOf(raw: JsonObject): TokenUsage {
  const usage: TokenUsage = {};
  const provider = nonEmptyString(raw.provider);
  const model = nonEmptyString(raw.model);
  if (provider !== undefined) usage.provider = provider;
  if (model !== undefined) usage.model = model;
  for (const key of TOKEN_COUNTS) {
    const value = tokenCount(raw[key]);
    if (value !== undefined) usage[key] = value;
  }
  return usage;
}
