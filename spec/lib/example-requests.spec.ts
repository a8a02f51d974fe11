/**
 * The sample requests of `examples/requests/` and the HTTP API doc's
 * complete request, run through the service and the demo kernel as the
 * README tells a user to run them: each template filled in with a fresh
 * thread and run (twice, so a try never meets the one before), each answer
 * after the pause it answers; and the README names no demo fixture without
 * a request file, nor does `docs/http-api.md` document
 * `forwardedProps.iacCode` otherwise than the schema.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { fillRequest, freshValues, placeholdersIn } from "../../examples/request-template.js";
import { PROJECT_ROOT, SCHEMAS_DIR } from "../../lib/paths.js";
import { validateRunInput } from "../../lib/validation.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, startHarness, SYSTEM_TMPDIR, type Harness } from "../support/service.js";

const REQUESTS_DIR = path.join(PROJECT_ROOT, "examples", "requests");
const FIXTURES_DIR = path.join(PROJECT_ROOT, "examples", "fixtures");
const README = readFileSync(path.join(PROJECT_ROOT, "README.md"), "utf8");
const HTTP_API = readFileSync(path.join(PROJECT_ROOT, "docs", "http-api.md"), "utf8");

const requestFiles = readdirSync(REQUESTS_DIR)
  .filter((file) => file.endsWith(".json"))
  .sort();
const templateOf = (file: string) => readFileSync(path.join(REQUESTS_DIR, file), "utf8");
/**
 * The samples run in /tmp, which a service allows by default as the system's temporary directory; not this file's
 * own (`os.tmpdir()` while it runs, see `jest-environment.mjs`), which lies inside it.
 */
const SAMPLES_ALLOWED_CWDS = [SYSTEM_TMPDIR];

/** Each answer, and the request whose pause it answers. */
const ANSWERS: Record<string, string> = {
  "permission-allow.json": "permission.json",
  "permission-deny.json": "permission.json",
  "question-answer.json": "question.json",
};
const answers = Object.keys(ANSWERS);
const firstTurns = requestFiles.filter((file) => !answers.includes(file));

/** How a first turn ends, where it does not end in success. */
const ENDINGS: Record<string, "error" | "interrupt"> = {
  "failing-run.json": "error",
  "stream-error.json": "error",
  "permission.json": "interrupt",
  "question.json": "interrupt",
};

const expectEnding = (events: AGUIEvent[], ending: "success" | "error" | "interrupt") =>
  expect(events.at(-1)).toMatchObject(
    ending === "error" ? { type: EventType.RUN_ERROR } : { type: EventType.RUN_FINISHED, outcome: { type: ending } },
  );

/** The HTTP API doc's section on `forwardedProps.iacCode`, up to the next heading of its level or above. */
function iacCodeSection(): string {
  const start = HTTP_API.indexOf("## `forwardedProps.iacCode`");
  expect(start).toBeGreaterThan(-1);
  const end = HTTP_API.slice(start + 1).search(/\n#{1,2} /);
  return HTTP_API.slice(start, end < 0 ? undefined : start + 1 + end);
}

describe("the sample requests", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({}, { allowedCwds: SAMPLES_ALLOWED_CWDS });
  });
  afterAll(() => harness.close());

  it("are templates of a thread and a run, and every answer says which pause it answers", () => {
    for (const file of requestFiles) {
      const placeholders = placeholdersIn(templateOf(file));
      expect([file, placeholders.has("thread"), placeholders.has("run")]).toEqual([file, true, true]);
      expect([file, placeholders.has("interrupt")]).toEqual([file, answers.includes(file)]);
    }
    for (const first of Object.values(ANSWERS)) expect(requestFiles).toContain(first);
  });

  it.each(firstTurns)("%s runs through the demo kernel, and again with fresh ids", async (file) => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const { status, events } = await postRun(harness.service.url, fillRequest(templateOf(file), freshValues()));
      expect(status).toBe(200);
      await expectValidRun(events);
      expectEnding(events, ENDINGS[file] ?? "success");
    }
  });

  it.each(answers)("%s answers the pause of its request on the same thread", async (file) => {
    const { thread } = freshValues();
    const paused = await postRun(harness.service.url, fillRequest(templateOf(ANSWERS[file]!), { ...freshValues(), thread }));
    expectEnding(paused.events, "interrupt");
    const [interrupt] = (paused.events.at(-1) as { outcome: { interrupts: Interrupt[] } }).outcome.interrupts;
    const answered = await postRun(
      harness.service.url,
      fillRequest(templateOf(file), { ...freshValues(), thread, interrupt: interrupt!.id }),
    );
    expect(answered.status).toBe(200);
    await expectValidRun(answered.events);
    expectEnding(answered.events, "success");
  });

  it("cover every demo fixture the README names", () => {
    const fixtures = readdirSync(FIXTURES_DIR).flatMap((file) => (file.endsWith(".jsonl") ? [file.slice(0, -".jsonl".length)] : []));
    const named = fixtures.filter((fixture) => README.includes(`\`${fixture}\``));
    expect(named).toEqual(expect.arrayContaining(["chat", "reasoning-tools", "failing-run", "whole-text", "stream-error", "slow-chat"]));
    expect(named.filter((fixture) => !requestFiles.includes(`${fixture}.json`))).toEqual([]);
  });
});

describe("the HTTP API doc's forwardedProps.iacCode", () => {
  const schema = JSON.parse(readFileSync(path.join(SCHEMAS_DIR, "iac-code-extension.schema.json"), "utf8")) as {
    required: string[];
    properties: Record<string, { properties?: Record<string, unknown> }>;
  };
  const section = iacCodeSection();
  const rows = [...section.matchAll(/^\| `(\w+)` \| .* \| (yes|no) \| .* \|$/gm)].map(([, field, required]) => ({ field, required }));
  const complete = () => JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]!) as Record<string, unknown>;

  it("lists every field of the schema, once, and marks as required exactly the schema's required ones", () => {
    expect(rows.map(({ field }) => field).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(rows.flatMap(({ field, required }) => (required === "yes" ? [field] : [])).sort()).toEqual([...schema.required].sort());
  });

  it("gives a complete request: every field and subfield set, and valid", () => {
    const request = complete();
    const iacCode = (request.forwardedProps as { iacCode: Record<string, Record<string, unknown>> }).iacCode;
    expect(Object.keys(iacCode).sort()).toEqual(Object.keys(schema.properties).sort());
    for (const [field, definition] of Object.entries(schema.properties)) {
      if (definition.properties)
        expect([field, Object.keys(iacCode[field]!).sort()]).toEqual([field, Object.keys(definition.properties).sort()]);
    }
    expect(() => validateRunInput(request, { allowedCwds: SAMPLES_ALLOWED_CWDS })).not.toThrow();
  });

  it("runs that request through the demo kernel, every field reaching it", async () => {
    const harness = await startHarness({}, { allowedCwds: SAMPLES_ALLOWED_CWDS });
    try {
      const { status, events } = await postRun(harness.service.url, complete());
      expect(status).toBe(200);
      await expectValidRun(events);
      expectEnding(events, "success");
      const sent = harness.kernel.received.find((call) => call.method === "SendStreamingMessage")!.params as {
        message: { metadata: { iac_code: Record<string, unknown> } };
      };
      expect(sent.message.metadata.iac_code).toMatchObject({
        rosInvocationId: "ros-invocation-7d1e",
        run_mode: "pipeline",
        pipeline_name: "ros-stack-design",
        iac_code_api_key: "sk-0000000000000000",
        alibaba_cloud_region_id: "cn-hangzhou",
      });
    } finally {
      await harness.close();
    }
  });
});
