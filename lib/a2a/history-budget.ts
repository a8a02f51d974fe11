/**
 * What reading conversations back from the kernel may cost, summed: each
 * reconnect's snapshot is capped, so is what all of them hold at once in
 * this process, and so is the number of tasks being read at once. Every
 * single kernel answer is capped already (`a2a/limits.ts`); without these,
 * a long conversation read by a dozen reloading pages at once would hold
 * hundreds of megabytes each.
 *
 * A snapshot charges what it keeps (the text, tool calls and thinking of
 * each task it shows, in UTF-16 units) as it reads, newest task first, and
 * gives it all back when its stream ends. A task that does not fit, in the
 * request's budget or in what the process has left, is left out with every
 * older one, and the snapshot says so.
 */

/** Per reconnect: well under the 10 MiB one SSE record `@ag-ui/client` reads. */
export const DEFAULT_HISTORY_BUDGET_BYTES = 4 * 1024 * 1024;
/** Every snapshot held at once in this process. */
export const DEFAULT_HISTORY_PROCESS_BUDGET_BYTES = 64 * 1024 * 1024;
/** `GetTask` calls in flight at once for conversations, in the whole process (each answer up to the kernel response cap). */
export const HISTORY_CONCURRENT_READS = 8;

/** Why a snapshot stopped before the oldest task. */
export type HistoryCut = "request" | "process";

export interface HistoryBudgetOptions {
  requestBytes: number;
  processBytes: number;
  concurrentReads?: number;
}

/** One snapshot's share: what it charged, given back at once by `release`. */
export interface HistoryCharge {
  /** Charges `units`; false (and nothing charged) when it does not fit, with the reason. */
  take(units: number): true | HistoryCut;
  /** Gives back everything charged; later charges are refused. */
  release(): void;
  readonly requestBytes: number;
}

export class HistoryReads {
  readonly #requestBytes: number;
  readonly #processBytes: number;
  readonly #concurrentReads: number;
  #held = 0;
  #reading = 0;
  readonly #waiting: Array<() => void> = [];

  constructor({ requestBytes, processBytes, concurrentReads = HISTORY_CONCURRENT_READS }: HistoryBudgetOptions) {
    this.#requestBytes = requestBytes;
    this.#processBytes = processBytes;
    this.#concurrentReads = concurrentReads;
  }

  /** What every snapshot holds now, in UTF-16 units (for tests and metrics). */
  get held(): number {
    return this.#held;
  }

  charge(): HistoryCharge {
    let mine = 0;
    let released = false;
    const requestBytes = this.#requestBytes;
    return {
      requestBytes,
      take: (units) => {
        if (released || mine + units > requestBytes) return "request";
        if (this.#held + units > this.#processBytes) return "process";
        mine += units;
        this.#held += units;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#held -= mine;
        mine = 0;
      },
    };
  }

  /** `read`, once fewer than the limit of reads are in flight. */
  async read<T>(read: () => Promise<T>): Promise<T> {
    while (this.#reading >= this.#concurrentReads) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#reading++;
    try {
      return await read();
    } finally {
      this.#reading--;
      this.#waiting.shift()?.();
    }
  }
}
