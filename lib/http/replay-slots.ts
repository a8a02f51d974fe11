/**
 * How many sandbox replays go at once (`IAC_CODE_AGUI_SANDBOX_MAX_REPLAYS`).
 * A replay calls no kernel, so the run slots (`runs/run-slots.ts`) do not
 * count it, yet each holds its upload (up to 8 MiB), its parsed frames and
 * its stream: ten clients replaying at once cost a service about a GiB. Past
 * the cap a replay is refused with 429 `TOO_MANY_RUNS` and a Retry-After, as
 * a run past its cap is, before its body is read.
 */
import { AguiError } from "../errors.js";
import { TOO_MANY_RUNS_RETRY_AFTER_S } from "../runs/run-slots.js";

/** A person at the page replays one recording at a time; a few pages at once is a team, more is a flood. */
export const DEFAULT_SANDBOX_MAX_REPLAYS = 4;

export class ReplaySlots {
  #active = 0;

  constructor(private readonly max: number = DEFAULT_SANDBOX_MAX_REPLAYS) {}

  /** Replays going now. */
  get active(): number {
    return this.#active;
  }

  /** A slot, or `TOO_MANY_RUNS` (reason `sandboxReplays`); the function returned gives it back, once however often called. */
  take(): () => void {
    if (this.#active >= this.max) {
      throw new AguiError(
        "TOO_MANY_RUNS",
        { reason: "sandboxReplays", limit: this.max },
        { retryAfterS: TOO_MANY_RUNS_RETRY_AFTER_S, details: { limit: "sandboxReplays" } },
      );
    }
    this.#active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active--;
    };
  }
}
