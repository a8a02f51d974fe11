import { describe, expect, it } from "@jest/globals";
import type { Interrupt } from "@ag-ui/core";
import { EventSchemas } from "@ag-ui/core/schemas";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { AguiError } from "../../../lib/errors.js";
import { toInterrupt } from "../../../lib/interrupts/to-interrupt.js";
import { candidates, deployment, pendingOf, permission, question, resource } from "./projections.js";

const PERMISSION_SCHEMA = {
  type: "object",
  properties: { decision: { type: "string", enum: ["allow_once", "deny"] } },
  required: ["decision"],
  additionalProperties: false,
};
const FREE_TEXT = {
  type: "object",
  properties: { freeText: { type: "string", minLength: 1 } },
  required: ["freeText"],
  additionalProperties: false,
};
const option = (id: string, title: string) => ({
  type: "object",
  properties: { selectedId: { type: "string", const: id, title } },
  required: ["selectedId"],
  additionalProperties: false,
});

describe("toInterrupt: permission", () => {
  it("is a tool_call interrupt with the decision schema, the tool call and every kept field in metadata", () => {
    const expiresAt = "2026-01-01T00:09:00.000Z";
    expect(toInterrupt(pendingOf(permission, { expiresAt }))).toEqual({
      id: "perm-1",
      reason: "tool_call",
      message: "Allow ros_deploy to create the stack?",
      toolCallId: "tool-perm",
      responseSchema: PERMISSION_SCHEMA,
      expiresAt,
      metadata: { ...permission, schemaVersion: 1, standardOptions: [] },
    });
  });

  it("falls back to the title, then to the localized 'Permission required'", () => {
    expect(toInterrupt(pendingOf({ ...permission, prompt: "" })).message).toBe("Deploy stack");
    const bare = { ...permission, prompt: undefined, title: undefined };
    expect(toInterrupt(pendingOf(bare)).message).toBe("Permission required");
    expect(toInterrupt(pendingOf({ ...bare, language: "ja" })).message).toBe("許可が必要です");
  });

  it("omits toolCallId and expiresAt rather than sending them empty", () => {
    const interrupt = toInterrupt(pendingOf({ ...permission, toolUseId: undefined }));
    expect(interrupt).not.toHaveProperty("toolCallId");
    expect(interrupt).not.toHaveProperty("expiresAt");
  });
});

describe("toInterrupt: language of fallback messages", () => {
  const bare = { ...question, prompt: undefined, options: [] };

  it("uses the projection's language, then the request's, then English", () => {
    expect(toInterrupt(pendingOf({ ...bare, language: "ja-JP" }), "en").message).toBe("入力が必要です");
    expect(toInterrupt(pendingOf(bare), "ja").message).toBe("入力が必要です");
    expect(toInterrupt(pendingOf({ ...bare, language: "xx" }), "ja").message).toBe("入力が必要です");
    expect(toInterrupt(pendingOf(bare)).message).toBe("Input required");
  });
});

describe("toInterrupt: selections", () => {
  it("lists the options in the message and offers one branch per option, plus free text when allowed", () => {
    const interrupt = toInterrupt(pendingOf(question));
    expect(interrupt.reason).toBe("input_required");
    expect(interrupt.toolCallId).toBe("tool-q");
    expect(interrupt.message).toBe("Which region?\n- hz: Hangzhou\n- bj: Beijing");
    expect(interrupt.responseSchema).toEqual({ oneOf: [option("hz", "Hangzhou"), option("bj", "Beijing"), FREE_TEXT] });
    expect(interrupt.metadata?.standardOptions).toEqual([
      { id: "hz", title: "Hangzhou" },
      { id: "bj", title: "Beijing" },
    ]);
  });

  it("offers no free text when options exist and allowFreeText is not set (candidate_selection by index)", () => {
    const interrupt = toInterrupt(pendingOf(candidates));
    expect(interrupt.message).toBe("Pick a plan\n- 0: Small\n- 1: Large");
    expect(interrupt.responseSchema).toEqual({ oneOf: [option("0", "Small"), option("1", "Large")] });
    expect(interrupt).not.toHaveProperty("toolCallId");
  });

  it("offers free text alone when there are no options", () => {
    const interrupt = toInterrupt(pendingOf({ ...question, options: undefined, allowFreeText: false }));
    expect(interrupt.message).toBe("Which region?");
    expect(interrupt.responseSchema).toEqual({ oneOf: [FREE_TEXT] });
  });

  it("localizes the fallback prompt above the option list (ja)", () => {
    const interrupt = toInterrupt(pendingOf({ ...question, prompt: undefined, language: "ja" }));
    expect(interrupt.message).toBe("入力が必要です\n- hz: Hangzhou\n- bj: Beijing");
  });
});

