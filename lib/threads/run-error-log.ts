/**
 * Every RUN_ERROR a stream sends (a run's or an observer's), logged once,
 * as it leaves for the client: at `warn` with its code, at `error` for
 * INTERNAL_ERROR (a bug). The error behind it — a kernel failure, a
 * protocol error, a state that could not be written — goes with it, for its
 * type, stack and causes: the run's ports note each error that can end the
 * run, and the record takes the last one with the event's code. The event's
 * message is not logged: it is the client's, and may quote the kernel.
 */
import { EventType } from "@ag-ui/core";
import type { MonoTypeOperatorFunction } from "rxjs";
import { AguiError, toAguiError } from "../errors.js";
import { levelForCode, type Logger } from "../log.js";
import type { SignalOf } from "../model/kernel-signal.js";
import type { SseItem } from "../run-pipeline.js";
import { HEARTBEAT } from "../../operators/merge-heartbeat.js";
import { tapEach } from "../rx/tap-each.js";

type RunEnd = SignalOf<"run-end">;

export class RunErrorLog {
  #behind: AguiError | undefined;

  /**
   * @param log the stream's logger (its ids bound)
   * @param what how the record names the stream ("run", "observer")
   * @param context fields known only as the stream goes (the task id)
   */
  constructor(
    private readonly log: Logger,
    private readonly what: string,
    private readonly context: () => Record<string, unknown> = () => ({}),
  ) {}

  /** For `settleAndPersistEnd`: the end as settled, its error noted. */
  noteEnd = (settled: RunEnd | Promise<RunEnd>): RunEnd | Promise<RunEnd> => {
    if (!(settled instanceof Promise)) return this.#noted(settled);
    return settled.then((end) => this.#noted(end));
  };

  /** For `onFailure`: a failure no stage turned into a run end, which the run ends with. */
  noteFailure = (error: unknown): void => this.#note(toAguiError(error));

  /** Logs the item if it is a RUN_ERROR; a stream passes each item here once, on its way out. */
  logIfRunError = (item: SseItem): void => {
    if (item === HEARTBEAT || item.type !== EventType.RUN_ERROR) return;
    const code = typeof item.code === "string" ? item.code : "INTERNAL_ERROR";
    const behind = this.#behind?.code === code ? this.#behind : undefined;
    this.log[levelForCode(code)](
      { code, ...this.context(), ...(behind ? { err: behind } : {}) },
      `${this.what} ended with RUN_ERROR ${code}`,
    );
  };

  /** Logs each RUN_ERROR as it passes, once (a stream without a last stage of its own to do it in). */
  logEach(): MonoTypeOperatorFunction<SseItem> {
    return tapEach(this.logIfRunError);
  }

  #note(error: AguiError | undefined): void {
    if (error) this.#behind = error;
  }

  #noted(end: RunEnd): RunEnd {
    this.#note(end.error);
    return end;
  }
}
