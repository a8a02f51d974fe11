/**
 * A decorator's Proxy: stands wherever `target` does, and hands each of
 * its methods, on first use and once, to `wrap` (with a call bound to the
 * target); every other member passes as it is. The metrics' timing
 * (`metrics/timed-members.ts`) and the traces' spans (`tracing/spans.ts`)
 * decorate the kernel client and the thread store so.
 */
export type MethodCall = (...args: unknown[]) => unknown;

export function wrapMethods<T extends object>(target: T, wrap: (name: string, call: MethodCall) => MethodCall): T {
  const wrapped = new Map<string, MethodCall>();
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== "function" || typeof property !== "string" || property === "constructor") return value;
      let decorated = wrapped.get(property);
      if (decorated === undefined) {
        const method = value as MethodCall;
        decorated = wrap(property, (...args) => method.apply(object, args));
        wrapped.set(property, decorated);
      }
      return decorated;
    },
  });
}