describe("toInterrupt: cloud_resource_selection", () => {
  it("asks for a resource value (with an optional label) or free text, with the prompt alone as message", () => {
    const interrupt = toInterrupt(pendingOf(resource));
    expect(interrupt.reason).toBe("input_required");
    expect(interrupt.message).toBe("Choose a VPC");
    expect(interrupt.toolCallId).toBe("tool-res");
    expect(interrupt.responseSchema).toEqual({
      oneOf: [
        {
          type: "object",
          properties: { value: { type: "string", minLength: 1 }, label: { type: "string" } },
          required: ["value"],
          additionalProperties: false,
        },
        FREE_TEXT,
      ],
    });
    expect(interrupt.metadata?.selector).toEqual(resource.selector);
  });

  it("falls back to the localized 'Input required'", () => {
    expect(toInterrupt(pendingOf({ ...resource, prompt: undefined })).message).toBe("Input required");
    expect(toInterrupt(pendingOf({ ...resource, prompt: undefined, language: "ja" })).message).toBe("入力が必要です");
  });
});

describe("toInterrupt: deployment_confirmation", () => {
  it("offers each option (with optional overrides) or one of the sorted actions", () => {
    const interrupt = toInterrupt(pendingOf(deployment));
    const branch = (id: string, title: string) => ({
      type: "object",
      properties: { selectedId: { type: "string", const: id, title }, parameter_overrides: { type: "object" } },
      required: ["selectedId"],
      additionalProperties: false,
    });
    expect(interrupt.message).toBe("Deploy now?\n- go: Deploy\n- tweak: Adjust parameters\n- stop: Cancel");
    expect(interrupt.responseSchema).toEqual({
      oneOf: [
        branch("go", "Deploy"),
        branch("tweak", "Adjust parameters"),
        branch("stop", "Cancel"),
        {
          type: "object",
          properties: { action: { type: "string", enum: ["adjust", "cancel", "confirm"] }, parameter_overrides: { type: "object" } },
          required: ["action"],
          additionalProperties: false,
        },
      ],
    });
  });

  it("localizes the fallback prompt (ja)", () => {
    expect(toInterrupt(pendingOf({ ...deployment, prompt: undefined, language: "ja" })).message).toBe(
      "入力が必要です\n- go: Deploy\n- tweak: Adjust parameters\n- stop: Cancel",
    );
  });

  it("refuses a projection whose options are unusable (A2A_PROTOCOL_ERROR)", () => {
    const broken = { ...deployment, options: [{ id: "go", action: "launch" }] };
    expect(() => toInterrupt(pendingOf(broken))).toThrow(AguiError);
    try {
      toInterrupt(pendingOf(broken));
    } catch (error) {
      expect((error as AguiError).code).toBe("A2A_PROTOCOL_ERROR");
    }
  });
});

describe("every generated responseSchema", () => {
  const interrupts: Interrupt[] = [permission, question, candidates, deployment, resource, { ...question, options: [] }].map((value) =>
    toInterrupt(pendingOf(value, { expiresAt: "2026-01-01T00:00:00.000Z" })),
  );

  it("is self-contained: no $ref, $id or $schema anywhere", () => {
    for (const { responseSchema } of interrupts) expect(JSON.stringify(responseSchema)).not.toMatch(/"\$(ref|id|schema)"/);
  });

  it("compiles under ajv strict mode, in both the 2020-12 and the default (draft-07) dialect", () => {
    const draft2020 = new Ajv2020({ strict: true });
    const draft7 = new Ajv({ strict: true });
    for (const { responseSchema } of interrupts) {
      expect(() => draft2020.compile(responseSchema!)).not.toThrow();
      expect(() => draft7.compile(responseSchema!)).not.toThrow();
    }
  });

  it("passes @ag-ui/core's event schema inside RUN_FINISHED with an interrupt outcome, unchanged", () => {
    const event = { type: "RUN_FINISHED", threadId: "t", runId: "r", outcome: { type: "interrupt", interrupts } };
    const parsed = EventSchemas.parse(event) as unknown as { outcome: { interrupts: Interrupt[] } };
    expect(parsed.outcome.interrupts).toEqual(interrupts);
  });
});
