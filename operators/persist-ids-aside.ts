/**
 * The ids a kernel signal brings (its task, its kernel session) written
 * down beside the stream rather than in its way (R-PER-4): the signal
 * passes at once, marked `storing`, and comes again unmarked once its write
 * has committed; only the unmarked one may be announced (`announceSession`).
 * What the kernel says meanwhile (text, tools) names nothing a client could
 * recover, so it goes on. The run's end waits for every write, so nothing
 * is told as finished before the ids are on disk; a failed write ends the
 * run where it failed, with STATE_PERSISTENCE_FAILED (or the error's own
 * code), and nothing after it is read.
 *
 *   t x y e  (t's write commits after y)  →  t' x y t e
 *   t x y e  (t's write fails after x)     →  t' x E|
 *
 * `persist` answers `undefined` when there is nothing to write (the id is
 * known already); it may throw at once for an id that must not be taken
 * (a task that changed), which ends the run before anything after the
 * signal is told.
 */
import type { MonoTypeOperatorFunction, Subscriber } from "rxjs";
import { toAguiError } from "../lib/errors.js";
import type { KernelSignal, SignalOf } from "../lib/model/kernel-signal.js";
import { operate, operatorOf } from "../lib/rx/operate.js";

type IdSignal = SignalOf<"task-bound"> | SignalOf<"session-bound">;
type Held = { signal: KernelSignal } | { end: "complete" } | { end: "error"; error: unknown };

const bringsIds = (signal: KernelSignal): signal is IdSignal => signal.kind === "task-bound" || signal.kind === "session-bound";

const failedWrite = (error: unknown): KernelSignal => ({
  kind: "run-end",
  error: toAguiError(error, "STATE_PERSISTENCE_FAILED"),
  kernelSettled: false,
});

export function persistIdsAside(persist: (signal: KernelSignal) => Promise<void> | undefined): MonoTypeOperatorFunction<KernelSignal> {
  return operatorOf((destination: Subscriber<KernelSignal>) => persistingIdsAside(destination, persist));
}

/**
 * Outside `persistIdsAside`'s `(source) => …`: the handlers live as long as
 * the run's stream, and keep only what they use, not the stages upstream.
 */
function persistingIdsAside(
  destination: Subscriber<KernelSignal>,
  persist: (signal: KernelSignal) => Promise<void> | undefined,
): Subscriber<KernelSignal> {
  /** Writes not yet committed; their signals come again, in order, as each commits. */
  let writing = 0;
  /** The commits in the order the writes were asked for. */
  let inTurn: Promise<void> = Promise.resolve();
  /** The run's end, and whatever came after it, while writes are under way. */
  const held: Held[] = [];
  let failed = false;

  const fail = (error: unknown) => {
    if (failed) return;
    failed = true;
    held.length = 0;
    destination.next(failedWrite(error));
    destination.complete();
  };

  const release = () => {
    while (writing === 0 && held.length > 0 && !destination.closed) {
      const next = held.shift()!;
      if ("signal" in next) destination.next(next.signal);
      else if (next.end === "complete") destination.complete();
      else destination.error(next.error);
    }
  };

  const writeAside = (signal: IdSignal, write: Promise<void>) => {
    // Its failure is told in turn, below; meanwhile it is not an unhandled rejection.
    write.catch(() => undefined);
    writing++;
    destination.next({ ...signal, storing: true });
    inTurn = inTurn.then(() =>
      write.then(
        () => {
          writing--;
          if (failed || destination.closed) return;
          destination.next(signal);
          release();
        },
        (error: unknown) => {
          if (!destination.closed) fail(error);
        },
      ),
    );
  };

  const mustHold = (signal?: KernelSignal) => held.length > 0 || (writing > 0 && (signal === undefined || signal.kind === "run-end"));

  return operate<KernelSignal, KernelSignal>({
    destination,
    next: (signal) => {
      if (failed) return;
      if (mustHold(signal)) return void held.push({ signal });
      if (!bringsIds(signal)) return destination.next(signal);
      let write: Promise<void> | undefined;
      try {
        write = persist(signal);
      } catch (error) {
        return fail(error);
      }
      if (write === undefined) destination.next(signal);
      else writeAside(signal, write);
    },
    error: (error: unknown) => {
      if (failed) return;
      if (mustHold()) held.push({ end: "error", error });
      else destination.error(error);
    },
    complete: () => {
      if (failed) return;
      if (mustHold()) held.push({ end: "complete" });
      else destination.complete();
    },
  });
}
