/**
 * A cold stream set going before anyone reads it: a new turn's kernel
 * request goes out as soon as the run is admitted, while its chain is still
 * to be built and subscribed (about a millisecond of the way to the first
 * event), and what the kernel answers meanwhile waits here.
 *
 *   readAhead(source, holdWhileUnread)   source subscribed now
 *   items before the reader              kept, in order; the first one calls holdWhileUnread(read)
 *   the reader subscribes                kept items, then the end if it came, then the rest live; read settles
 *   the reader leaves                    the source is left (a request is given up)
 *   a second reader                      an error: the stream was read once
 *
 * `holdWhileUnread` is what keeps the kept items few: the caller closes its
 * flow gate until `read` settles, so a kernel stream stops being read after
 * the chunk in hand and the rest of what the kernel sends stays in TCP, as it
 * does while the reader itself waits on a write. Whoever gets the returned
 * Observable must subscribe to it, if only to leave at once: until then the
 * source stays subscribed.
 */
import { Observable, Subscriber } from "rxjs";

export function readAhead<T>(source: Observable<T>, holdWhileUnread: (read: Promise<void>) => void): Observable<T> {
  const ahead = new ReadAhead<T>(holdWhileUnread);
  source.subscribe(ahead);
  return new Observable<T>((reader) => ahead.read(reader));
}

/**
 * The source's subscriber itself, not an observer RxJS would wrap in two
 * more objects: every open stream holds it for as long as it lasts, one
 * subscriber more than its chain had before.
 */
class ReadAhead<T> extends Subscriber<T> {
  /** What came before the reader, and while its items were handed over; undefined once they were. */
  #kept: T[] | undefined = [];
  #end: { error: unknown } | "complete" | undefined;
  #reader: Subscriber<T> | undefined;
  #taken = false;
  #read: (() => void) | undefined;
  #holdWhileUnread: ((read: Promise<void>) => void) | undefined;

  constructor(holdWhileUnread: (read: Promise<void>) => void) {
    super();
    this.#holdWhileUnread = holdWhileUnread;
  }

  protected override _next(item: T): void {
    const kept = this.#kept;
    if (kept === undefined) return this.#reader?.next(item);
    if (kept.length === 0 && !this.#taken) this.#holdWhileUnread?.(new Promise<void>((resolve) => (this.#read = resolve)));
    kept.push(item);
  }

  protected override _error(error: unknown): void {
    this.#ended({ error });
    this.unsubscribe();
  }

  protected override _complete(): void {
    this.#ended("complete");
    this.unsubscribe();
  }

  read(reader: Subscriber<T>): () => void {
    if (this.#taken) {
      reader.error(new Error("a stream read ahead is read once"));
      return () => {};
    }
    this.#taken = true;
    this.#holdWhileUnread = undefined;
    // Items that arrive while these are handed over (a reader that makes the source go on) queue behind them.
    const kept = this.#kept!;
    for (let at = 0; at < kept.length && !reader.closed; at++) reader.next(kept[at]!);
    this.#kept = undefined;
    this.#reader = reader;
    this.#read?.();
    this.#read = undefined;
    if (this.#end !== undefined) this.#tell(this.#end);
    return () => {
      this.#reader = undefined;
      this.unsubscribe();
    };
  }

  #ended(end: { error: unknown } | "complete"): void {
    if (this.#kept !== undefined) this.#end = end;
    else this.#tell(end);
  }

  #tell(end: { error: unknown } | "complete"): void {
    const reader = this.#reader;
    if (reader === undefined) return;
    if (end === "complete") reader.complete();
    else reader.error(end.error);
  }
}
