/**
 * End-to-end backpressure for one stream (a run, or an observer): the SSE
 * sink closes the gate while its client is behind, and the kernel streams
 * the stream reads wait at the gate, chunk by chunk (see `readRecords` in
 * `a2a/body-reader.ts`). While they wait, the kernel's response stops reading the
 * kernel's socket and TCP holds the kernel back, as if the client were
 * reading the kernel directly.
 *
 *   sink: unsent bytes > high-water mark → pause()   kernel reads wait
 *   sink: response 'drain'               → resume()  kernel reads go on
 *   run:  a write it waits on            → hold(write): kernel reads wait until it settles
 *
 * The second closer is the run itself: while it waits on a write (a task
 * id persisted before it is told), every event after it is held back in
 * the pipeline, and what the kernel sent meanwhile would pile up there —
 * a whole burst, behind one slow fsync — where no backlog limit sees it.
 */
import type { ReadGate } from "../a2a/body-reader.js";
import type { RunA2A } from "../a2a/client.js";

export class FlowGate implements ReadGate {
  /** Settles when the gate opens; undefined while it is open. */
  #opened: Promise<void> | undefined;
  #open: (() => void) | undefined;
  #clientBehind = false;
  #writesPending = 0;

  get isOpen(): boolean {
    return this.#opened === undefined;
  }

  /** The client is behind: reads that come to the gate wait until `resume()` (and until no write is held). */
  pause(): void {
    this.#clientBehind = true;
    this.#update();
  }

  resume(): void {
    this.#clientBehind = false;
    this.#update();
  }

  /** Keeps the gate closed until `write` settles; gives `write` back. */
  hold<T>(write: Promise<T>): Promise<T> {
    this.#writesPending++;
    this.#update();
    const release = () => {
      this.#writesPending--;
      this.#update();
    };
    write.then(release, release);
    return write;
  }

  /** `undefined` while open (the common case costs no promise), else what settles when it opens. */
  whenOpen(): Promise<void> | undefined {
    return this.#opened;
  }

  #update(): void {
    const closed = this.#clientBehind || this.#writesPending > 0;
    if (closed && this.#opened === undefined) {
      this.#opened = new Promise((resolve) => (this.#open = resolve));
    } else if (!closed && this.#opened !== undefined) {
      const open = this.#open!;
      this.#opened = undefined;
      this.#open = undefined;
      open();
    }
  }
}

/**
 * The kernel as one stream reads it: every kernel stream it opens (a new
 * turn's, a resume's, a re-attach's `SubscribeToTask`) is read through
 * `gate`; every other call is `a2a`'s own.
 */
export function readThrough(gate: ReadGate, a2a: RunA2A): RunA2A {
  return new GatedKernel(gate, a2a);
}

/**
 * One object whose methods are its class's, rather than an object of eight
 * closures for each stream (about half a KiB), since every open stream holds
 * its kernel client for as long as it lasts.
 */
class GatedKernel implements RunA2A {
  constructor(
    private readonly gate: ReadGate,
    private readonly a2a: RunA2A,
  ) {}

  sendStreamingMessage(params: Parameters<RunA2A["sendStreamingMessage"]>[0]) {
    return this.a2a.sendStreamingMessage(params, { gate: this.gate });
  }
  subscribeToTask(taskId: string) {
    return this.a2a.subscribeToTask(taskId, { gate: this.gate });
  }
  sendMessage(...args: Parameters<RunA2A["sendMessage"]>) {
    return this.a2a.sendMessage(...args);
  }
  getTask(...args: Parameters<RunA2A["getTask"]>) {
    return this.a2a.getTask(...args);
  }
  cancelTask(...args: Parameters<RunA2A["cancelTask"]>) {
    return this.a2a.cancelTask(...args);
  }
  getPipelineState(...args: Parameters<RunA2A["getPipelineState"]>) {
    return this.a2a.getPipelineState(...args);
  }
  listTasks(...args: Parameters<RunA2A["listTasks"]>) {
    return this.a2a.listTasks(...args);
  }
  ensureRestored(...args: Parameters<RunA2A["ensureRestored"]>) {
    return this.a2a.ensureRestored(...args);
  }
}
