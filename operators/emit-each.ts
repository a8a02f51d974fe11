/**
 * `mergeMap` for a function that returns a plain array: each item becomes
 * the items of its array, in order, synchronously; or one item, returned as
 * it is, not in an array (the items this stage makes are never arrays). A
 * projector passes most items unchanged, and an array of one per item and
 * per stage was most of what the chain allocated. The projectors map every
 * kernel signal this way, and `mergeMap` pays for inner-subscription
 * machinery on each item (the operator chain's main cost in `npm run
 * bench`); this is a loop. An exception in `project` errors the stream, as
 * it would in `mergeMap`.
 *
 * The stage subscribes to its source with one `OperatorSubscriber` (see
 * `lib/rx/operate.ts`) that overrides `_next` with the loop itself, rather
 * than passing `operate` a `next` handler: on this path every call counts,
 * and the handler would be one more per item and per stage. The end, the
 * errors and the teardown are the helper's. A plain observer object would
 * cost more still: RxJS wraps it per subscription in a SafeSubscriber, a
 * ConsumerObserver and three bound functions, and passes every item
 * through them.
 *
 * Consecutive stages share that subscriber: `emitEach` piped onto another
 * `emitEach` stage subscribes to what the first one reads, and runs both
 * projections in turn on each item (about 1,100 stage hops a run of the
 * chain bench's fixture, some 250 of them between such stages). Each
 * stage is still its own operator, with its own projection and state.
 *
 *   a b c  (a → [x, y], b → [], c → z)  →  (xy) - z
 */
import { Observable, type OperatorFunction, type Subscriber } from "rxjs";
import { OperatorSubscriber } from "../lib/rx/operate.js";

/** What a stage makes of one item: its items, in order, or one item as it is. */
export type Projection<T, R> = (item: T, index: number) => R | readonly R[];

type AnyProjection = Projection<unknown, unknown>;

/** The projections of the `emitEach` stages an Observable stands for, one factory each, in order, and what they read. */
interface Stages {
  readonly upstream: Observable<unknown>;
  readonly factories: ReadonlyArray<() => AnyProjection>;
}

const STAGES = Symbol("emitEach stages");

type WithStages<R> = Observable<R> & { [STAGES]?: Stages };

/**
 * Runs each item through the stages' projections, the items of one as the
 * items of the next, then to `downstream`: one subscriber, one `_next`, for
 * a run of consecutive stages, where a subscriber per stage made each item
 * pay RxJS's `next` of every stage.
 */
class EmitEachSubscriber<T, R> extends OperatorSubscriber<T, R> {
  readonly #projections: AnyProjection[];
  readonly #indexes: number[];

  constructor(destination: Subscriber<R>, projections: AnyProjection[]) {
    super({ destination });
    this.#projections = projections;
    this.#indexes = projections.map(() => 0);
  }

  protected override _next(item: T): void {
    this.#push(0, item);
  }

  /**
   * An item through the stages from `stage` on: a stage that makes one item hands it to the next in this
   * loop, without a call of its own; only an array's items recurse, one call each.
   */
  #push(stage: number, item: unknown): void {
    const projections = this.#projections;
    const indexes = this.#indexes;
    let out: unknown = item;
    for (; stage < projections.length; stage++) {
      try {
        out = projections[stage]!(out, indexes[stage]!++);
      } catch (error) {
        this.downstream.error(error);
        return;
      }
      if (Array.isArray(out)) {
        // A downstream that left in the middle of one item's array (take(1), or a later stage's error) is sent
        // nothing more, as a stage's own subscriber would be closed by then. An indexed loop: no iterator per item.
        const items = out as readonly unknown[];
        for (let i = 0; i < items.length && !this.closed; i++) this.#push(stage + 1, items[i]);
        return;
      }
    }
    this.downstream.next(out as R);
  }
}

/** The stages after `upstream`: subscribed, each factory makes its stage's projection for that subscription. */
function stagesAfter<R>(upstream: Observable<unknown>, factories: ReadonlyArray<() => AnyProjection>): Observable<R> {
  const stages: WithStages<R> = new Observable<R>((destination) => {
    upstream.subscribe(
      new EmitEachSubscriber(
        destination,
        factories.map((make) => make()),
      ),
    );
  });
  stages[STAGES] = { upstream, factories };
  return stages;
}

/**
 * `emitEach` for a stage that keeps state: `makeProjection` runs once per
 * subscription, so each run has its own (what `defer` around the stage did).
 * Piped right after another `emitEach` stage, the two run in one
 * subscriber; each keeps its own projection, index and state.
 */
export function emitEachPer<T, R>(makeProjection: () => Projection<T, R>): OperatorFunction<T, R> {
  const factory = makeProjection as () => AnyProjection;
  return (source) => {
    const before = (source as WithStages<T>)[STAGES];
    return before ? stagesAfter<R>(before.upstream, [...before.factories, factory]) : stagesAfter<R>(source, [factory]);
  };
}

export function emitEach<T, R>(project: Projection<T, R>): OperatorFunction<T, R> {
  return emitEachPer(() => project);
}
