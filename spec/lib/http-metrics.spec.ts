/**
 * `GET /metrics` of the real service in front of a real replay kernel: the
 * Prometheus text format, behind the bearer token, each service counting
 * apart, and label values from closed sets only, whatever ids and texts
 * the requests carried.
 */
import { EventType } from "@ag-ui/core";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { A2AClient } from "../../lib/a2a/client.js";
import { ERROR_CODES } from "../../lib/errors.js";
import { METRICS_PREFIX } from "../../lib/metrics/service-metrics.js";
import { FileThreadStore } from "../../lib/state/file-thread-store.js";
import { expectValidRun } from "../support/agui.js";
import { startRedisServer, type RedisServer } from "../../lib/testing/redis-server.js";
import { postRun, runInput, startHarness, uniqueId, type Harness } from "../support/service.js";

const TOKEN = "metrics-secret";
const auth = { authorization: `Bearer ${TOKEN}` };

/** One sample line of the exposition: `name{labels} value`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function samplesOf(text: string): Sample[] {
  return text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a Prometheus sample: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1]!, pair[2]!]));
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

describe("GET /metrics", () => {
  let harness: Harness;
  let other: Harness;
  let releaseHeldRun: () => void = () => undefined;
  const heldRun = new Promise<void>((resolve) => (releaseHeldRun = resolve));

  beforeAll(async () => {
    harness = await startHarness(
      // The "slow-chat" run holds its last line until the test lets it go: it is in flight while the test scrapes.
      { holdLine: (turn, index, count) => (turn.text === "slow-chat" && index === count - 1 ? heldRun : undefined) },
      { authToken: TOKEN },
    );
    other = await startHarness({}, { authToken: TOKEN });
  });
  afterAll(async () => {
    releaseHeldRun();
    await harness.close();
    await other.close();
  });

  const scrape = async (service = harness) => {
    const response = await fetch(`${service.service.url}/metrics`, { headers: auth });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return samplesOf(await response.text());
  };
  /** Scrapes until `done` holds: a run's counts are told as its stream ends, after its client read the last byte. */
  const scrapeUntil = async (done: (samples: Sample[]) => boolean, timeoutMs = 5000): Promise<Sample[]> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const samples = await scrape();
      if (done(samples)) return samples;
      if (Date.now() > deadline) throw new Error("the metrics never showed what the test waited for");
    }
  };
  const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
    samples
      .filter((sample) => sample.name === name && Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted))
      .reduce((sum, sample) => sum + sample.value, 0);

  it("asks for the bearer token, as every route but the probes does", async () => {
    const response = await fetch(`${harness.service.url}/metrics`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: "UNAUTHORIZED" } });
  });

  it("counts runs by kind, outcome and code, with their kernel calls, store operations and time to first event", async () => {
    const before = await scrape();
    const results = await Promise.all(
      ["chat", "permission", "failing-run"].map((fixture) => postRun(harness.service.url, runInput(fixture), auth)),
    );
    for (const { events } of results) await expectValidRun(events);
    const [chat, permission, failing] = results.map(({ events }) => events.at(-1));
    expect(chat).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
    expect(permission).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "interrupt" } });
    expect(failing).toMatchObject({ type: EventType.RUN_ERROR });
    const failingCode = (failing as { code: string }).code;

    const after = await scrapeUntil(
      (samples) => value(samples, "iac_code_agui_runs_ended_total") - value(before, "iac_code_agui_runs_ended_total") === 3,
    );
    const delta = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
    expect(delta("iac_code_agui_runs_started_total", { kind: "new" })).toBe(3);
    expect(delta("iac_code_agui_runs_ended_total", { kind: "new", outcome: "success", code: "" })).toBe(1);
    expect(delta("iac_code_agui_runs_ended_total", { kind: "new", outcome: "interrupt", code: "" })).toBe(1);
    expect(delta("iac_code_agui_runs_ended_total", { kind: "new", outcome: "error", code: failingCode })).toBe(1);
    expect(delta("iac_code_agui_time_to_first_event_seconds_count")).toBe(3);
    expect(delta("iac_code_agui_kernel_call_duration_seconds_count", { method: "sendStreamingMessage", outcome: "ok" })).toBe(3);
    expect(delta("iac_code_agui_state_store_duration_seconds_count", { operation: "tryAcquire", outcome: "ok" })).toBeGreaterThanOrEqual(3);
    expect(delta("iac_code_agui_state_store_duration_seconds_count", { operation: "save", outcome: "ok" })).toBeGreaterThanOrEqual(3);
    // prom-client's default process metrics are there too.
    expect(value(after, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(value(after, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
  });

  it("counts a user's cancel of a question as the resume's outcome cancelled, not as an error", async () => {
    const asked = runInput("question");
    const { events } = await postRun(harness.service.url, asked, auth);
    const [interrupt] = (events.at(-1) as { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts;
    const before = await scrape();
    const cancel = { ...asked, runId: uniqueId("run"), resume: [{ interruptId: interrupt!.id, status: "cancelled" }] };
    const { events: cancelled } = await postRun(harness.service.url, cancel, auth);
    await expectValidRun(cancelled);
    const ended = (samples: Sample[], outcome: string) =>
      value(samples, "iac_code_agui_runs_ended_total", { kind: "resume", outcome }) -
      value(before, "iac_code_agui_runs_ended_total", { kind: "resume", outcome });
    const after = await scrapeUntil((samples) => ended(samples, "cancelled") + ended(samples, "error") === 1);
    expect(ended(after, "cancelled")).toBe(1);
    expect(ended(after, "error")).toBe(0);
  });

  it("shows a run in flight, an observer, a lease conflict and a client that left; each service counts apart", async () => {
    const threadId = uniqueId("thread");
    const abort = new AbortController();
    const response = await fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      signal: abort.signal,
      body: JSON.stringify(runInput("slow-chat", { threadId })),
    });
    const reader = response.body!.getReader();
    await reader.read(); // RUN_STARTED: the run holds the thread now
    const inFlight = await scrape();
    expect(value(inFlight, "iac_code_agui_streams_active", { stream: "run" })).toBe(1);

    const busy = await postRun(harness.service.url, runInput("chat", { threadId }), auth);
    expect(busy.json).toMatchObject({ error: { code: "THREAD_BUSY" } });
    // An observer of a thread never seen: its stream opens and ends at once.
    const observer = await postRun(
      `${harness.service.url}/extensions/iac-code/v1/threads/${encodeURIComponent(uniqueId("thread"))}/connect`,
      {},
      auth,
    );
    await expectValidRun(observer.events);

    abort.abort();
    const after = await scrapeUntil((samples) => value(samples, "iac_code_agui_runs_ended_total", { outcome: "abandoned" }) === 1);
    expect(value(after, "iac_code_agui_lease_conflicts_total")).toBe(1);
    expect(value(after, "iac_code_agui_streams_active", { stream: "run" })).toBe(0);
    expect(value(after, "iac_code_agui_streams_active", { stream: "observer" })).toBe(0);
    expect(value(after, "iac_code_agui_clients_gone_total", { stream: "run", reason: "left" })).toBe(1);
    expect(after.some((sample) => sample.name === "iac_code_agui_streams_active" && sample.labels.stream === "observer")).toBe(true);

    // The other service, in this same process, saw none of it.
    const elsewhere = await scrape(other);
    expect(value(elsewhere, "iac_code_agui_runs_started_total")).toBe(0);
    expect(value(elsewhere, "iac_code_agui_lease_conflicts_total")).toBe(0);
  });

  it("never takes a thread id, run id or text for a label value, however many the runs carried", async () => {
    const inputs = Array.from({ length: 6 }, (_, i) => runInput(i % 2 === 0 ? "chat" : `no fixture by this name ${uniqueId("text")}`));
    const results = await Promise.all(inputs.map((input) => postRun(harness.service.url, input, auth)));
    for (const { events } of results) await expectValidRun(events);
    const ours = (await scrape()).filter((sample) => sample.name.startsWith(METRICS_PREFIX));
    const labelValues = new Set(ours.flatMap((sample) => Object.values(sample.labels)));
    for (const input of inputs) {
      for (const chosen of [input.threadId, input.runId, input.messages[0]!.id, input.messages[0]!.content]) {
        expect([...labelValues].filter((label) => label.includes(chosen))).toEqual([]);
      }
    }
    // Every label value is one of a closed set the service names itself.
    const methodsOf = (prototype: object) => Object.getOwnPropertyNames(prototype).filter((name) => name !== "constructor");
    const closedSets: Record<string, readonly string[]> = {
      kind: ["new", "resume", "guidance"],
      outcome: ["success", "interrupt", "cancelled", "error", "abandoned", "ok"],
      code: ["", "OTHER", ...ERROR_CODES],
      stream: ["run", "observer"],
      reason: ["left", "stalled"],
      method: methodsOf(A2AClient.prototype),
      operation: methodsOf(FileThreadStore.prototype),
    };
    const outside = ours.flatMap((sample) =>
      Object.entries(sample.labels)
        .filter(([name, label]) => (name === "le" ? !/^([0-9.]+|\+Inf)$/.test(label) : !closedSets[name]?.includes(label)))
        .map(([name, label]) => `${sample.name}{${name}="${label}"}`),
    );
    expect(outside).toEqual([]);
  });
});

