/**
 * Waiting, with a bound, for a count of runs to reach nothing: the drain
 * waits so for its runs' clients to leave (`RunRegistry`), shutdown for the
 * turns that still write (`Runs.settled`). The owner keeps `checks` and
 * calls each one whenever what `holds` reads may have changed.
 */

/**
 * Resolves once `holds()` is true (looked at now, and at each call of the
 * check this adds to `checks`), after `ms`, or when the function handed to
 * `onEarlyEnd` is called, whichever comes first. The check leaves `checks`
 * when it resolves.
 */
export function waitUntil(
  holds: () => boolean,
  checks: Set<() => void>,
  ms: number,
  onEarlyEnd?: (endNow: () => void) => void,
): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      checks.delete(check);
      resolve();
    };
    const check = () => {
      if (holds()) done();
    };
    const timer = setTimeout(done, ms);
    checks.add(check);
    onEarlyEnd?.(done);
    check();
  });
}
