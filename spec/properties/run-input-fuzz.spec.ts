/**
 * Fuzzing the HTTP edge with malformed RunAgentInput requests: whatever
 * arrives, the answer is never a 5xx, the process does not crash, and the
 * service still answers `/health` afterwards. A body that turns out valid
 * starts a run, which must end well-formed. `npm run soak` sends many more.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { startHarness, type Harness } from "../support/service.js";
import { extremeRequests, fuzzRequest } from "../support/fuzz-bodies.js";
import { expectAnswerNever5xx } from "../support/fuzz-http.js";

describe("RunAgentInput fuzz over HTTP", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  it("answers a thousand malformed requests without a 5xx, and still answers /health", async () => {
    await fc.assert(
      fc.asyncProperty(fuzzRequest, (request) => expectAnswerNever5xx(harness.service.url, request)),
      { numRuns: 1000 },
    );
    const health = await fetch(`${harness.service.url}/health`);
    expect(health.status).toBe(200);
  }, 120_000);

  it("answers huge and deeply nested bodies with a 4xx or a run, never a 5xx", async () => {
    for (const request of extremeRequests()) await expectAnswerNever5xx(harness.service.url, request);
    expect((await fetch(`${harness.service.url}/health`)).status).toBe(200);
  }, 120_000);
});
