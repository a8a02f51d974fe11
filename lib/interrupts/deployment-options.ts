/**
 * The options of a `deployment_confirmation`: each is an action the pipeline
 * understands, under an id the client echoes back. The kernel's pipeline
 * reads only the action, so an option that cannot be turned into one is a
 * broken projection, not something to show.
 */
import { AguiError } from "../errors.js";
import { detailParams, type DetailPhrase } from "../i18n/detail.js";
import { standardOptions, type StandardOption } from "./options.js";

export const DEPLOYMENT_ACTIONS = ["confirm", "adjust", "reselect", "cancel"] as const;
export type DeploymentAction = (typeof DEPLOYMENT_ACTIONS)[number];

export const MAX_DEPLOYMENT_OPTION_ID_LENGTH = 200;

export interface DeploymentOptions {
  standard: StandardOption[];
  /** Option id → its action; ids are unique, so the standard ids equal the kernel's. */
  actionById: ReadonlyMap<string, DeploymentAction>;
  /** The distinct actions on offer, sorted (the `action` branch's enum). */
  actions: DeploymentAction[];
}

const isAction = (value: unknown): value is DeploymentAction =>
  typeof value === "string" && (DEPLOYMENT_ACTIONS as readonly string[]).includes(value);

function invalid(where: string, phrase: DetailPhrase, values: Record<string, string | number> = {}): AguiError {
  return new AguiError("A2A_PROTOCOL_ERROR", {
    reason: "deploymentOptions",
    ...detailParams(`deployment_confirmation ${where}`, phrase, values),
  });
}

/** Throws `A2A_PROTOCOL_ERROR` (with a detail naming the field, never its value) when an option is unusable. */
export function deploymentOptions(rawOptions: unknown): DeploymentOptions {
  if (!Array.isArray(rawOptions) || rawOptions.length === 0) throw invalid("options", "nonEmptyList");
  const actionById = new Map<string, DeploymentAction>();
  rawOptions.forEach((option: unknown, index) => {
    const where = `options[${index}]`;
    if (typeof option !== "object" || option === null || Array.isArray(option)) throw invalid(where, "object");
    const { id, action } = option as Record<string, unknown>;
    if (typeof id !== "string" || id.trim() === "" || [...id].length > MAX_DEPLOYMENT_OPTION_ID_LENGTH) {
      throw invalid(`${where}.id`, "optionId", { limit: MAX_DEPLOYMENT_OPTION_ID_LENGTH });
    }
    if (actionById.has(id)) throw invalid(`${where}.id`, "unique");
    if (!isAction(action)) throw invalid(`${where}.action`, "oneOfValues", { values: DEPLOYMENT_ACTIONS.join(", ") });
    actionById.set(id, action);
  });
  return {
    standard: standardOptions(rawOptions),
    actionById,
    actions: [...new Set(actionById.values())].sort(),
  };
}

/**
 * `parameter_overrides` as the pipeline reads them: keys trimmed, null values
 * dropped, absent meaning `{}`. Undefined when a key is blank, which the
 * pipeline rejects; a schema cannot say "no blank keys" without changing the
 * schema shape the contract gives clients.
 */
export function parameterOverrides(raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const overrides: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key.trim() === "") return undefined;
    if (value !== null) overrides[key.trim()] = value;
  }
  return overrides;
}
