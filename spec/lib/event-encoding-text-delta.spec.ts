/**
 * The SSE record of a text delta is written from its parts, not by
 * JSON.stringify (`lib/http/event-encoding.ts`); it must be the very bytes
 * JSON.stringify writes, whatever the strings hold (escapes, quotes, any
 * code unit, a lone surrogate), whatever the order of its fields or a field
 * more, and whatever came before it (the record reuses the last message id
 * and timestamp it formatted).
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { encodeSseEvent } from "../../lib/http/event-encoding.js";

const asJson = (event: unknown) => `data: ${JSON.stringify(event)}\n\n`;

/** Any UTF-16 code unit, lone surrogates and control characters among them. */
const anyText = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)), maxLength: 24 });
const fewIds = fc.constantFrom("m-1", "m-2", 'm-"quoted"\\', "m-\u2028");
const timestamp = fc.oneof(
  fc.constantFrom(1767225600000, 1767225600001, 0, -0, Number.MAX_SAFE_INTEGER, 2 ** 53, 1e21, 1.5, Number.NaN, Infinity),
  fc.integer(),
  fc.double(),
);

const plainDelta = fc
  .record({ messageId: fc.oneof(fewIds, anyText), delta: anyText, timestamp })
  .map(({ messageId, delta, timestamp }) => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta, timestamp }));

/** A delta's fields in any order, some left out or undefined, a field more: every shape the general way must take. */
const otherShape = fc
  .record({
    messageId: fc.oneof(fewIds, fc.constant(undefined)),
    delta: fc.oneof(anyText, fc.constant(undefined), fc.integer()),
    timestamp: fc.oneof(timestamp, fc.constant(undefined), fc.constant("1")),
    rawEvent: fc.oneof(fc.constant(undefined), fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 })),
    extra: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }),
  })
  .chain((fields) =>
    fc.shuffledSubarray(Object.keys(fields), { minLength: Object.keys(fields).length }).map((order) => {
      const event: Record<string, unknown> = { type: EventType.TEXT_MESSAGE_CONTENT };
      for (const key of order) if (key !== "extra" || fields.extra !== undefined) event[key] = fields[key as keyof typeof fields];
      return event;
    }),
  );

describe("the SSE record of a text delta", () => {
  it("is what JSON.stringify writes, for any sequence of deltas of any shape", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(plainDelta, otherShape), { minLength: 1, maxLength: 12 }), (events) => {
        for (const event of events) expect(encodeSseEvent(event as AGUIEvent)).toBe(asJson(event));
      }),
      { numRuns: 500 },
    );
  });

  it("writes the fields a stream sends, escapes and all, as JSON.stringify does", () => {
    const event = {
      type: EventType.TEXT_MESSAGE_CONTENT,
      messageId: 'm\u2028"1"',
      delta: "a\u0000\ud800\n\\",
      timestamp: 1767225600000,
    } as AGUIEvent;
    expect(encodeSseEvent(event)).toBe(
      'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m\u2028\\"1\\"","delta":"a\\u0000\\ud800\\n\\\\","timestamp":1767225600000}\n\n',
    );
  });

  it("leaves an inherited enumerable field out, as JSON.stringify does", () => {
    const inherited = Object.assign(Object.create({ inheritedKey: 1 }) as object, {
      type: EventType.TEXT_MESSAGE_CONTENT,
      messageId: "m-1",
      delta: "d",
      timestamp: 1,
    });
    expect(encodeSseEvent(inherited as AGUIEvent)).toBe(asJson(inherited));
  });

  it("leaves other events to JSON.stringify", () => {
    const events: AGUIEvent[] = [
      { type: EventType.TEXT_MESSAGE_START, messageId: "m-1", role: "assistant", timestamp: 1 },
      { type: EventType.REASONING_MESSAGE_CONTENT, messageId: "m-1", delta: "d", timestamp: 1 } as AGUIEvent,
    ];
    for (const event of events) expect(encodeSseEvent(event)).toBe(asJson(event));
  });
});
