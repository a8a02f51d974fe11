/**
 * The active trace context carried across `await`s and callbacks, for a
 * service that exports no traces: the OpenTelemetry API alone keeps no
 * context (its default manager forgets it at once), and the caller's trace
 * must still reach each kernel call. With traces on, the SDK brings its
 * own manager (see `start-tracing.ts`).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { ROOT_CONTEXT, type Context, type ContextManager } from "@opentelemetry/api";

export class AsyncLocalContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(context, () => fn.apply(thisArg, args));
  }

  /** A function bound runs in `context` wherever it is called; anything else is returned as it is. */
  bind<T>(context: Context, target: T): T {
    if (typeof target !== "function") return target;
    const run = (thisArg: unknown, args: unknown[]) =>
      this.#storage.run(context, () => (target as (...args: unknown[]) => unknown).apply(thisArg, args));
    return function (this: unknown, ...args: unknown[]) {
      return run(this, args);
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#storage.disable();
    return this;
  }
}
