import { describe, expect, it } from "@jest/globals";
import { answerMessage, RESOURCE_SELECTION_QUERY_PREFIX } from "../../../lib/interrupts/answer-message.js";
import type { ValidAnswer } from "../../../lib/interrupts/validate-answer.js";
import { CONTEXT, TASK, candidates, deployment, pendingOf, permission, question, resource } from "./projections.js";

const ctx = { taskId: TASK, contextId: CONTEXT, runId: "run-2" };
const resolved = (interruptId: string, payload: Record<string, unknown>): ValidAnswer => ({ interruptId, status: "resolved", payload });
const textOf = (delivery: ReturnType<typeof answerMessage>) =>
  delivery.call === "cancel" ? undefined : (delivery.message.parts[0] as { text: string }).text;

describe("answerMessage: permission", () => {
  it("streams one data part with exactly the six keys the kernel requires", () => {
    const delivery = answerMessage(pendingOf(permission), resolved("perm-1", { decision: "allow_once" }), ctx);
    expect(delivery).toEqual({
      call: "stream",
      message: {
        messageId: "agui-resume-run-2-perm-1",
        role: "ROLE_USER",
        parts: [
          {
            data: {
              schemaVersion: 1,
              kind: "permission",
              requestTaskId: TASK,
              inputId: "perm-1",
              toolUseId: "tool-perm",
              decision: "allow_once",
            },
            mediaType: "application/json",
          },
        ],
        contextId: CONTEXT,
        taskId: TASK,
      },
    });
    const data = (delivery as { message: { parts: [{ data: object }] } }).message.parts[0].data;
    expect(Object.keys(data)).toEqual(["schemaVersion", "kind", "requestTaskId", "inputId", "toolUseId", "decision"]);
  });

  it("sends a cancelled permission as deny", () => {
    const delivery = answerMessage(
      pendingOf(permission),
      { interruptId: "perm-1", status: "cancelled", payload: { decision: "deny" } },
      ctx,
    );
    expect(delivery.call).toBe("stream");
    expect(JSON.stringify(delivery)).toContain('"decision":"deny"');
  });

  it("goes sideband, with agui-resume-<interruptId>, for a sideband input or when the run says so", () => {
    const answer = resolved("perm-1", { decision: "deny" });
    const own = answerMessage(pendingOf(permission, { sideband: true }), answer, ctx);
    expect(own.call).toBe("sideband");
    expect(own.call !== "cancel" && own.message.messageId).toBe("agui-resume-perm-1");
    // A resume that also answers a non-sideband permission streams them all.
    const forced = answerMessage(pendingOf(permission, { sideband: true }), answer, { ...ctx, sideband: false });
    expect(forced.call !== "cancel" && [forced.call, forced.message.messageId]).toEqual(["stream", "agui-resume-run-2-perm-1"]);
  });
});

describe("answerMessage: question and candidate selection", () => {
  it("sends free text verbatim and closes the asking tool call with it", () => {
    expect(answerMessage(pendingOf(question), resolved("q-1", { freeText: "Shanghai, please" }), ctx)).toEqual({
      call: "stream",
      message: {
        messageId: "agui-resume-run-2",
        role: "ROLE_USER",
        parts: [{ text: "Shanghai, please" }],
        contextId: CONTEXT,
        taskId: TASK,
      },
      toolResult: { toolCallId: "tool-q", content: "Shanghai, please" },
    });
  });

  it("sends a chosen option as its label, else its name, else its id", () => {
    const value = { ...question, options: [{ id: "a", label: "Alpha", name: "A" }, { id: "b", name: "Bravo" }, { id: "c" }] };
    const text = (selectedId: string) => textOf(answerMessage(pendingOf(value), resolved("q-1", { selectedId }), ctx));
    expect([text("a"), text("b"), text("c")]).toEqual(["Alpha", "Bravo", "c"]);
  });

  it("accepts the snake_case spellings free_text and selected_id", () => {
    expect(textOf(answerMessage(pendingOf(question), resolved("q-1", { free_text: "here" }), ctx))).toBe("here");
    expect(textOf(answerMessage(pendingOf(question), resolved("q-1", { selected_id: "hz" }), ctx))).toBe("Hangzhou");
  });

  it("sends a candidate known only by index as that index, and emits no tool result without a toolUseId", () => {
    const delivery = answerMessage(pendingOf(candidates), resolved("cand-1", { selectedId: "1" }), ctx);
    expect(textOf(delivery)).toBe("1");
    expect(delivery).not.toHaveProperty("toolResult");
  });

  it("cancels the task for a cancelled question", () => {
    expect(answerMessage(pendingOf(question), { interruptId: "q-1", status: "cancelled" }, ctx)).toEqual({ call: "cancel" });
  });
});

