/**
 * A run's failure stays in that run (issue 11): whichever stage of the
 * chain throws, at whichever item, that run ends with RUN_ERROR and its
 * task is cancelled, while the other runs of the same process stream on to
 * RUN_FINISHED and nothing reaches `uncaughtException`. The chain is the
 * real one in the real service, in front of a real kernel; the `instrument`
 * port makes one stage of one run fail.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import fc from "fast-check";
import { Observable, type OperatorFunction } from "rxjs";
import { expectValidRun, openSpansAtTheEnd } from "../support/agui.js";
import { postRun, runInput, startHarness, waitFor, type Harness } from "../support/service.js";

/** The stage to break in the next run built, and after how many of its items. */
let armed: { stage: string; afterItems: number } | undefined;
const stagesSeen: string[] = [];

/** An item that tells the run's end: the kernel's `run-end` signal, or the terminal AG-UI event. */
const endsTheRun = (item: unknown) =>
  typeof item === "object" &&
  item !== null &&
  (("kind" in item && item.kind === "run-end") ||
    ("type" in item && (item.type === EventType.RUN_FINISHED || item.type === EventType.RUN_ERROR)));

/**
 * `operator`, then a failure at its n-th item, or at the item that tells
 * the run's end if that comes first (a stage that joins a run late, as the
 * pipeline stages join a chat run at its end, may see no other), or at its
 * end if it has fewer.
 */
function failingAfter<A, B>(operator: OperatorFunction<A, B>, afterItems: number): OperatorFunction<A, B> {
  return (source) =>
    new Observable<B>((subscriber) => {
      let seen = 0;
      const fail = () => subscriber.error(new Error("stage failed on purpose"));
      return operator(source).subscribe({
        next: (item) => (seen++ === afterItems || endsTheRun(item) ? fail() : subscriber.next(item)),
        error: (error: unknown) => subscriber.error(error),
        complete: fail,
      });
    });
}

function instrument<A, B>(stage: string, operator: OperatorFunction<A, B>): OperatorFunction<A, B> {
  if (!stagesSeen.includes(stage)) stagesSeen.push(stage);
  if (armed?.stage !== stage) return operator;
  const { afterItems } = armed;
  armed = undefined;
  return failingAfter(operator, afterItems);
}

const ofType = (events: AGUIEvent[], type: EventType) => events.filter((event) => event.type === type);

describe("a stage that fails", () => {
  let harness: Harness;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  beforeAll(async () => {
    process.on("uncaughtException", onUncaught);
    harness = await startHarness({}, {}, { instrument });
    // One plain run shows the stages, in order, as the chain builds them.
    const { events } = await postRun(harness.service.url, runInput("reasoning-tools"));
    expect(events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
  });
  afterAll(async () => {
    await harness.close();
    process.off("uncaughtException", onUncaught);
  });

  it("the chain has the stages this spec breaks", () => {
    expect(stagesSeen).toEqual(expect.arrayContaining(["endRunOnTaskState", "projectText", "finishRun", "closeSpans", "mergeHeartbeat"]));
    expect(stagesSeen.length).toBeGreaterThan(20);
  });

  it("ends only its own run, with RUN_ERROR and its task cancelled, whichever stage and item", async () => {
    const cancels = () => harness.kernel.received.filter((call) => call.method === "CancelTask" || call.method === "ListTasks").length;
    // A failure from the stage that closes spans on comes after spans are closed: it cannot close what is open.
    const stagesAfterCloseSpans = stagesSeen.slice(stagesSeen.indexOf("closeSpans"));
    // Every stage in turn; for each, the first item (always) and random later ones, over fixtures of both modes.
    for (const stage of stagesSeen) {
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: 6 }), fc.constantFrom("reasoning-tools", "chat", "pipeline"), async (afterItems, fixture) => {
          const cancelsBefore = cancels();
          armed = { stage, afterItems };
          const iacCode = fixture === "pipeline" ? { runMode: "pipeline" } : {};
          const faulted = postRun(harness.service.url, runInput(fixture, {}, iacCode));
          // The faulted run's chain is built first: the others start once it is armed no more.
          await waitFor(() => armed === undefined);
          const others = await Promise.all([1, 2, 3].map(() => postRun(harness.service.url, runInput("reasoning-tools"))));
          const { events } = await faulted;

          const late = stagesAfterCloseSpans.includes(stage);
          if (!late) {
            await expectValidRun(events).catch((error: unknown) => {
              throw new Error(`stage ${stage}, item ${afterItems}, ${fixture}: ${String(error)}`);
            });
          }
          // Before the end is decided, a failure reads as the kernel's (A2A_UNAVAILABLE); after, as the service's own.
          expect(events.at(-1)).toMatchObject({
            type: EventType.RUN_ERROR,
            code: expect.stringMatching(/^(INTERNAL_ERROR|A2A_UNAVAILABLE)$/),
          });
          expect(ofType(events, EventType.RUN_ERROR)).toHaveLength(1);
          expect(ofType(events, EventType.RUN_FINISHED)).toHaveLength(0);
          if (late) {
            // Only a bug in the service's own last stages fails here; the run still starts and ends as a run.
            expect(events[0]?.type).toBe(EventType.RUN_STARTED);
          } else {
            expect(openSpansAtTheEnd(events)).toEqual([]);
          }
          await waitFor(() => cancels() > cancelsBefore);
          for (const other of others) {
            await expectValidRun(other.events);
            expect(other.events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
          }
        }),
        { numRuns: 4, examples: [[0, "reasoning-tools"]] },
      );
    }
    expect(uncaught).toEqual([]);
  }, 120_000);
});