describe("GET /metrics with the Redis store", () => {
  let redis: RedisServer;
  const services: Harness[] = [];
  let releaseHeldRun: () => void = () => undefined;
  const heldRun = new Promise<void>((resolve) => (releaseHeldRun = resolve));

  beforeAll(async () => {
    redis = await startRedisServer();
    // Two services on one Redis, in front of one kernel each: a thread one of them runs is busy for the other.
    for (let i = 0; i < 2; i++) {
      services.push(
        await startHarness(
          { holdLine: (turn, index, count) => (turn.text === "slow-chat" && index === count - 1 ? heldRun : undefined) },
          { authToken: TOKEN, redisUrl: redis.url },
        ),
      );
    }
  }, 30_000);
  afterAll(async () => {
    releaseHeldRun();
    for (const service of services) await service.close();
    await redis.stop();
  });

  const scrape = async (harness: Harness) => {
    const response = await fetch(`${harness.service.url}/metrics`, { headers: auth });
    expect(response.status).toBe(200);
    return samplesOf(await response.text());
  };
  const count = (samples: Sample[], name: string, labels: Record<string, string>) =>
    samples
      .filter((sample) => sample.name === name && Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted))
      .reduce((sum, sample) => sum + sample.value, 0);

  it("times the Redis store's operations and counts the lease another instance holds", async () => {
    const [first, second] = services as [Harness, Harness];
    const threadId = uniqueId("thread");
    const abort = new AbortController();
    const response = await fetch(first.service.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      signal: abort.signal,
      body: JSON.stringify(runInput("slow-chat", { threadId })),
    });
    const reader = response.body!.getReader();
    await reader.read(); // RUN_STARTED: the first service holds the thread's lease in Redis now

    const busy = await postRun(second.service.url, runInput("chat", { threadId }), auth);
    expect(busy.json).toMatchObject({ error: { code: "THREAD_BUSY" } });
    const elsewhere = await scrape(second);
    expect(count(elsewhere, "iac_code_agui_lease_conflicts_total", {})).toBe(1);
    expect(count(elsewhere, "iac_code_agui_state_store_duration_seconds_count", { operation: "tryAcquire", outcome: "ok" })).toBe(1);

    const here = await scrape(first);
    expect(count(here, "iac_code_agui_lease_conflicts_total", {})).toBe(0);
    expect(count(here, "iac_code_agui_state_store_duration_seconds_count", { operation: "load", outcome: "ok" })).toBeGreaterThanOrEqual(1);
    expect(count(here, "iac_code_agui_state_store_duration_seconds_count", { operation: "save", outcome: "ok" })).toBeGreaterThanOrEqual(1);
    abort.abort();
    await reader.cancel().catch(() => undefined);
  });
});
