import { describe, expect, it } from "@jest/globals";
import { inputsOf, isRequiredInput, keepInput } from "../../../lib/interrupts/keep-input.js";
import { KEPT_INPUT_FIELDS } from "../../../lib/state/thread-state.js";

const fixedId = () => "0123456789abcdef0123456789abcdef";

describe("keepInput", () => {
  it("keeps only the allowlisted fields", () => {
    const raw = { kind: "permission", inputId: "p-1", prompt: "Allow?", toolInput: { password: "hunter2" }, secret: "x", required: true };
    expect(keepInput(raw, fixedId)).toEqual({ kind: "permission", inputId: "p-1", prompt: "Allow?", required: true });
    for (const key of Object.keys(keepInput(raw, fixedId))) expect(KEPT_INPUT_FIELDS).toContain(key);
  });

  it("generates input-<32 hex> when the kernel sent no id", () => {
    expect(keepInput({ kind: "question" }, fixedId).inputId).toBe("input-0123456789abcdef0123456789abcdef");
    expect(keepInput({ inputId: "" }, fixedId).inputId).toBe("input-0123456789abcdef0123456789abcdef");
    expect(keepInput({}).inputId).toMatch(/^input-[0-9a-f]{32}$/);
  });

  it("copies nested values, so later changes to the kernel's object do not leak in", () => {
    const raw = { inputId: "q", options: [{ id: "a" }] };
    const kept = keepInput(raw);
    (raw.options[0] as { id: string }).id = "changed";
    expect(kept.options).toEqual([{ id: "a" }]);
  });
});

describe("isRequiredInput", () => {
  it("is true only for required === true", () => {
    expect([{ required: true }, { required: "true" }, { required: 1 }, {}, null, "x"].map(isRequiredInput)).toEqual([
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe("inputsOf", () => {
  it("finds the direct input and each required pending permission, input first", () => {
    const found = inputsOf({
      input: { kind: "ask_user_question", inputId: "q-1", required: true },
      pendingPermissions: [
        { kind: "permission", inputId: "p-1", required: true },
        { kind: "permission", inputId: "p-2", required: false },
      ],
    });
    expect(found).toEqual([
      { value: { kind: "ask_user_question", inputId: "q-1", required: true }, sideband: false },
      { value: { kind: "permission", inputId: "p-1", required: true }, sideband: true },
    ]);
  });

  it("ignores an input that is not required, and metadata without inputs", () => {
    expect(inputsOf({ input: { inputId: "q", required: false } })).toEqual([]);
    expect(inputsOf(undefined)).toEqual([]);
    expect(inputsOf({ pendingPermissions: "nope" })).toEqual([]);
  });

  it("marks candidate-scoped and sub-pipeline inputs as sideband", () => {
    expect(inputsOf({ input: { inputId: "a", scope: "candidate", required: true } })[0]!.sideband).toBe(true);
    expect(inputsOf({ input: { inputId: "b", subPipelineId: "sub-1", required: true } })[0]!.sideband).toBe(true);
    expect(inputsOf({ input: { inputId: "c", scope: "step", subPipelineId: 3, required: true } })[0]!.sideband).toBe(false);
  });

  it("deduplicates by inputId, keeping the first copy, sideband if any copy came from pendingPermissions", () => {
    const found = inputsOf({
      input: { kind: "permission", inputId: "p-1", prompt: "first", required: true },
      pendingPermissions: [{ kind: "permission", inputId: "p-1", prompt: "second", required: true }],
    });
    expect(found).toEqual([{ value: { kind: "permission", inputId: "p-1", prompt: "first", required: true }, sideband: true }]);
  });

  it("deduplicates id-less projections by their canonical JSON, whatever the key order", () => {
    const found = inputsOf(
      {
        input: { kind: "permission", prompt: "x", required: true },
        pendingPermissions: [
          { required: true, prompt: "x", kind: "permission" },
          { required: true, prompt: "y", kind: "permission" },
        ],
      },
      fixedId,
    );
    expect(found.map((f) => f.value.prompt)).toEqual(["x", "y"]);
    expect(found[0]!.value.inputId).toBe("input-0123456789abcdef0123456789abcdef");
  });
});
