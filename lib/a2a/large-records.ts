/**
 * Kernel records too large to parse in one step (see `large-json.ts`),
 * parsed in slices where a stream's records are read, in order with the
 * rest: the records after a large one wait until it is parsed, then go on
 * as they came. Small records cost what they cost before: one check of
 * their length.
 *
 *   records   --a--B----c--d--|        B large
 *   results   --a-------B'c--d--|      B' parsed over several turns of the loop
 */
import { Observable, type OperatorFunction } from "rxjs";
import type { EventSourceMessage } from "eventsource-parser";
import { LARGE_JSON_CHARS, nextTurn, parseJsonInSlices, type YieldToLoop } from "./large-json.js";
import { MAX_KERNEL_JSON_DEPTH, nestsDeeperThan, protocolError } from "./rpc-errors.js";

/** `parseJson` (`rpc-errors.ts`) in slices: the same value, the same A2A_PROTOCOL_ERROR for text that is no JSON or nests too deep. */
export async function parseKernelJsonInSlices(text: string, yieldToLoop: YieldToLoop = nextTurn): Promise<unknown> {
  let value: unknown;
  try {
    value = await parseJsonInSlices(text, yieldToLoop);
  } catch (error) {
    throw protocolError(error);
  }
  if (nestsDeeperThan(value, MAX_KERNEL_JSON_DEPTH))
    throw protocolError(new Error(`the kernel's JSON nests deeper than ${MAX_KERNEL_JSON_DEPTH} levels`));
  return value;
}

/**
 * Each record as `resultOf` makes it, in order. A record whose data is
 * large is parsed here first, in slices, and handed over as `frame`;
 * `resultOf` parses every other record itself, at once.
 */
export function largeRecordsInSlices<R>(
  resultOf: (record: EventSourceMessage, frame?: unknown) => R,
  yieldToLoop: YieldToLoop = nextTurn,
): OperatorFunction<EventSourceMessage, R> {
  return (records) =>
    new Observable<R>((subscriber) => {
      /** Records that came while a large one is parsed, and what ended the stream meanwhile; in order. */
      const waiting: Array<{ record: EventSourceMessage } | { end: () => void }> = [];
      let parsing = false;

      const drain = async () => {
        parsing = true;
        while (waiting.length > 0 && !subscriber.closed) {
          const item = waiting.shift()!;
          if ("end" in item) {
            item.end();
            continue;
          }
          try {
            const { record } = item;
            const frame = record.data.length >= LARGE_JSON_CHARS ? await parseKernelJsonInSlices(record.data, yieldToLoop) : undefined;
            if (!subscriber.closed) subscriber.next(resultOf(record, frame));
          } catch (error) {
            subscriber.error(error);
          }
        }
        parsing = false;
      };

      const subscription = records.subscribe({
        next: (record) => {
          if (!parsing && record.data.length < LARGE_JSON_CHARS) {
            let result: R;
            try {
              result = resultOf(record);
            } catch (error) {
              subscriber.error(error);
              return;
            }
            subscriber.next(result);
            return;
          }
          waiting.push({ record });
          if (!parsing) void drain();
        },
        error: (error: unknown) => {
          if (!parsing) return subscriber.error(error);
          waiting.push({ end: () => subscriber.error(error) });
        },
        complete: () => {
          if (!parsing) return subscriber.complete();
          waiting.push({ end: () => subscriber.complete() });
        },
      });
      return () => {
        waiting.length = 0;
        subscription.unsubscribe();
      };
    });
}
