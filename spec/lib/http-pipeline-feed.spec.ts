/**
 * The pipeline feed as a visualization reads it (docs/pipeline-feed.md):
 * step facts that reach a stock `@ag-ui/client` HttpAgent, step text that
 * closes with its step, through the real service and the demo kernel.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { enforceEvents } from "@ag-ui/client";
import { EventType, type AGUIEvent, type StepFinishedEvent, type StepStartedEvent } from "@ag-ui/core";
import { from, lastValueFrom, toArray, type Observable } from "rxjs";
import { stepFactsFrom } from "../../lib/model/step-facts.js";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, userMessage } from "../support/http-agent.js";
import { postRun, runInput, startHarness, type Harness } from "../support/service.js";

const pipelineProps = {
  iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir(), runMode: "pipeline", pipelineName: "demo" },
};

describe("the pipeline feed through a stock HttpAgent", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  it("hands a subscriber's onStepStartedEvent / onStepFinishedEvent the step's facts in metadata[\"iac-code\"].step", async () => {
    const agent = httpAgent(harness.service.url, { messages: [userMessage("pipeline")] });
    const seen: Array<StepStartedEvent | StepFinishedEvent> = [];
    agent.subscribe({
      onStepStartedEvent: ({ event }) => void seen.push(event),
      onStepFinishedEvent: ({ event }) => void seen.push(event),
    });
    const run = await runHttpAgent(agent, { forwardedProps: pipelineProps });
    expect(run.error).toBeUndefined();
    await expectValidRun(run.events);

    const facts = seen.map((event) => [event.type, event.stepName, stepFactsFrom(event)]);
    expect(facts).toContainEqual([
      EventType.STEP_STARTED,
      "plan",
      expect.objectContaining({ key: "step:plan", type: "agent", index: 0, total: 2, attempt: 1, stepRunId: "step-plan-1" }),
    ]);
    expect(facts).toContainEqual([
      EventType.STEP_FINISHED,
      "generate",
      expect.objectContaining({ outcome: "completed", durationMs: 685, startedAt: expect.any(String), finishedAt: expect.any(String) }),
    ]);
    expect(facts).toContainEqual([
      EventType.STEP_STARTED,
      "candidate:subp-generate-1:draft",
      expect.objectContaining({ parent: expect.objectContaining({ stepId: "generate", candidateId: "subp-generate-1" }) }),
    ]);
    // Every step event the agent applied carries them.
    for (const [, , stepFacts] of facts) expect(stepFacts).toMatchObject({ schemaVersion: 1 });
  });

  it("is metadata because the client strips a top-level property its schema does not name, and keeps metadata whole", async () => {
    const step = { schemaVersion: 1, key: "step:plan", stepId: "plan" };
    const sent = { type: EventType.STEP_STARTED, stepName: "plan", iacCodeStep: step, metadata: { "iac-code": { step } } };
    const received = await lastValueFrom(
      (from([sent as AGUIEvent]).pipe(enforceEvents() as never) as Observable<AGUIEvent>).pipe(toArray()),
    );
    expect(received).toEqual([{ type: EventType.STEP_STARTED, stepName: "plan", metadata: { "iac-code": { step } } }]);
  });

  it("closes each step's text messages before its STEP_FINISHED, through the real service", async () => {
    const input = runInput("pipeline", {}, pipelineProps.iacCode);
    const { events } = await postRun(harness.service.url, input);
    await expectValidRun(events);

    // Each pipeline message names the run ids of its step attempts (docs/pipeline-feed.md §2); each finish names its attempt.
    const finishes = events.flatMap((event, index) => {
      const stepRunId = event.type === EventType.STEP_FINISHED ? stepFactsFrom(event)?.stepRunId : undefined;
      return stepRunId === undefined ? [] : [{ index, stepRunId }];
    });
    const checked = events.flatMap((event, index) => {
      if (event.type !== EventType.TEXT_MESSAGE_END || !event.messageId.includes(":pipeline-message:")) return [];
      const coordinates = event.messageId.split(":");
      const finish = finishes.find(({ stepRunId }) => coordinates.includes(stepRunId))!;
      return [{ message: event.messageId, endsBeforeItsStep: index < finish.index }];
    });
    expect(checked.length).toBeGreaterThanOrEqual(3);
    expect(checked.filter(({ endsBeforeItsStep }) => !endsBeforeItsStep)).toEqual([]);
  });
});
