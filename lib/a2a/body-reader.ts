/**
 * The kernel's SSE body as the stream reads it (`sse-stream.ts`): see `readRecords`.
 */
/**
 * Whether the stream's reader may read on (see `runs/flow-gate.ts`): the
 * run's client is behind while it is closed. `whenOpen()` is `undefined`
 * while open, else a promise that settles when it opens.
 */
export interface ReadGate {
  whenOpen(): Promise<void> | undefined;
}

/**
 * The members of a body `readRecords` uses: a `Readable` has them, and so
 * has the kernel's answer as undici hands it over (`kernel-dispatch.ts`).
 */
export interface RecordBody {
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  on(event: "error", listener: (error: unknown) => void): unknown;
  once(event: "end" | "close", listener: () => void): unknown;
  pause(): unknown;
  resume(): unknown;
  isPaused(): boolean;
  destroy(): unknown;
  readonly destroyed: boolean;
  readonly readableEnded: boolean;
}

/** What the body's bytes are handed to, a chunk at a time, in order (`SseRecordParser`). */
export interface ChunkParser {
  /** May throw: the body is then destroyed and the stream ends with that error. */
  feed(chunk: Buffer): void;
  /** Nothing more is handed on, not even the rest of a chunk being parsed. */
  stop(): void;
}

/**
 * Past this many bytes received and not yet parsed, the kernel's socket is
 * paused (TCP then slows the kernel); parsing on resumes it. Chunks wait
 * only while the turn's bytes are spent or the gate is closed.
 */
const PAUSE_AFTER_BYTES = 1024 * 1024;

/**
 * At most this many bytes of the kernel's stream are parsed in one turn
 * of the event loop; the rest waits for the next turn. Every record
 * parsed runs through the whole run (projection, SSE encoding) before
 * anything else can, and a socket that keeps up is read up to 32 times in
 * one turn (libuv reads on while data is there): an answer of 16 KiB
 * deltas read at full speed went through 2 MiB a turn, holding every other
 * stream of the process for 60–200 ms (`npm run bench -- memory`). 256 KiB
 * is a few milliseconds of work.
 */
export const BYTES_PER_TURN = 256 * 1024;

/**
 * Reads `body` into `parser` as its chunks arrive, synchronously: no
 * promise or queue per chunk while the stream keeps within its turn and
 * its gate. `onEnd` is called once: with no argument when the body ended
 * (an unfinished last record is dropped, as an EventSource drops it), or
 * with the cause when the transport cut it or the parser refused it.
 *
 * A cut is not an error at once: the stream ends after every chunk that
 * arrived before it. Chunks are taken as they arrive (flowing mode), not
 * pulled: the response is destroyed when the connection dies, and
 * destroying discards what was received but not yet read — the records
 * that arrived with the cut, often the very first ones, which name the
 * task a cancel needs. (Only while more than 1 MiB waits unparsed is the
 * body paused, and a cut then loses what the response still buffers.)
 *
 * A chunk past the turn's BYTES_PER_TURN is parsed up to them, and the
 * rest waits for the next turn. With a `gate`, a chunk that arrives while
 * it is closed waits, and pauses the body once the socket read that brought
 * it is taken: the response stops reading the socket, and TCP holds the
 * kernel back until the run's client has caught up.
 */
