/**
 * Traces through the real service (`dist/lib/main.js` in a child process,
 * configured by the standard OTEL_* variables only) in front of the replay
 * kernel, exported over OTLP/HTTP JSON to a receiver of the test's own:
 * the request's server span under the caller's `traceparent`, admission,
 * each kernel call and each store operation beneath it, ids as attributes,
 * and no user text, key or token anywhere in what was sent. With no OTEL_*
 * variable the service exports nothing, and the caller's trace still
 * reaches the kernel, and the SDK is not even loaded.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { startReplayKernel, type ReplayKernel } from "../../../lib/kernel/replay-kernel.js";
import { expectValidRun } from "../../support/agui.js";
import { PROJECT_ROOT } from "../../../lib/paths.js";
import { MAIN, startServiceProcess, type ServiceProcess } from "../../support/service-process.js";
import { postRun, runInput, script } from "../../support/service.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./otlp-receiver.js";

const USER_TEXT = "please-keep-this-user-sentence-private";
const ANSWER_TEXT = "an-answer-only-the-chat-may-see";
const LLM_KEY = "sk-llm-key-never-in-a-span";
const AUTH_TOKEN = "service-token-never-in-a-span";
const KERNEL_TOKEN = "kernel-token-never-in-a-span";

const CALLER_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01`;

const SERVER = 2;
const CLIENT = 3;

/** The OpenTelemetry SDK and its exporters, by where their modules resolve to (the API alone is not among them). */
const SDK_MODULES = /\/node_modules\/@opentelemetry\/(sdk-node|sdk-trace|exporter-trace-otlp-[a-z]+)\//;

/**
 * The modules the built service resolves up to its start record, configured
 * by `env`: preloaded with `spec/support/import-trace.mjs`, which writes each
 * one down.
 */
async function modulesAtStart(env: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "agui-traces-imports-"));
  const traceFile = path.join(dir, "resolved.txt");
  const child = spawn(process.execPath, ["--import", path.join(PROJECT_ROOT, "spec", "support", "import-trace.mjs"), MAIN], {
    env: {
      PATH: process.env.PATH ?? "",
      IMPORT_TRACE_FILE: traceFile,
      IAC_CODE_AGUI_HOST: "127.0.0.1",
      IAC_CODE_AGUI_PORT: "0",
      IAC_CODE_AGUI_STATE_DIR: path.join(dir, "state"),
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (/listening on/.test((JSON.parse(line) as { msg: string }).msg)) resolve();
    });
    void exited.then(() => reject(new Error("the service exited before listening")));
  });
  const resolved = readFileSync(traceFile, "utf8").split("\n").filter(Boolean);
  child.kill("SIGKILL");
  await exited;
  return resolved;
}

