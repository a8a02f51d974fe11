/**
 * Real parts for HTTP tests: an A2A 1.0 kernel built on @a2a-js/sdk (the
 * replay kernel, fed inline scripts or fixtures) and the service itself on
 * loopback. Streams are read as raw text and then parsed by @ag-ui/client's
 * own SSE parser, so a framing mistake fails the test like it would fail a
 * real client.
 */
import os from "node:os";
import { mkdtempSync } from "node:fs";
import path from "node:path";
import { runHttpRequest, transformHttpEventStream } from "@ag-ui/client";
import type { AGUIEvent } from "@ag-ui/core";
import { Observable, lastValueFrom, toArray, type Subscribable } from "rxjs";
import type { Config } from "../../lib/config.js";
import { startReplayKernel, type FixtureLine, type ReplayKernel, type ReplayKernelOptions } from "../../lib/kernel/replay-kernel.js";
import { startService, type RunningService, type ServiceOptions } from "../../lib/server.js";

export interface Harness {
  kernel: ReplayKernel;
  service: RunningService;
  stateDir: string;
  close(): Promise<void>;
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    host: "127.0.0.1",
    port: 0,
    a2aUrl: undefined,
    a2aToken: undefined,
    authToken: undefined,
    // Made only when not given, so a caller's own directory leaves no empty one behind.
    stateDir: overrides.stateDir ?? mkdtempSync(path.join(os.tmpdir(), "agui-state-")),
    allowedCwds: [os.tmpdir()],
    heartbeatMs: 15_000,
    interruptTtlS: 540,
    recordDir: undefined,
    disconnectGraceMs: 0,
    clientStallS: 120,
    drainS: 10,
    allowedHosts: [],
    allowedOrigins: [],
    bodyTimeoutS: 30,
    maxConnections: 1024,
    maxKernelRecordBytes: 16 * 1024 * 1024,
    maxKernelResponseBytes: 16 * 1024 * 1024,
    ...overrides,
  };
}

export async function startHarness(
  kernelOptions: ReplayKernelOptions = {},
  config: Partial<Config> = {},
  serviceOptions: ServiceOptions = {},
): Promise<Harness> {
  const kernel = await startReplayKernel({ timeScale: 0, ...kernelOptions });
  const serviceConfig = testConfig({ a2aUrl: kernel.url, ...config });
  const service = await startService(serviceConfig, serviceOptions);
  return {
    kernel,
    service,
    stateDir: serviceConfig.stateDir,
    async close() {
      await service.close();
      await kernel.close();
    },
  };
}

let counter = 0;
export const uniqueId = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

/**
 * The system's temporary directory: what must outlive a spec file, or what a service allows by default. Not
 * `os.tmpdir()` while a file runs, which is that file's own and goes with it (`jest-environment.mjs`).
 */
export const SYSTEM_TMPDIR = process.env.AGUI_SPEC_SYSTEM_TMPDIR ?? os.tmpdir();

/** A valid RunAgentInput with one user message; `overrides` replace top-level fields. */
export function runInput(text: string, overrides: Record<string, unknown> = {}, iacCode: Record<string, unknown> = {}) {
  return {
    threadId: uniqueId("thread"),
    runId: uniqueId("run"),
    state: {},
    messages: [{ id: uniqueId("msg"), role: "user", content: text }],
    tools: [],
    context: [],
    forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir(), ...iacCode } },
    ...overrides,
  };
}

export interface RunResult {
  status: number;
  contentType: string | null;
  raw: string;
  events: AGUIEvent[];
  json: unknown;
}

/** POSTs a run and reads the whole answer. */
export async function postRun(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RunResult> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const raw = await response.text();
  const contentType = response.headers.get("content-type");
  if (!contentType?.startsWith("text/event-stream")) {
    return { status: response.status, contentType, raw, events: [], json: raw ? JSON.parse(raw) : undefined };
  }
  const replay = () => Promise.resolve(new Response(raw, { status: response.status, headers: response.headers }));
  // @ag-ui/client bundles its own rxjs: adopt its Observable through the interop contract.
  const parsed = transformHttpEventStream(runHttpRequest(replay)) as unknown as Subscribable<AGUIEvent>;
  const events = await lastValueFrom(new Observable<AGUIEvent>((subscriber) => parsed.subscribe(subscriber)).pipe(toArray()));
  return { status: response.status, contentType, raw, events, json: undefined };
}

/** Script lines for the replay kernel, with the task frame it needs first. */
export const script = {
  task: (): FixtureLine => ({
    delayMs: 0,
    frame: { task: { id: "${taskId}", contextId: "${contextId}", status: { state: "TASK_STATE_SUBMITTED" } } },
  }),
  status: (state: string, iacCode?: Record<string, unknown>, text?: string): FixtureLine => ({
    delayMs: 0,
    frame: {
      statusUpdate: {
        taskId: "${taskId}",
        contextId: "${contextId}",
        status: {
          state: `TASK_STATE_${state}`,
          ...(text === undefined ? {} : { message: { messageId: "${taskId}-message", role: "ROLE_AGENT", parts: [{ text }] } }),
        },
        ...(iacCode ? { metadata: { iac_code: iacCode } } : {}),
      },
    },
  }),
};

/**
 * Polls for something the test cannot await directly, such as a request the
 * service sends after a stream ended. The deadline only says when to give
 * up: long enough that a loaded machine is not taken for a failure.
 */
export async function waitFor(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
