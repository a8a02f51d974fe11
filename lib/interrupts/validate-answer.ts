/**
 * One resume entry checked against the interrupt it answers (R-RES-3,
 * R-RES-4). A failure leaves the interrupt pending and answerable: nothing
 * here changes state.
 */
import type { ResumeEntry } from "@ag-ui/core";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { AguiError, type MessageParams } from "../errors.js";
import { detailParams, schemaErrorDetail } from "../i18n/detail.js";
import type { JsonObject } from "../model/json.js";
import type { PendingInput } from "../state/thread-state.js";
import { parameterOverrides } from "./deployment-options.js";
import { kindOf } from "./kinds.js";
import { pythonJsonDumps } from "./python-json.js";
import { permissionResponseSchema, resourceCancellationSchema, responseSchemaFor, type JsonSchema } from "./response-schemas.js";

export type ResumeAnswer = Pick<ResumeEntry, "interruptId" | "status" | "payload">;

/**
 * `resolved`: the payload matched the responseSchema. `cancelled`: a
 * permission carries `{decision: "deny"}`, a cloud resource selection its
 * optional `{optionsEmpty}`, any other kind nothing (the task is cancelled).
 */
export type ValidAnswer =
  { interruptId: string; status: "resolved"; payload: JsonObject } | { interruptId: string; status: "cancelled"; payload?: JsonObject };

/**
 * Option sets differ per interrupt, so compiled validators are cached by the
 * schema's canonical JSON and the least recently used are dropped (from ajv's
 * own cache too) so a long-lived service does not grow without bound.
 */
const MAX_CACHED_VALIDATORS = 256;
const validators = new Map<string, ValidateFunction>();
let ajv: Ajv2020 | undefined;

function validatorFor(schema: JsonSchema): ValidateFunction {
  const key = pythonJsonDumps(schema, { compact: true, sortKeys: true });
  const cached = validators.get(key);
  if (cached) {
    validators.delete(key);
    validators.set(key, cached);
    return cached;
  }
  ajv ??= new Ajv2020({ strict: true });
  const validate = ajv.compile(schema);
  validators.set(key, validate);
  if (validators.size > MAX_CACHED_VALIDATORS) {
    const [oldestKey, oldest] = validators.entries().next().value!;
    validators.delete(oldestKey);
    ajv.removeSchema(oldest.schema as object);
  }
  return validate;
}

const depth = (error: ErrorObject) => (error.instancePath === "" ? 0 : error.instancePath.split("/").length);

/**
 * Where and why (detail params, see `i18n/detail.ts`), never the submitted
 * value. Of a `oneOf`'s branch errors the deepest is the most telling
 * (`/freeText: must NOT have fewer than 1 characters` rather than "must
 * match exactly one schema").
 */
function describe(errors: ErrorObject[] | null | undefined): MessageParams {
  const all = errors ?? [];
  const specific = all.filter((error) => error.keyword !== "oneOf");
  const deepest = specific.reduce<ErrorObject | undefined>(
    (best, error) => (!best || depth(error) > depth(best) ? error : best),
    undefined,
  );
  const chosen = deepest ?? all[0];
  return chosen ? schemaErrorDetail(chosen) : detailParams("/", "invalid");
}

function check(schema: JsonSchema, payload: unknown): JsonObject {
  const validate = validatorFor(schema);
  if (!validate(payload)) throw new AguiError("RESUME_PAYLOAD_INVALID", describe(validate.errors));
  return structuredClone(payload as JsonObject);
}

export function validateAnswer(pending: PendingInput, entry: ResumeAnswer): ValidAnswer {
  const { interruptId } = entry;
  const kind = kindOf(pending.value);
  if (entry.status === "cancelled") {
    if (kind === "permission") {
      return { interruptId, status: "cancelled", payload: check(permissionResponseSchema(), { decision: "deny" }) };
    }
    if (kind === "cloud_resource_selection" && entry.payload !== undefined && entry.payload !== null) {
      return { interruptId, status: "cancelled", payload: check(resourceCancellationSchema(), entry.payload) };
    }
    return { interruptId, status: "cancelled" };
  }
  // JSON null is no answer either: the reference reads it as Python None.
  if (entry.payload === undefined || entry.payload === null) throw new AguiError("RESUME_PAYLOAD_INVALID", { reason: "missing" });
  const payload = check(responseSchemaFor(pending.value), entry.payload);
  if (kind === "deployment_confirmation" && parameterOverrides(payload.parameter_overrides) === undefined) {
    throw new AguiError("RESUME_PAYLOAD_INVALID", detailParams("/parameter_overrides", "blankKeys"));
  }
  return { interruptId, status: "resolved", payload };
}
