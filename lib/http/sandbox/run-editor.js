// @ts-check
/**
 * A raw `RunAgentInput`, typed or pasted as JSON, checked on the page before
 * anything is sent: the JSON itself (with where it breaks), then the fields
 * AG-UI requires and their types. The service checks again, and its refusal
 * is shown as any other; this only saves a round trip for the plain mistakes.
 */

const ROLES = new Set(["user", "assistant", "system", "developer", "tool", "activity", "reasoning"]);

/** @param {unknown} value @returns {value is Record<string, any>} */
const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * @param {string} text
 * @returns {{ input: Record<string, any>, errors: [] } | { input: undefined, errors: string[] }}
 */
export function checkRunInput(text) {
  /** @type {unknown} */
  let input;
  try {
    input = JSON.parse(text);
  } catch (error) {
    return { input: undefined, errors: [`Not JSON: ${error instanceof Error ? error.message : error}`] };
  }
  if (!isObject(input)) return { input: undefined, errors: ["A RunAgentInput is a JSON object."] };
  /** @type {string[]} */
  const errors = [];
  for (const key of ["threadId", "runId"]) {
    if (typeof input[key] !== "string" || input[key] === "") errors.push(`${key} must be a non-empty string.`);
  }
  for (const key of ["messages", "tools", "context"]) {
    if (!Array.isArray(input[key])) errors.push(`${key} must be an array.`);
  }
  if (!("state" in input)) errors.push("state is missing (send {} for none).");
  if ("forwardedProps" in input && !isObject(input.forwardedProps)) errors.push("forwardedProps must be an object.");
  if ("parentRunId" in input && typeof input.parentRunId !== "string") errors.push("parentRunId must be a string.");
  if (Array.isArray(input.messages)) {
    input.messages.forEach((/** @type {unknown} */ message, /** @type {number} */ i) => {
      if (!isObject(message)) return errors.push(`messages[${i}] must be an object.`);
      if (typeof message.id !== "string" || message.id === "") errors.push(`messages[${i}].id must be a non-empty string.`);
      if (!ROLES.has(message.role)) errors.push(`messages[${i}].role must be one of ${[...ROLES].join(", ")}.`);
      return undefined;
    });
  }
  return errors.length ? { input: undefined, errors } : { input, errors: [] };
}
