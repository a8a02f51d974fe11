/**
 * The `responseSchema` of each interrupt kind (contract §5 "Per kind"),
 * assembled from the JSON Schema files in `schemas/interrupts/`: the files
 * hold every constraint, this module only fills in the options.
 *
 * What goes on an Interrupt is a plain, self-contained schema: no `$ref`,
 * and no `$schema`, `$id` or `$comment`. A client compiles it with whatever
 * validator it has; a 2020-12 `$schema` makes a default (draft-07) ajv throw,
 * and one `$id` shared by every interrupt's differing schema makes a
 * validator that registers both throw on the second. The keywords used
 * (`type`, `properties`, `required`, `additionalProperties`, `enum`,
 * `const`, `minLength`, `oneOf`, `title`) mean the same in draft-07 and
 * 2020-12, so the dialect need not be named.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { InputProjection } from "../state/thread-state.js";
import { SCHEMAS_DIR } from "../paths.js";
import { deploymentOptions, type DeploymentOptions } from "./deployment-options.js";
import { kindOf } from "./kinds.js";
import { standardOptions, type StandardOption } from "./options.js";
import { pythonTruthy } from "./python-json.js";

export type JsonSchema = Record<string, unknown>;

export const INTERRUPT_SCHEMAS_DIR = path.join(SCHEMAS_DIR, "interrupts");

const TEMPLATE_FILES = {
  permissionResponse: "permission-response.schema.json",
  selectedOption: "selected-option.schema.json",
  freeText: "free-text.schema.json",
  resourceValue: "resource-value.schema.json",
  deploymentOption: "deployment-option.schema.json",
  deploymentAction: "deployment-action.schema.json",
  resourceCancellation: "resource-cancellation.schema.json",
} as const;

type TemplateName = keyof typeof TEMPLATE_FILES;

/** Annotations about the file in this repository, not about the answer. */
const FILE_ANNOTATIONS = ["$schema", "$id", "$comment"];

let templates: Readonly<Record<TemplateName, JsonSchema>> | undefined;

function loadTemplates(): Readonly<Record<TemplateName, JsonSchema>> {
  templates ??= Object.fromEntries(
    Object.entries(TEMPLATE_FILES).map(([name, file]) => {
      const schema = JSON.parse(readFileSync(path.join(INTERRUPT_SCHEMAS_DIR, file), "utf8")) as JsonSchema;
      for (const key of FILE_ANNOTATIONS) delete schema[key];
      return [name, schema];
    }),
  ) as Record<TemplateName, JsonSchema>;
  return templates;
}

/** A private copy: callers fill it in, and the loaded template must stay pristine. */
function template(name: TemplateName): JsonSchema {
  return structuredClone(loadTemplates()[name]);
}

type PropertySchemas = Record<string, Record<string, unknown>>;
const propertiesOf = (schema: JsonSchema) => schema.properties as PropertySchemas;

function optionBranch(name: "selectedOption" | "deploymentOption", option: StandardOption): JsonSchema {
  const branch = template(name);
  const selectedId = propertiesOf(branch).selectedId!;
  selectedId.const = option.id;
  selectedId.title = option.title;
  return branch;
}

export function permissionResponseSchema(): JsonSchema {
  return template("permissionResponse");
}

/** One branch per option, plus free text when it is allowed or there is nothing else to answer with. */
export function selectionResponseSchema(options: readonly StandardOption[], allowFreeText: boolean): JsonSchema {
  const branches = options.map((option) => optionBranch("selectedOption", option));
  if (allowFreeText || options.length === 0) branches.push(template("freeText"));
  return { oneOf: branches };
}

export function resourceResponseSchema(): JsonSchema {
  return { oneOf: [template("resourceValue"), template("freeText")] };
}

export function deploymentResponseSchema(deployment: DeploymentOptions): JsonSchema {
  const action = template("deploymentAction");
  propertiesOf(action).action!.enum = [...deployment.actions];
  return { oneOf: [...deployment.standard.map((option) => optionBranch("deploymentOption", option)), action] };
}

/** What a `cancelled` cloud resource selection may carry; not part of the Interrupt. */
export function resourceCancellationSchema(): JsonSchema {
  return template("resourceCancellation");
}

/**
 * The schema a resolved answer to this projection must match. Deterministic,
 * so it is recomputed from the persisted projection rather than stored.
 * Throws `A2A_PROTOCOL_ERROR` for a deployment confirmation with unusable options.
 */
export function responseSchemaFor(value: InputProjection): JsonSchema {
  const kind = kindOf(value);
  switch (kind) {
    case "permission":
      return permissionResponseSchema();
    case "cloud_resource_selection":
      return resourceResponseSchema();
    case "deployment_confirmation":
      return deploymentResponseSchema(deploymentOptions(value.options));
    case "selection":
      return selectionResponseSchema(standardOptions(value.options), pythonTruthy(value.allowFreeText));
    default:
      return kind satisfies never;
  }
}
