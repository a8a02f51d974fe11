/**
 * The properties of the run pipeline, shared by `npm test` (a few hundred
 * runs each) and `npm run soak` (many more).
 */
import type { AGUIEvent } from "@ag-ui/core";
import fc from "fast-check";
import { concat, from, lastValueFrom, Observable, throwError, toArray } from "rxjs";
import type { JsonRpcResult } from "../../lib/a2a/client.js";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import { expectValidRun } from "./agui.js";
import { chainOptions, endingFrame, kernelStream, TASK_ID, CONTEXT_ID, type Ending } from "./kernel-arbitraries.js";
import { framesToSignals, projectionChain, type ChainOptions } from "../../lib/testing/projection-chain.js";

/** The frames as the A2A client hands them over: in order, then the end or the failure. */
export function kernelFrames(frames: readonly JsonRpcResult[], ending: Ending, leadingTask: boolean): Observable<JsonRpcResult> {
  const task: JsonRpcResult[] = leadingTask
    ? [{ task: { id: TASK_ID, contextId: CONTEXT_ID, status: { state: "TASK_STATE_SUBMITTED" } } }]
    : [];
  const last = endingFrame(ending);
  const body = from([...task, ...frames, ...(last ? [last] : [])]);
  return ending.kind === "fails"
    ? concat(
        body,
        throwError(() => ending.error),
      )
    : body;
}

/** Runs one kernel stream through the chain and returns the AG-UI events (heartbeats left out). */
export async function project(frames$: Observable<JsonRpcResult>, options: ChainOptions): Promise<AGUIEvent[]> {
  const items = await lastValueFrom(frames$.pipe(framesToSignals(), projectionChain(options), toArray()));
  return items.filter((item): item is AGUIEvent => item !== HEARTBEAT);
}

export const anyKernelStreamIsAValidRun = (numRuns: number, seed?: number) =>
  fc.assert(
    fc.asyncProperty(kernelStream, chainOptions, async ({ frames, ending, leadingTask }, options) => {
      const events = await project(kernelFrames(frames, ending, leadingTask), options);
      await expectValidRun(events);
      expectOneStartOneEnd(events);
    }),
    { numRuns, ...(seed === undefined ? {} : { seed }) },
  );

export function expectOneStartOneEnd(events: readonly AGUIEvent[]): void {
  const types = events.map((event) => event.type);
  if (types[0] !== "RUN_STARTED") throw new Error(`the run does not start with RUN_STARTED: ${types.join(" ")}`);
  const terminals = types.filter((type) => type === "RUN_FINISHED" || type === "RUN_ERROR");
  if (terminals.length !== 1) throw new Error(`expected exactly one terminal event, got ${terminals.length}: ${types.join(" ")}`);
}
