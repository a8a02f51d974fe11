/** A `ThreadRun` as a new turn is admitted (no task, no kernel session, nothing pending), over a store a spec gives. */
import { keepInput } from "../../../lib/interrupts/keep-input.js";
import { toInterrupt } from "../../../lib/interrupts/to-interrupt.js";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import type { ThreadLease, ThreadStore } from "../../../lib/state/thread-store.js";
import { ThreadRun } from "../../../lib/threads/thread-run.js";
import { threadState } from "../state/thread-state-fixture.js";

const lease: ThreadLease = { threadId: "t", token: 1, release: async () => {} };

const admittedState = (): ThreadState => {
  const state = threadState("t");
  return { ...state, iacCodeSessionId: null, execution: { ...state.execution, taskId: null, pending: {} } };
};

export function admittedThreadRun(store: ThreadStore): ThreadRun {
  return new ThreadRun(admittedState(), {
    store,
    lease,
    interruptTtlS: 0,
    now: Date.now,
    keepInput: (projection) => keepInput(projection),
    toInterrupt: (pending) => toInterrupt(pending, "en"),
  });
}
