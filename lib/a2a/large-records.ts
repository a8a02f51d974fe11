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
import type { OperatorFunction } from "rxjs";
import { awaitInOrder } from "../../operators/await-in-order.js";
import { LARGE_JSON_CHARS, nextTurn, parseJsonInSlices, type YieldToLoop } from "./large-json.js";
import { MAX_KERNEL_JSON_DEPTH, nestsDeeperThan, protocolError } from "./rpc-errors.js";
import type { SseRecord } from "./sse-parser.js";

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
 * Each record as `resultOf` makes it, in order (`awaitInOrder`). A record
 * whose data is large is parsed here first, in slices, and handed over as
 * `frame`; `resultOf` parses every other record itself, at once.
 */
export function largeRecordsInSlices<R>(
  resultOf: (record: SseRecord, frame?: unknown) => R,
  yieldToLoop: YieldToLoop = nextTurn,
): OperatorFunction<SseRecord, R> {
  return awaitInOrder((record: SseRecord) =>
    record.data.length < LARGE_JSON_CHARS
      ? resultOf(record)
      : parseKernelJsonInSlices(record.data, yieldToLoop).then((frame) => resultOf(record, frame)),
  );
}
