import { describe, expect, it } from "@jest/globals";
import { AguiError } from "../../../lib/errors.js";
import { validateAnswer, type ResumeAnswer } from "../../../lib/interrupts/validate-answer.js";
import type { InputProjection } from "../../../lib/state/thread-state.js";
import { candidates, deployment, pendingOf, permission, question, resource } from "./projections.js";

function failure(value: InputProjection, entry: ResumeAnswer): AguiError {
  try {
    validateAnswer(pendingOf(value), entry);
  } catch (error) {
    if (error instanceof AguiError) return error;
    throw error;
  }
  throw new Error("expected validateAnswer to throw");
}

const resolved = (interruptId: string, payload?: unknown): ResumeAnswer => ({ interruptId, status: "resolved", payload });
const cancelled = (interruptId: string, payload?: unknown): ResumeAnswer => ({ interruptId, status: "cancelled", payload });

describe("validateAnswer: resolved without a payload", () => {
  it.each([undefined, null])("is RESUME_PAYLOAD_INVALID (missing) for %p", (payload) => {
    const error = failure(question, resolved("q-1", payload));
    expect(error.code).toBe("RESUME_PAYLOAD_INVALID");
    expect(error.params).toEqual({ reason: "missing" });
  });
});

describe("validateAnswer: permission", () => {
  it.each(["allow_once", "deny"])("accepts {decision: %s}", (decision) => {
    expect(validateAnswer(pendingOf(permission), resolved("perm-1", { decision }))).toEqual({
      interruptId: "perm-1",
      status: "resolved",
      payload: { decision },
    });
  });

  it.each([
    [{ decision: "allow_always" }, "/decision: must be equal to one of the allowed values"],
    [{ decision: "allow_once", note: "x" }, '/: must NOT have additional property "note"'],
    [{}, "/: must have required property 'decision'"],
    ["allow_once", "/: must be object"],
  ])("rejects %j without echoing the value", (payload, detail) => {
    const error = failure(permission, resolved("perm-1", payload));
    expect(error.code).toBe("RESUME_PAYLOAD_INVALID");
    expect(error.params).toMatchObject({ detail });
  });

  it("reads cancelled as a validated deny (R-RES-4), whatever payload came with it", () => {
    expect(validateAnswer(pendingOf(permission), cancelled("perm-1", { decision: "allow_once" }))).toEqual({
      interruptId: "perm-1",
      status: "cancelled",
      payload: { decision: "deny" },
    });
  });
});

describe("validateAnswer: selections", () => {
  it("accepts an offered option and non-empty free text when allowed", () => {
    expect(validateAnswer(pendingOf(question), resolved("q-1", { selectedId: "bj" })).payload).toEqual({ selectedId: "bj" });
    expect(validateAnswer(pendingOf(question), resolved("q-1", { freeText: "Shanghai" })).payload).toEqual({ freeText: "Shanghai" });
  });

  it("rejects an option that was not offered", () => {
    expect(failure(question, resolved("q-1", { selectedId: "unknown" })).params).toMatchObject({
      detail: "/selectedId: must be equal to constant",
    });
  });

  it("rejects empty free text", () => {
    expect(failure(question, resolved("q-1", { freeText: "" })).params).toMatchObject({
      detail: "/freeText: must NOT have fewer than 1 characters",
    });
  });

  it("rejects free text when options exist and free text is not allowed", () => {
    expect(failure(candidates, resolved("cand-1", { freeText: "Medium" })).code).toBe("RESUME_PAYLOAD_INVALID");
    expect(validateAnswer(pendingOf(candidates), resolved("cand-1", { selectedId: "1" })).status).toBe("resolved");
  });

  it("takes cancelled as a cancellation, with no payload needed", () => {
    expect(validateAnswer(pendingOf(question), cancelled("q-1"))).toEqual({ interruptId: "q-1", status: "cancelled" });
    expect(validateAnswer(pendingOf(deployment), cancelled("deploy-1", { anything: 1 }))).toEqual({
      interruptId: "deploy-1",
      status: "cancelled",
    });
  });
});

describe("validateAnswer: deployment_confirmation", () => {
  it("accepts an option id or an offered action, with optional object overrides", () => {
    expect(validateAnswer(pendingOf(deployment), resolved("deploy-1", { selectedId: "go" })).status).toBe("resolved");
    expect(
      validateAnswer(pendingOf(deployment), resolved("deploy-1", { action: "adjust", parameter_overrides: { Size: 2 } })).payload,
    ).toEqual({ action: "adjust", parameter_overrides: { Size: 2 } });
  });

  it.each<[Record<string, unknown>, string]>([
    [{ action: "reselect" }, "an action no option offers"],
    [{ selectedId: "go", parameter_overrides: "big" }, "overrides that are not an object"],
    [{ selectedId: "go", action: "confirm" }, "both an option and an action"],
    [{ action: "confirm", parameter_overrides: { " ": 1 } }, "a blank override key"],
  ])("rejects %j (%s)", (payload) => {
    expect(failure(deployment, resolved("deploy-1", payload)).code).toBe("RESUME_PAYLOAD_INVALID");
  });
});

describe("validateAnswer: cloud_resource_selection", () => {
  const id = resource.inputId;

  it("accepts a value with an optional label, or free text", () => {
    expect(validateAnswer(pendingOf(resource), resolved(id, { value: "vpc-1", label: "main" })).payload).toEqual({
      value: "vpc-1",
      label: "main",
    });
    expect(validateAnswer(pendingOf(resource), resolved(id, { freeText: "vpc-2" })).payload).toEqual({ freeText: "vpc-2" });
  });

  it.each([[{ value: "" }], [{ label: "main" }], [{ value: "vpc-1", selectorId: "x" }]])("rejects %j", (payload) => {
    expect(failure(resource, resolved(id, payload)).code).toBe("RESUME_PAYLOAD_INVALID");
  });

  it("keeps a cancellation's optionsEmpty flag and rejects anything else in it", () => {
    expect(validateAnswer(pendingOf(resource), cancelled(id, { optionsEmpty: true }))).toEqual({
      interruptId: id,
      status: "cancelled",
      payload: { optionsEmpty: true },
    });
    expect(validateAnswer(pendingOf(resource), cancelled(id))).toEqual({ interruptId: id, status: "cancelled" });
    expect(failure(resource, cancelled(id, { optionsEmpty: "yes" })).code).toBe("RESUME_PAYLOAD_INVALID");
  });
});

describe("validateAnswer: the validator cache", () => {
  it("gives the same verdicts when a schema is seen again and after many distinct schemas", () => {
    for (let i = 0; i < 300; i++) {
      const value = { ...question, inputId: `q-${i}`, options: [{ id: `o-${i}` }] };
      expect(validateAnswer(pendingOf(value), resolved(value.inputId, { selectedId: `o-${i}` })).status).toBe("resolved");
    }
    expect(validateAnswer(pendingOf(question), resolved("q-1", { selectedId: "hz" })).status).toBe("resolved");
    expect(failure(question, resolved("q-1", { selectedId: "o-1" })).code).toBe("RESUME_PAYLOAD_INVALID");
  });
});
