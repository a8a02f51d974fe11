/**
 * AG-UI's protobuf encoding (`Accept: application/vnd.ag-ui.event+proto`),
 * through the real service and the demo kernel's fixtures: runs and
 * observer streams come in the encoding the request negotiated, SSE staying
 * the default, and a stock HttpAgent that asks for protobuf ends with what
 * it ends with over SSE.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { PROTOBUF_MEDIA_TYPE } from "../../lib/http/event-encoding.js";
import { expectValidRun } from "../support/agui.js";
import { decodeEvents, postStream, protobufHttpAgent } from "../support/event-streams.js";
import { httpAgent, runHttpAgent, transcript, userMessage } from "../support/http-agent.js";
import { runInput, startHarness, type Harness } from "../support/service.js";

const SSE_TYPE = "text/event-stream; charset=utf-8";

/** Keys whose values name things of one run: two runs of one fixture differ there (and in their times), and only there. */
const RUN_OWN_IDS = new Set([
  "threadId",
  "runId",
  "aguiRunId",
  "messageId",
  "parentMessageId",
  "toolCallId",
  "executionId",
  "taskId",
  "contextId",
  "sessionId",
  "id",
]);
const TIMES = new Set(["timestamp", "expiresAt"]);

/**
 * A key the wire does not tell apart from a missing one: undefined, and an
 * empty list of RunAgentInput's `resume` (in RUN_STARTED's `input`), which
 * protobuf, having no absent list, decodes as `[]`.
 */
const isAbsent = (name: string, value: unknown) => value === undefined || (name === "resume" && Array.isArray(value) && value.length === 0);

/**
 * A run's events with what is its own written as placeholders: each id
 * (wherever it appears, inside other strings too, as in `perm-<taskId>`)
 * as `<id N>`, numbered by first appearance, and every time as `<time>`.
 * Two runs of one fixture then read the same, and differ in nothing else.
 */
function withRunOwnValuesOut(events: readonly AGUIEvent[]): unknown {
  const ids: string[] = [];
  const collect = (value: unknown, key?: string): void => {
    if (key !== undefined && RUN_OWN_IDS.has(key) && typeof value === "string" && !ids.includes(value)) ids.push(value);
    else if (typeof value === "object" && value !== null) for (const [name, item] of Object.entries(value)) collect(item, name);
  };
  collect(events);
  // Longest first, so an id that holds another is replaced whole.
  const replacements = ids.map((id, index) => [id, `<id ${index}>`] as const).sort(([a], [b]) => b.length - a.length);
  const rewrite = (value: unknown, key?: string): unknown => {
    if (key !== undefined && TIMES.has(key)) return "<time>";
    if (typeof value === "string") return replacements.reduce((text, [id, placeholder]) => text.split(id).join(placeholder), value);
    if (Array.isArray(value)) return value.map((item) => rewrite(item));
    if (typeof value !== "object" || value === null) return value;
    return Object.fromEntries(Object.entries(value).flatMap(([name, item]) => (isAbsent(name, item) ? [] : [[name, rewrite(item, name)]])));
  };
  return rewrite(events);
}

const expectSameUpToRunIds = (actual: readonly AGUIEvent[], expected: readonly AGUIEvent[]) =>
  expect(withRunOwnValuesOut(actual)).toEqual(withRunOwnValuesOut(expected));