describe("answerMessage: deployment_confirmation", () => {
  it("sends the selected option's action as Python json.dumps text with empty overrides", () => {
    const delivery = answerMessage(pendingOf(deployment), resolved("deploy-1", { selectedId: "go" }), ctx);
    expect(delivery).toEqual({
      call: "stream",
      message: {
        messageId: "agui-resume-run-2",
        role: "ROLE_USER",
        parts: [{ text: '{"action": "confirm", "parameter_overrides": {}}' }],
        contextId: CONTEXT,
        taskId: TASK,
      },
      toolResult: { toolCallId: "tool-deploy", content: '{"action": "confirm", "parameter_overrides": {}}' },
    });
  });

  it("sends an explicit action with its overrides (keys trimmed, nulls dropped, non-ASCII kept)", () => {
    const payload = {
      action: "adjust",
      parameter_overrides: { " Name ": "スタック", Size: 2, Ratio: 0.5, Old: null, Tags: { env: "prod" } },
    };
    expect(textOf(answerMessage(pendingOf(deployment), resolved("deploy-1", payload), ctx))).toBe(
      '{"action": "adjust", "parameter_overrides": {"Name": "スタック", "Size": 2, "Ratio": 0.5, "Tags": {"env": "prod"}}}',
    );
  });

  it("cancels the task for a cancelled confirmation", () => {
    expect(answerMessage(pendingOf(deployment), { interruptId: "deploy-1", status: "cancelled" }, ctx)).toEqual({ call: "cancel" });
  });
});

describe("answerMessage: cloud_resource_selection", () => {
  const id = resource.inputId;
  const base = { schemaVersion: 1, kind: "cloud_resource_selection" };
  const correlation = { requestTaskId: TASK, contextId: CONTEXT, inputId: id, toolUseId: "tool-res" };

  it("sends the kernel's prefix and the compact selected response, in the kernel's key order, and closes the tool call with the label", () => {
    expect(RESOURCE_SELECTION_QUERY_PREFIX).toBe("IAC_CODE_RESOURCE_SELECTION:");
    const delivery = answerMessage(pendingOf(resource), resolved(id, { value: "vpc-1", label: "main" }), ctx);
    const json = `{"schemaVersion":1,"kind":"cloud_resource_selection","status":"selected","requestTaskId":"${TASK}","contextId":"${CONTEXT}","inputId":"${id}","toolUseId":"tool-res","selectorId":"vpc.vpc","value":"vpc-1","label":"main"}`;
    expect(delivery).toEqual({
      call: "stream",
      message: {
        messageId: "agui-resume-run-2",
        role: "ROLE_USER",
        parts: [{ text: RESOURCE_SELECTION_QUERY_PREFIX + json }],
        contextId: CONTEXT,
        taskId: TASK,
      },
      inputResponse: { ...base, status: "selected", ...correlation, selectorId: "vpc.vpc", value: "vpc-1", label: "main" },
      toolResult: { toolCallId: "tool-res", content: "main" },
    });
  });

  it("labels an unlabelled value with itself, takes free text as the value, and echoes the selector's source", () => {
    const withSource = { ...resource, selector: { id: "vpc.vswitch", source: { selectorId: "vpc.vpc", value: "vpc-1" } } };
    const delivery = answerMessage(pendingOf(withSource), resolved(id, { freeText: "vsw-9" }), ctx);
    expect(delivery.call !== "cancel" && delivery.inputResponse).toEqual({
      ...base,
      status: "selected",
      ...correlation,
      selectorId: "vpc.vswitch",
      value: "vsw-9",
      label: "vsw-9",
      source: { selectorId: "vpc.vpc", value: "vpc-1" },
    });
  });

  it("sends a cancellation as status canceled with optionsEmpty, instead of cancelling the task", () => {
    const delivery = answerMessage(pendingOf(resource), { interruptId: id, status: "cancelled", payload: { optionsEmpty: false } }, ctx);
    expect(delivery.call).toBe("stream");
    expect(textOf(delivery)).toBe(
      RESOURCE_SELECTION_QUERY_PREFIX +
        `{"schemaVersion":1,"kind":"cloud_resource_selection","status":"canceled","requestTaskId":"${TASK}","contextId":"${CONTEXT}","inputId":"${id}","toolUseId":"tool-res","optionsEmpty":false}`,
    );
    expect(delivery).not.toHaveProperty("toolResult");
  });

  it("keeps non-ASCII values as UTF-8, as ensure_ascii=False does", () => {
    const delivery = answerMessage(pendingOf(resource), resolved(id, { value: "vpc-1", label: "本番 VPC" }), ctx);
    expect(textOf(delivery)).toContain('"label":"本番 VPC"');
  });
});
