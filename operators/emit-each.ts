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
 * `engageFrom` of stages made this way (`emitEach`, `pipeStages`) joins
 * the run as a gate: its stages are skipped, and not made, until an item
 * engages them (a subscriber per gate and per run of stages after it cost
 * the chain bench's run about 2–3 %, by turns).
 *
 *   a b c  (a → [x, y], b → [], c → z)  →  (xy) - z
 */
import { Observable, type OperatorFunction, type Subscriber } from "rxjs";
import { OperatorSubscriber } from "../lib/rx/operate.js";

/** What a stage makes of one item: its items, in order, or one item as it is. */
export type Projection<T, R> = (item: T, index: number) => R | readonly R[];

type AnyProjection = Projection<unknown, unknown>;

/**
 * A stage's place in a run of stages: the factory of its projection, or a
 * gate (`engageFrom`) that keeps the `span` stages after it out of the way
 * until an item `engages` them: until then items pass around them, and
 * their projections are not even made.
 */
type Entry = (() => AnyProjection) | Gate;

interface Gate {
  readonly engages: (item: unknown) => boolean;
  readonly span: number;
}

/** The `emitEach` stages an Observable stands for, in order, and what they read. */
interface Stages {
  readonly upstream: Observable<unknown>;
  readonly entries: readonly Entry[];
}

const STAGES = Symbol("emitEach stages");

type WithStages<R> = Observable<R> & { [STAGES]?: Stages };

const isGate = (entry: Entry): entry is Gate => typeof entry !== "function";

/**
 * Runs each item through the stages' projections, the items of one as the
 * items of the next, then to `downstream`: one subscriber, one `_next`, for
 * a run of consecutive stages, where a subscriber per stage made each item
 * pay RxJS's `next` of every stage.
 */
class EmitEachSubscriber<T, R> extends OperatorSubscriber<T, R> {
  readonly #entries: readonly Entry[];
  /** Each stage's projection once made: at subscription, or for a gated stage when its gate engages. */
  readonly #projections: (AnyProjection | undefined)[];
  readonly #indexes: number[];

  constructor(destination: Subscriber<R>, entries: readonly Entry[]) {
    super({ destination });
    this.#entries = entries;
    this.#projections = new Array<AnyProjection | undefined>(entries.length);
    this.#indexes = entries.map(() => 0);
    this.#make(0, entries.length);
  }

  /** The projections of the stages in [from, to), skipping what gates still hold back. */
  #make(from: number, to: number): void {
    for (let stage = from; stage < to; stage++) {
      const entry = this.#entries[stage]!;
      if (isGate(entry)) stage += entry.span;
      else this.#projections[stage] = entry();
    }
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
      const projection = projections[stage];
      try {
        if (projection === undefined) {
          // A gate: open once an item engages it (its stages made then), else the item goes around them.
          const gate = this.#entries[stage] as Gate;
          if (indexes[stage] === 0) {
            if (!gate.engages(out)) {
              stage += gate.span;
              continue;
            }
            indexes[stage] = 1;
            this.#make(stage + 1, stage + 1 + gate.span);
          }
          continue;
        }
        out = projection(out, indexes[stage]!++);
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
function stagesAfter<R>(upstream: Observable<unknown>, entries: readonly Entry[]): Observable<R> {
  const stages: WithStages<R> = new Observable<R>((destination) => {
    upstream.subscribe(new EmitEachSubscriber(destination, entries));
  });
  stages[STAGES] = { upstream, entries };
  return stages;
}

/** `source`'s stages with `added` after them: one run of stages when `source` is one, else a run that reads `source`. */
function withStages<R>(source: Observable<unknown>, added: readonly Entry[]): Observable<R> {
  const before = (source as WithStages<unknown>)[STAGES];
  return before ? stagesAfter<R>(before.upstream, before.entries.concat(added)) : stagesAfter<R>(source, added);
}

const ENTRIES = Symbol("emitEach entries");

/** An operator that is `emitEach` stages alone, and says which (so `engageFrom` can take it in without applying it). */
type StagesOperator<T, R> = OperatorFunction<T, R> & { readonly [ENTRIES]?: readonly Entry[] };

function stagesOperator<T, R>(entries: readonly Entry[]): OperatorFunction<T, R> {
  const operator: { (source: Observable<T>): Observable<R>; [ENTRIES]?: readonly Entry[] } = (source) => withStages<R>(source, entries);
  // Set, not `Object.assign` of a literal with a computed key: that took half of building a run's chain.
  operator[ENTRIES] = entries;
  return operator;
}

/**
 * `pipe` for `emitEach` stages: piped alone, they make an operator that is
 * stages too, which `engageFrom` can take in as a gate; any other operator
 * among them makes it RxJS's `pipe` (an instrumented stage, say).
 */
export function pipeStages<A, B, C>(ab: OperatorFunction<A, B>, bc: OperatorFunction<B, C>): OperatorFunction<A, C>;
export function pipeStages<A, B, C, D>(
  ab: OperatorFunction<A, B>,
  bc: OperatorFunction<B, C>,
  cd: OperatorFunction<C, D>,
): OperatorFunction<A, D>;
export function pipeStages<A, B, C, D, E>(
  ab: OperatorFunction<A, B>,
  bc: OperatorFunction<B, C>,
  cd: OperatorFunction<C, D>,
  de: OperatorFunction<D, E>,
): OperatorFunction<A, E>;
export function pipeStages(...operators: Array<StagesOperator<unknown, unknown>>): OperatorFunction<unknown, unknown> {
  // A loop, not map, every and flat: this runs as each run's chain is built.
  let entries: readonly Entry[] = [];
  for (const operator of operators) {
    const own = operator[ENTRIES];
    if (own === undefined) return (source) => operators.reduce((piped: Observable<unknown>, next) => next(piped), source);
    entries = entries.concat(own);
  }
  return stagesOperator(entries);
}

/**
 * `engageFrom(engages, operator)` for an `operator` made of `emitEach`
 * stages alone (`emitEach`, `pipeStages`), as a gate in the run of stages
 * it sits in: the same items pass around it or through it, in the same
 * subscriber as the stages before and after it. `undefined` for any other
 * operator.
 */
export function gatedStages<T>(engages: (item: T) => boolean, operator: OperatorFunction<T, T>): OperatorFunction<T, T> | undefined {
  const inner = (operator as StagesOperator<T, T>)[ENTRIES];
  if (inner === undefined) return undefined;
  const gate: Gate = { engages: engages as (item: unknown) => boolean, span: inner.length };
  return stagesOperator([gate, ...inner]);
}

/**
 * `emitEach` for a stage that keeps state: `makeProjection` runs once per
 * subscription, so each run has its own (what `defer` around the stage did).
 * Piped right after another `emitEach` stage, the two run in one
 * subscriber; each keeps its own projection, index and state.
 */
export function emitEachPer<T, R>(makeProjection: () => Projection<T, R>): OperatorFunction<T, R> {
  return stagesOperator([makeProjection as () => AnyProjection]);
}

export function emitEach<T, R>(project: Projection<T, R>): OperatorFunction<T, R> {
  return emitEachPer(() => project);
}
