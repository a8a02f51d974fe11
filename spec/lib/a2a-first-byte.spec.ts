/**
 * A kernel that accepts a call and then says nothing (issue 24, item 6):
 * past `IAC_CODE_AGUI_KERNEL_FIRST_BYTE_TIMEOUT_S` the run ends with
 * `A2A_UNAVAILABLE` and a handoff is answered `UNKNOWN`, instead of both
 * waiting for the request timeout's hour; a stream that has started may go
 * on for longer than that limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { loadConfig, type Config } from "../../lib/config.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startHostileKernel, type HostileKernel } from "../support/hostile-kernel.js";
import { postRun, runInput, testConfig } from "../support/service.js";

const serviceConfig = (overrides: Partial<Config>): Config => ({ ...loadConfig([], {}), ...testConfig(overrides) });
const FIRST_BYTE_S = 1;

describe("a kernel that does not start answering", () => {
  let kernel: HostileKernel;
  let service: RunningService;
  beforeAll(async () => {
    kernel = await startHostileKernel();
    service = await startService(serviceConfig({ a2aUrl: kernel.url, kernelFirstByteTimeoutS: FIRST_BYTE_S }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("ends the run with A2A_UNAVAILABLE after the first-byte limit, not the request timeout", async () => {
    // The call is taken and never answered: no headers, no byte.
    kernel.script("silent", () => {});
    const result = await postRun(service.url, runInput("silent"));
    await expectValidRun(result.events);
    expect(result.events.at(-1)).toMatchObject({ type: EventType.RUN_ERROR, code: "A2A_UNAVAILABLE" });
  }, 20_000);

  it("lets a stream that has started go on past the first-byte limit", async () => {
    kernel.script("slow but answering", ({ startSse, res, opening, record, taskId, contextId }) => {
      startSse();
      res.write(opening());
      const text = { messageId: `${taskId}-m`, role: "ROLE_AGENT", parts: [{ text: "took its time" }] };
      setTimeout(
        () =>
          res.end(
            record({ statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_WORKING", message: text } } }) +
              record({ statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_COMPLETED" } } }),
          ),
        FIRST_BYTE_S * 1000 + 500,
      );
    });
    const result = await postRun(service.url, runInput("slow but answering"));
    await expectValidRun(result.events);
    expect(result.events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    expect(result.events.some((event) => (event as { delta?: string }).delta === "took its time")).toBe(true);
  }, 20_000);

  it("answers a handoff UNKNOWN after the first-byte limit when the kernel's route never answers", async () => {
    // Handoff requests carry no JSON-RPC method: they are told apart by their HTTP method.
    kernel.answer("POST", () => true);
    const response = await fetch(`${service.url}/iac-code/handoff/prepare`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ protocol: "agui", threadId: "t-1" }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "UNKNOWN", reason: "agui_handoff_upstream_unconfirmed" });
  }, 20_000);
});