describe("traces", () => {
  const kernels: ReplayKernel[] = [];
  const services: ServiceProcess[] = [];
  const receivers: OtlpReceiver[] = [];
  afterEach(async () => {
    for (const service of services.splice(0)) {
      if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill("SIGKILL");
      await service.exited;
    }
    for (const kernel of kernels.splice(0)) await kernel.close();
    for (const receiver of receivers.splice(0)) await receiver.close();
  });

  /** A kernel that answers every turn with one line of text and completes. */
  const answeringKernel = async () => {
    const kernel = await startReplayKernel({
      timeScale: 0,
      requireToken: KERNEL_TOKEN,
      script: () => [script.task(), script.status("WORKING", undefined, ANSWER_TEXT), script.status("COMPLETED")],
    });
    kernels.push(kernel);
    return kernel;
  };

  const serviceOn = async (kernel: ReplayKernel, env: Record<string, string>) => {
    const service = await startServiceProcess({
      IAC_CODE_AGUI_A2A_URL: kernel.url,
      IAC_CODE_AGUI_A2A_TOKEN: KERNEL_TOKEN,
      IAC_CODE_AGUI_AUTH_TOKEN: AUTH_TOKEN,
      IAC_CODE_AGUI_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), "agui-traces-")),
      IAC_CODE_AGUI_ALLOWED_CWDS: os.tmpdir(),
      ...env,
    });
    services.push(service);
    return service;
  };

  const runWith = (url: string, headers: Record<string, string>) => {
    const input = runInput(USER_TEXT, {}, { llmApiKey: LLM_KEY });
    return { input, result: postRun(url, input, { authorization: `Bearer ${AUTH_TOKEN}`, ...headers }) };
  };

  const stopped = async (service: ServiceProcess) => {
    service.child.kill("SIGTERM");
    expect(await service.exited).toEqual({ code: 0, signal: null });
  };

  it("exports the request's span tree under the caller's trace, with ids and no user text", async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const kernel = await answeringKernel();
    const service = await serviceOn(kernel, {
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: "agui-under-test",
      // Sent only when the service shuts down: what arrives then was flushed by the drain, not by a timer.
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    });
    expect(service.records().find((record) => /listening on/.test(record.msg))).toMatchObject({ tracesExported: true });

    const { input, result } = runWith(service.url, { traceparent: TRACEPARENT, tracestate: "vendor=opaque" });
    const run = await result;
    await expectValidRun(run.events);
    expect(run.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    await stopped(service);

    expect(receiver.requests.every((request) => request.path === "/v1/traces" && request.contentType === "application/json")).toBe(true);
    const spans = receiver.spans().filter((span) => span.traceId === CALLER_TRACE_ID);
    const one = (predicate: (span: ReceivedSpan) => boolean) => {
      const found = spans.filter(predicate);
      expect(found).toHaveLength(1);
      return found[0]!;
    };

    const server = one((span) => span.kind === SERVER && span.attributes["http.route"] === "/");
    expect(server).toMatchObject({
      name: "POST /",
      parentSpanId: CALLER_SPAN_ID,
      attributes: {
        "http.request.method": "POST",
        "http.response.status_code": 200,
        "agui.thread_id": input.threadId,
        "agui.run_id": input.runId,
      },
      resource: { "service.name": "agui-under-test" },
    });

    const admission = one((span) => span.name === "admission");
    expect(admission.parentSpanId).toBe(server.spanId);
    expect(admission.attributes).toMatchObject({ "agui.thread_id": input.threadId, "agui.run_id": input.runId });
    const executionId = admission.attributes["iac_code.execution_id"];
    expect(typeof executionId).toBe("string");

    const kernelCall = one((span) => span.name === "a2a SendStreamingMessage");
    expect(kernelCall).toMatchObject({ kind: CLIENT, parentSpanId: server.spanId, attributes: { "a2a.method": "SendStreamingMessage" } });
    expect(kernelCall.attributes["a2a.task_id"]).toEqual(expect.any(String));
    // The kernel was told the trace, with this call's span as the parent, and the caller's tracestate.
    const sent = kernel.received.find((call) => call.method === "SendStreamingMessage")!;
    expect(sent.headers.traceparent).toBe(`00-${CALLER_TRACE_ID}-${kernelCall.spanId}-01`);
    expect(sent.headers.tracestate).toBe("vendor=opaque");

    // Store operations: the lease taken in admission, and the run's writes, each with its thread.
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const under = (span: ReceivedSpan, ancestor: ReceivedSpan): boolean => {
      const parent = byId.get(span.parentSpanId);
      return parent !== undefined && (parent === ancestor || under(parent, ancestor));
    };
    const acquire = one((span) => span.name === "state tryAcquire");
    expect(acquire.parentSpanId).toBe(admission.spanId);
    const saves = spans.filter((span) => span.name === "state save");
    expect(saves.length).toBeGreaterThan(0);
    for (const store of [acquire, ...saves]) {
      expect(store.attributes).toMatchObject({ "state.operation": expect.any(String), "agui.thread_id": input.threadId });
      expect(under(store, server)).toBe(true);
    }

    // Nothing the user wrote or the model answered, and no key or token, in anything the exporter sent.
    const sentText = receiver.bodies.join("\n");
    for (const secret of [USER_TEXT, ANSWER_TEXT, LLM_KEY, AUTH_TOKEN, KERNEL_TOKEN]) expect(sentText).not.toContain(secret);
  });

  it("with no OTEL variables exports nothing, and hands the caller's traceparent on to the kernel", async () => {
    const kernel = await answeringKernel();
    const service = await serviceOn(kernel, {});
    expect(service.records().find((record) => /listening on/.test(record.msg))).toMatchObject({ tracesExported: false });

    const traced = await runWith(service.url, { traceparent: TRACEPARENT }).result;
    await expectValidRun(traced.events);
    const untraced = await runWith(service.url, {}).result;
    await expectValidRun(untraced.events);
    await stopped(service);

    const calls = kernel.received.filter((call) => call.method === "SendStreamingMessage");
    expect(calls).toHaveLength(2);
    // No span of its own is made: the kernel's parent is the caller's span, as the caller sent it.
    expect(calls[0]!.headers.traceparent).toBe(TRACEPARENT);
    expect(calls[1]!.headers.traceparent).toBeUndefined();
  });

  it("loads the SDK only when traces are asked for", async () => {
    expect((await modulesAtStart({})).filter((url) => SDK_MODULES.test(url))).toEqual([]);
    // The control: the same pattern finds the SDK in a service that exports (to a port nobody listens on; nothing is sent).
    const exporting = await modulesAtStart({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" });
    expect(exporting.filter((url) => SDK_MODULES.test(url)).length).toBeGreaterThan(0);
  });
});
