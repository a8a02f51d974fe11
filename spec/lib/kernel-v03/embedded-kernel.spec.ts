/**
 * `npm start` with no kernel URL or command runs its own demo kernel; with
 * `IAC_CODE_AGUI_A2A_DIALECT=0.3` that is the stock A2A 0.3 agent, and a
 * chat runs through the service in front of it.
 */
import { afterEach, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { startService, type RunningService } from "../../../lib/server.js";
import { expectValidRun } from "../../support/agui.js";
import { postRun, runInput, testConfig } from "../../support/service.js";

const textOf = (events: readonly AGUIEvent[]) =>
  events.flatMap((event) => (event.type === EventType.TEXT_MESSAGE_CONTENT ? [event.delta] : [])).join("");

describe("the embedded demo kernel", () => {
  const services: RunningService[] = [];
  afterEach(async () => {
    await Promise.all(services.splice(0).map((service) => service.close()));
  });

  it("is the A2A 0.3 agent when the dialect is set to 0.3, and a chat runs through it", async () => {
    const service = await startService(testConfig({ a2aDialect: "0.3" }));
    services.push(service);
    expect(service.embeddedKernel?.url).toBe(service.kernelUrl);
    const card = (await (await fetch(new URL(".well-known/agent-card.json", service.kernelUrl))).json()) as Record<string, unknown>;
    expect(card.protocolVersion).toBe("0.3.0");

    const run = await postRun(service.url, runInput("plain-chat"));
    expect(run.status).toBe(200);
    await expectValidRun(run.events);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(textOf(run.events)).toContain("answering through the AG-UI service.");
    expect(service.embeddedKernel?.received.map((call) => call.method)).toContain("message/stream");
  });

  it("stays the A2A 1.0 replay kernel otherwise", async () => {
    const service = await startService(testConfig());
    services.push(service);
    const card = (await (await fetch(new URL(".well-known/agent-card.json", service.kernelUrl))).json()) as Record<string, unknown>;
    expect(card.protocolVersion).toBeUndefined();
    expect(card.supportedInterfaces).toEqual([expect.objectContaining({ protocolVersion: "1.0" })]);
  });
});
