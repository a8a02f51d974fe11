/**
 * The interrupt scenarios of the embedded demo kernel, end to end, as the
 * README tells a new user to try them: the recorded fixtures, no scripts.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type Interrupt } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, startHarness, uniqueId, type Harness } from "../support/service.js";

describe("the demo kernel's interrupt fixtures through the service", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  async function pauseAndAnswer(fixture: string, answer: (interrupt: Interrupt) => unknown) {
    const first = runInput(fixture);
    const paused = await postRun(harness.service.url, first);
    await expectValidRun(paused.events);
    const outcome = (paused.events.at(-1) as { outcome: { type: string; interrupts: Interrupt[] } }).outcome;
    expect(outcome.type).toBe("interrupt");
    const interrupt = outcome.interrupts[0]!;
    const resumed = await postRun(harness.service.url, {
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: answer(interrupt) }],
    });
    await expectValidRun(resumed.events);
    const text = resumed.events.flatMap((event) => (event.type === EventType.TEXT_MESSAGE_CONTENT ? [event.delta] : [])).join("");
    return { interrupt, events: resumed.events, text, sent: harness.kernel.received.at(-1)?.params };
  }

  it("permission: allow_once runs the tool and finishes", async () => {
    const { interrupt, events } = await pauseAndAnswer("permission", () => ({ decision: "allow_once" }));
    expect(interrupt.reason).toBe("tool_call");
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(events.some((event) => event.type === EventType.TOOL_CALL_RESULT)).toBe(true);
  });

  it("permission: deny fails the tool and still finishes the run", async () => {
    const { events } = await pauseAndAnswer("permission", () => ({ decision: "deny" }));
    const result = events.find((event) => event.type === EventType.TOOL_CALL_RESULT) as unknown as {
      metadata: { "iac-code": { status: string } };
    };
    expect(result.metadata["iac-code"].status).toBe("failed");
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
  });

  it("question: the chosen option reaches the kernel as its label", async () => {
    const { text, sent } = await pauseAndAnswer("question", () => ({ selectedId: "cn-shanghai" }));
    expect(JSON.stringify(sent)).toContain('"text":"Shanghai"');
    expect(text).toMatch(/Shanghai/);
  });

  it("deploy-confirm: the answer reaches the kernel as Python json.dumps text", async () => {
    const { sent, events } = await pauseAndAnswer("deploy-confirm", () => ({ selectedId: "confirm" }));
    expect(JSON.stringify(sent)).toContain(JSON.stringify('{"action": "confirm", "parameter_overrides": {}}'));
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });
});
