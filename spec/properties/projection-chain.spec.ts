/**
 * Whatever the kernel sends, the client gets a well-formed AG-UI run: every
 * event valid against the official schemas, the sequence accepted by
 * @ag-ui/client's verifier, RUN_STARTED first and exactly one RUN_FINISHED
 * or RUN_ERROR last. fast-check generates the kernel streams (see
 * `spec/support/kernel-arbitraries.ts`); `npm run soak` runs many more.
 */
import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { AguiError } from "../../lib/errors.js";
import { anyKernelStreamIsAValidRun, expectOneStartOneEnd, kernelFrames, project } from "../support/chain-properties.js";
import { expectValidRun } from "../support/agui.js";
import { frame, TASK_ID, CONTEXT_ID } from "../support/kernel-arbitraries.js";
import type { JsonRpcResult } from "../../lib/a2a/client.js";

/** A frame that neither settles the task nor asks for input: the run is still going after it. */
function stillWorking(frame: JsonRpcResult): JsonRpcResult {
  const copy = structuredClone(frame) as Record<string, Record<string, unknown> | undefined>;
  if ("message" in copy) return { statusUpdate: { taskId: TASK_ID, contextId: CONTEXT_ID, status: { state: "TASK_STATE_WORKING" } } };
  const body = copy.statusUpdate ?? copy.task;
  if (body) {
    body.status = { ...(body.status as object), state: "TASK_STATE_WORKING" };
    const iacCode = (body.metadata as { iac_code?: Record<string, unknown> } | undefined)?.iac_code;
    if (iacCode) {
      delete iacCode.input;
      delete iacCode.pendingPermissions;
    }
  }
  return copy as JsonRpcResult;
}

describe("the operator chain of a run", () => {
  it("turns any kernel stream into a valid AG-UI run that ends with one terminal event", async () => {
    await anyKernelStreamIsAValidRun(200);
  }, 60_000);

  it("ends in RUN_ERROR when the kernel fails at any point, with every span closed", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { maxLength: 20 }), async (frames) => {
        const events = await project(kernelFrames(frames, { kind: "fails", error: new AguiError("A2A_UNAVAILABLE") }, true), {});
        await expectValidRun(events);
        expectOneStartOneEnd(events);
      }),
      { numRuns: 100 },
    );
  }, 60_000);

  it("pauses at an interrupt sent at any point: RUN_FINISHED with that interrupt, and nothing of what followed", async () => {
    const permission = {
      required: true,
      inputId: "input-x",
      kind: "permission",
      toolUseId: "tool-x",
      toolName: "ros_deploy_stack",
      title: "Deploy?",
    };
    const parked = {
      statusUpdate: {
        taskId: TASK_ID,
        contextId: CONTEXT_ID,
        status: { state: "TASK_STATE_INPUT_REQUIRED" },
        metadata: { iac_code: { input: permission } },
      },
    };
    await fc.assert(
      fc.asyncProperty(fc.array(frame.map(stillWorking), { maxLength: 12 }), fc.array(frame, { maxLength: 5 }), async (before, after) => {
        const events = await project(kernelFrames([...before, parked, ...after], { kind: "stops" }, true), {});
        await expectValidRun(events);
        expectOneStartOneEnd(events);
        expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "interrupt", interrupts: [{ id: "input-x" }] } });
        const withoutAfter = await project(kernelFrames([...before, parked], { kind: "stops" }, true), {});
        expect(events.map((event) => event.type)).toEqual(withoutAfter.map((event) => event.type));
      }),
      { numRuns: 100 },
    );
  }, 60_000);
});