export function readRecords(body: RecordBody, parser: ChunkParser, onEnd: (cut?: unknown) => void, gate?: ReadGate): { cancel(): void } {
  /** Chunks that arrived and wait for the next turn or the open gate. */
  const waiting: Buffer[] = [];
  let waitingBytes = 0;
  let turn = -1;
  let turnBytes = 0;
  /** The body has ended (`cut` says how) but chunks still wait. */
  let ended: { cut?: unknown } | undefined;
  let finished = false;
  let waitingForGate = false;

  const finish = (cut?: unknown) => {
    if (finished) return;
    finished = true;
    waiting.length = 0;
    waitingBytes = 0;
    if (cut === undefined) onEnd();
    else onEnd(cut);
  };

  /** Parses what the turn and the gate allow of `chunk`; returns what of it must wait, if any. */
  const parse = (chunk: Buffer): Buffer | undefined => {
    const now = currentTurn();
    if (turn !== now) {
      turn = now;
      turnBytes = 0;
    }
    const allowed = BYTES_PER_TURN - turnBytes;
    if (allowed <= 0) return chunk;
    const part = chunk.length <= allowed ? chunk : chunk.subarray(0, allowed);
    turnBytes += part.length;
    try {
      parser.feed(part);
    } catch (error) {
      body.destroy();
      finish(error);
      return undefined;
    }
    return part === chunk ? undefined : chunk.subarray(allowed);
  };

  const gateClosed = (): boolean => {
    const opened = gate?.whenOpen();
    if (opened === undefined) return false;
    if (!waitingForGate) {
      waitingForGate = true;
      void opened.then(() => {
        waitingForGate = false;
        drain();
      });
    }
    return true;
  };

  /** Parses the chunks that wait, as far as the turn and the gate allow, and ends the stream once they are all parsed. */
  const drain = () => {
    while (waiting.length > 0 && !finished) {
      if (gateClosed()) return;
      const rest = parse(waiting[0]!);
      if (finished) return;
      if (rest !== undefined) {
        waitingBytes -= waiting[0]!.length - rest.length;
        waiting[0] = rest;
        resumeIfDue();
        return onNextTurn(drain);
      }
      waitingBytes -= waiting.shift()!.length;
    }
    if (finished) return;
    if (ended !== undefined) return finish(ended.cut);
    resumeIfDue();
  };

  // Chunks that arrive while others wait join them, in order: the body may flow again before they are all parsed.
  const resumeIfDue = () => {
    if (body.isPaused() && !body.destroyed && waitingBytes <= PAUSE_AFTER_BYTES && gate?.whenOpen() === undefined) body.resume();
  };

  let pauseScheduled = false;
  const pauseAtGate = () => {
    pauseScheduled = false;
    if (!finished && waiting.length > 0 && gate?.whenOpen() !== undefined) body.pause();
  };
  const wait = (chunk: Buffer) => {
    waiting.push(chunk);
    waitingBytes += chunk.length;
    if (waitingBytes > PAUSE_AFTER_BYTES) body.pause();
    else if (!pauseScheduled && gate?.whenOpen() !== undefined) {
      // Not at once: the rest of the socket read that brought this chunk (often the records that came with a cut)
      // is taken too, rather than left in the response, which a cut destroys.
      pauseScheduled = true;
      process.nextTick(pauseAtGate);
    }
  };

  body.on("data", (chunk: Buffer) => {
    if (finished) return;
    if (waiting.length > 0) return wait(chunk);
    if (gateClosed()) {
      wait(chunk);
      return;
    }
    const rest = parse(chunk);
    if (rest !== undefined && !finished) {
      wait(rest);
      onNextTurn(drain);
    }
  });
  const end = (cut?: unknown) => {
    if (ended !== undefined || finished) return;
    ended = { cut };
    if (waiting.length === 0) finish(cut);
  };
  body.once("end", () => end());
  // Not `once`: a destroyed body may emit more than one error, and an unheard one would end the process.
  body.on("error", (error: unknown) => end(error));
  body.once("close", () => {
    if (!body.readableEnded) end(new Error("the body closed before its end"));
  });

  return {
    cancel: () => {
      if (finished) return;
      finished = true;
      waiting.length = 0;
      parser.stop();
      body.destroy();
    },
  };
}

/**
 * The event loop's turns, counted by one `setImmediate` for every stream
 * of the process (rather than one per stream and turn): a turn's count
 * changes once the loop has run its I/O callbacks.
 */
let turnCount = 0;
let turnScheduled = false;
let nextTurnWork: Array<() => void> = [];

function currentTurn(): number {
  if (!turnScheduled) {
    turnScheduled = true;
    setImmediate(advanceTurn);
  }
  return turnCount;
}

function onNextTurn(work: () => void): void {
  currentTurn();
  nextTurnWork.push(work);
}

function advanceTurn(): void {
  turnScheduled = false;
  turnCount++;
  const work = nextTurnWork;
  nextTurnWork = [];
  for (const next of work) {
    try {
      next();
    } catch (error) {
      // One stream's failure must not keep the others waiting: it is thrown on its own.
      process.nextTick(() => {
        throw error;
      });
    }
  }
}
