/**
 * The one way a hand-written operator in `operators/` subscribes to its
 * source, modelled on RxJS's own `operate({destination, next})` (RxJS 8) and
 * `createOperatorSubscriber` (RxJS 7, internal, not exported):
 *
 *   (source) => new Observable<R>((destination) => {
 *     source.subscribe(operate({ destination, next: (item) => destination.next(f(item)) }));
 *   })
 *
 * The returned `Subscriber` is chained to `destination`: when the
 * subscriber downstream leaves, or the stream ends, it unsubscribes from
 * the source, stops reading (a synchronous source that goes on emitting
 * reaches no handler), and then runs `finalize`. An operator thus needs no
 * `closed` checks and no teardown function of its own; what it must release
 * besides the source (a timer, an inner subscription) it hands to
 * `finalize`, or adds to the returned subscriber.
 *
 * Each handler is optional: without one, the item, error or end passes to
 * `destination` unchanged. An exception thrown by `next`, `error` or
 * `complete` errors `destination`, as in RxJS's operators. After `error` or
 * `complete` ran, the subscriber leaves the (ended) source, but
 * `destination` stays open unless the handler ended it: a handler may go on
 * with something else (`continueAfterDrop`) or finish later
 * (`awaitInOrder`).
 *
 * Handlers should call the `destination` they closed over, never
 * `this.destination` of a subscriber: RxJS sets that to null on
 * unsubscribe, and a downstream that leaves while a handler is still
 * emitting (take(1) in the middle of an item's array) must not turn the
 * rest of the handler into a TypeError.
 */
import { Observable, Subscriber, type OperatorFunction, type TeardownLogic } from "rxjs";

export interface OperateConfig<T, R> {
  /** The subscriber downstream; the returned subscriber lives no longer than it. */
  destination: Subscriber<R>;
  next?: (item: T) => void;
  error?: (error: unknown) => void;
  complete?: () => void;
  /** Runs once, after the source was left: on an end, an error, or the downstream leaving. */
  finalize?: () => void;
}

/**
 * The subscriber `operate` returns. A stage on the hot path may extend it
 * and override `_next` instead of passing a `next` handler: the override is
 * then the only call per item, where a handler costs one more (about 8 % of
 * a chain of ten trivial `emitEach` stages, measured). Such an override
 * must catch what it throws and send it to `downstream.error`, as `_next`
 * here does; the end and the teardown stay this class's.
 */
export class OperatorSubscriber<T, R> extends Subscriber<T> {
  /** The destination, kept: RxJS sets `this.destination` to null on unsubscribe (see above). */
  protected readonly downstream: Subscriber<R>;
  readonly #onNext: ((item: T) => void) | undefined;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #onComplete: (() => void) | undefined;
  readonly #finalize: (() => void) | undefined;

  constructor({ destination, next, error, complete, finalize }: OperateConfig<T, R>) {
    // Adds this subscriber to the destination's teardown: the chain the whole design rests on.
    super(destination);
    this.downstream = destination;
    this.#onNext = next;
    this.#onError = error;
    this.#onComplete = complete;
    this.#finalize = finalize;
  }

  protected override _next(item: T): void {
    const onNext = this.#onNext;
    if (onNext === undefined) {
      this.downstream.next(item as unknown as R);
      return;
    }
    try {
      onNext(item);
    } catch (thrown) {
      this.downstream.error(thrown);
    }
  }

  protected override _error(failure: unknown): void {
    try {
      if (this.#onError) this.#onError(failure);
      else this.downstream.error(failure);
    } catch (thrown) {
      this.downstream.error(thrown);
    } finally {
      this.unsubscribe();
    }
  }

  protected override _complete(): void {
    try {
      if (this.#onComplete) this.#onComplete();
      else this.downstream.complete();
    } catch (thrown) {
      this.downstream.error(thrown);
    } finally {
      this.unsubscribe();
    }
  }

  /**
   * RxJS keeps a subscription's finalizers in an array it makes empty and
   * pushes onto, which V8 then gives room for 16 more: about 150 bytes for
   * the one or two a subscriber holds (its source's teardown, the next
   * subscriber of the chain), on every subscriber of every open stream
   * (2.7 KiB of an idle run's heap). A short array is kept at its size.
   */
  override add(teardown: TeardownLogic): void {
    super.add(teardown);
    const held = this as unknown as { _finalizers: unknown[] | null };
    if (held._finalizers !== null && held._finalizers.length <= 4) held._finalizers = held._finalizers.slice();
  }

  override unsubscribe(): void {
    if (this.closed) return;
    // The source's teardown runs first (it is one of this subscription's finalizers), then the operator's own;
    // a source that ends inside its own `subscribe` hands its teardown over later, and it then runs on arrival.
    super.unsubscribe();
    this.#finalize?.();
  }
}

/**
 * A subscriber for `source.subscribe(…)` that feeds `destination` through
 * the given handlers and leaves the source when `destination` goes.
 */
export function operate<T, R = T>(config: OperateConfig<T, R>): Subscriber<T> {
  return new OperatorSubscriber(config);
}

/**
 * The operator whose subscriber `subscriberFor` makes for each
 * subscription, from the destination alone. The function is written in the
 * operator's factory, where `source` is not in scope: the subscriber's
 * handlers keep what they use, and not the source, which would keep every
 * stage upstream (their Observables and closures) for as long as the stream
 * is open. An operator that builds its handlers inside `(source) => …`
 * keeps all of that through them.
 */
export function operatorOf<T, R>(subscriberFor: (destination: Subscriber<R>) => Subscriber<T>): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((destination) => {
      source.subscribe(subscriberFor(destination));
    });
}
