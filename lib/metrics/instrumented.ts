/**
 * The kernel client and the thread store as the service uses them, with
 * their latencies on `/metrics` and their spans in the traces
 * (`tracing/boundaries.ts`): whichever store is configured (file or Redis),
 * and whichever kernel.
 */
import type { ThreadStore } from "../state/thread-store.js";
import type { ServiceMetrics } from "./service-metrics.js";
import { timedMembers } from "./timed-members.js";
import { tracedKernel, tracedStore } from "../tracing/boundaries.js";

/** Every call to the kernel, by method (`kernel_call_duration_seconds`). */
export function instrumentedKernel<T extends object>(kernel: T, metrics: ServiceMetrics): T {
  return timedMembers(tracedKernel(kernel), (method, outcome, seconds) => metrics.kernelCalls.observe({ method, outcome }, seconds));
}

/** Every store operation (`state_store_duration_seconds`), and each lease refused (`lease_conflicts_total`). */
export function instrumentedStore<T extends ThreadStore>(store: T, metrics: ServiceMetrics): T {
  return timedMembers(tracedStore(store), (operation, outcome, seconds, answer) => {
    metrics.storeOperations.observe({ operation, outcome }, seconds);
    if (operation === "tryAcquire" && outcome === "ok" && answer === undefined) metrics.leaseConflicts.inc();
  });
}