/** A POST on node:http, which sends exactly the headers given (fetch adds an Accept of its own). */
function postRaw(url: string, body: unknown, headers: Record<string, string>) {
  const { hostname, port, pathname } = new URL(url);
  return new Promise<{ status: number; contentType: string; vary: string | undefined; bytes: Buffer }>((resolve, reject) => {
    const request = http.request(
      { host: hostname, port, path: pathname, method: "POST", agent: false, headers: { "content-type": "application/json", ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode!,
            contentType: response.headers["content-type"] ?? "",
            vary: response.headers.vary,
            bytes: Buffer.concat(chunks),
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
}

/** What an iac-code client sends with every run. */
const iacCodeProps = { forwardedProps: runInput("").forwardedProps };

const sessionOf = (events: AGUIEvent[]) =>
  (events.find((event) => event.type === EventType.CUSTOM && event.name === "iac-code.session.v1") as { value: { executionId: string } })
    .value;

describe("the encoding of a stream, negotiated from the request's Accept", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  it.each([
    ["no Accept at all", undefined, SSE_TYPE],
    ["*/* (curl's and fetch's default)", "*/*", SSE_TYPE],
    ["text/event-stream", "text/event-stream", SSE_TYPE],
    ["a type that is neither", "application/json", SSE_TYPE],
    ["both, SSE first", `text/event-stream, ${PROTOBUF_MEDIA_TYPE}`, SSE_TYPE],
    ["protobuf refused", `${PROTOBUF_MEDIA_TYPE};q=0, */*`, SSE_TYPE],
    ["protobuf", PROTOBUF_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE],
    ["both, protobuf first", `${PROTOBUF_MEDIA_TYPE}, text/event-stream`, PROTOBUF_MEDIA_TYPE],
    ["both, SSE at a lower quality", `text/event-stream;q=0.5, ${PROTOBUF_MEDIA_TYPE}`, PROTOBUF_MEDIA_TYPE],
    ["protobuf, else anything", `${PROTOBUF_MEDIA_TYPE}, */*;q=0.1`, PROTOBUF_MEDIA_TYPE],
  ])("POST / with %s", async (_name, accept, contentType) => {
    const answer = await postRaw(harness.service.url, runInput("chat"), accept === undefined ? {} : { accept });
    expect(answer.status).toBe(200);
    expect(answer.contentType).toBe(contentType);
    expect(answer.vary).toBe("Accept");
    const events = await decodeEvents(answer.bytes, answer.contentType);
    await expectValidRun(events);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });

  it("gives the same events in either encoding", async () => {
    for (const fixture of ["reasoning-tools", "failing-run", "stream-error", "whole-text"]) {
      const overSse = await postStream(harness.service.url, runInput(fixture), { accept: "text/event-stream" });
      const overProtobuf = await postStream(harness.service.url, runInput(fixture), { accept: PROTOBUF_MEDIA_TYPE });
      expect(overProtobuf.contentType).toBe(PROTOBUF_MEDIA_TYPE);
      await expectValidRun(overProtobuf.events);
      expectSameUpToRunIds(overProtobuf.events, overSse.events);
    }
  });

  it("keeps what else the answer varies by: a page's Origin as well as the Accept", async () => {
    const cors = await startHarness({}, { allowedOrigins: ["https://app.example"] });
    try {
      for (const accept of ["text/event-stream", PROTOBUF_MEDIA_TYPE]) {
        const answer = await postRaw(cors.service.url, runInput("chat"), { accept, origin: "https://app.example" });
        expect(answer.status).toBe(200);
        expect(answer.vary?.split(/,\s*/).sort()).toEqual(["Accept", "Origin"]);
      }
    } finally {
      await cors.close();
    }
  });

  it("still answers a refusal before the stream as JSON", async () => {
    const refused = await postStream(harness.service.url, runInput("chat", { tools: [{ name: "x" }] }), { accept: PROTOBUF_MEDIA_TYPE });
    expect(refused.status).toBe(400);
    expect(refused.contentType).toMatch(/^application\/json/);
    expect(refused.json).toMatchObject({ error: { code: "INVALID_INPUT" } });
  });

  it("serves an observer in the encoding it asks for: the same view as over SSE", async () => {
    const first = runInput("permission");
    const paused = await postStream(harness.service.url, first);
    const { executionId } = sessionOf(paused.events);
    const observe = (accept: string) =>
      postStream(
        `${harness.service.url}/extensions/iac-code/v1/executions/${executionId}/subscribe`,
        { threadId: first.threadId, runId: first.runId },
        { accept },
      );
    const overSse = await observe("text/event-stream");
    const overProtobuf = await observe(PROTOBUF_MEDIA_TYPE);
    expect(overSse.contentType).toBe(SSE_TYPE);
    expect(overProtobuf.contentType).toBe(PROTOBUF_MEDIA_TYPE);
    expect(overProtobuf.vary).toBe("Accept");
    await expectValidRun(overProtobuf.events);
    expect(overProtobuf.events.map((event) => event.type)).toContain(EventType.STATE_SNAPSHOT);
    expect(overProtobuf.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    expectSameUpToRunIds(overProtobuf.events, overSse.events);
  });
});

describe("a stock HttpAgent that asks for protobuf", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  it.each(["chat", "reasoning-tools", "failing-run"])("ends with the messages it ends with over SSE (%s)", async (fixture) => {
    const asked = userMessage(fixture);
    const overSse = await runHttpAgent(httpAgent(harness.service.url, { messages: [asked] }), iacCodeProps);
    const agent = protobufHttpAgent(harness.service.url, { messages: [asked] });
    const overProtobuf = await runHttpAgent(agent, iacCodeProps);

    expect(overSse.error).toBeUndefined();
    expect(agent.contentTypes).toEqual([PROTOBUF_MEDIA_TYPE]);
    expect(overProtobuf.error).toBeUndefined();
    await expectValidRun(overProtobuf.events);
    expect(transcript(overProtobuf.messages)).toEqual(transcript(overSse.messages));
    expect(overProtobuf.messages.length).toBeGreaterThan(1);
    expectSameUpToRunIds(overProtobuf.events, overSse.events);
  });

  it("pauses at an interrupt and resumes with the answer, as over SSE", async () => {
    const answerAndRun = async (agent: ReturnType<typeof httpAgent>) => {
      const paused = await runHttpAgent(agent, iacCodeProps);
      expect(paused.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
      const interrupt = agent.pendingInterrupts[0] as Interrupt;
      const resumed = await runHttpAgent(agent, {
        ...iacCodeProps,
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "allow_once" } }],
      });
      return { paused, resumed };
    };
    const asked = userMessage("permission");
    const overSse = await answerAndRun(httpAgent(harness.service.url, { messages: [asked] }));
    const agent = protobufHttpAgent(harness.service.url, { messages: [asked] });
    const overProtobuf = await answerAndRun(agent);

    expect(agent.contentTypes).toEqual([PROTOBUF_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE]);
    for (const run of [overProtobuf.paused, overProtobuf.resumed]) {
      expect(run.error).toBeUndefined();
      await expectValidRun(run.events);
    }
    expect(overProtobuf.resumed.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(transcript(overProtobuf.resumed.messages)).toEqual(transcript(overSse.resumed.messages));
    expectSameUpToRunIds(overProtobuf.paused.events, overSse.paused.events);
    expectSameUpToRunIds(overProtobuf.resumed.events, overSse.resumed.events);
  });
});
