/**
 * A body JSON.parse would spend long on (issue 24, item 12): one with more
 * than `MAX_JSON_VALUES` values is refused before the parse, as
 * `REQUEST_TOO_LARGE`, whether or not it would have parsed; one of large
 * strings goes on as before. How long the event loop stood still is
 * measured by a script, not here (see the report of issue 24).
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { holdsMoreValuesThan, MAX_JSON_VALUES } from "../../lib/http/json-body.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, startHarness, type Harness } from "../support/service.js";

/** The values JSON.parse builds for `value`: each container, member and element. */
function valuesOf(value: unknown): number {
  if (Array.isArray(value))
    return 1 + value.length - (value.length > 0 ? 1 : 0) + value.reduce((sum: number, item) => sum + valuesOf(item), 0);
  if (typeof value === "object" && value !== null) {
    const entries = Object.values(value);
    // `{`, one `:` per member, and the commas between them.
    return 1 + entries.length + Math.max(0, entries.length - 1) + entries.reduce((sum: number, item) => sum + valuesOf(item), 0);
  }
  return 0;
}

describe("holdsMoreValuesThan", () => {
  it("counts what starts a value outside strings, whatever the strings hold (quotes and backslashes included)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat({ max: 50 }), (value, limit) => {
        const text = Buffer.from(JSON.stringify(value));
        expect(holdsMoreValuesThan(text, limit)).toBe(valuesOf(value) > limit);
      }),
      { numRuns: 500 },
    );
  });
});

describe("a request body with more values than a run could need", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  const post = (body: string) => postRun(harness.service.url, body);

  it("is refused as REQUEST_TOO_LARGE before it is parsed, malformed or not", async () => {
    const malformed = `{"messages":[${'"x",'.repeat(1_250_000)}}`;
    const wellFormed = JSON.stringify({ ...runInput("hello"), state: { list: Array.from({ length: MAX_JSON_VALUES + 1 }, () => 0) } });
    for (const body of [malformed, wellFormed]) {
      const answer = await post(body);
      expect(answer.status).toBe(413);
      expect(answer.json).toMatchObject({ error: { code: "REQUEST_TOO_LARGE" } });
    }
  });

  it("leaves a large body of few values as it was: malformed is INVALID_JSON, well formed runs", async () => {
    expect((await post(`{"a":"${"y".repeat(5_000_000)}`)).json).toMatchObject({ error: { code: "INVALID_JSON" } });
    const run = await post(JSON.stringify({ ...runInput("hello"), state: { note: "z".repeat(5_000_000) } }));
    expect(run.status).toBe(200);
    await expectValidRun(run.events);
  });
});
