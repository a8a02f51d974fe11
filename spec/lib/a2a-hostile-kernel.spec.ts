/**
 * A hostile or broken kernel, through the real service: whatever it sends,
 * the run it serves ends with RUN_ERROR and its task is cancelled, while the
 * process and every other run go on (issue 11, the A2A edge).
 */
import type { ServerResponse } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@jest/globals";
import type { AGUIEvent } from "@ag-ui/core";
import fc from "fast-check";
import { config as rxjsConfig } from "rxjs";
import { MAX_KERNEL_JSON_DEPTH, parseJson } from "../../lib/a2a/rpc-errors.js";
import { loadConfig, type Config } from "../../lib/config.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { startHostileKernel, type HostileKernel } from "../support/hostile-kernel.js";
import { postRun, runInput, testConfig, waitFor } from "../support/service.js";

type Shape = "objects" | "arrays" | "mixed";

/**
 * JSON text `levels` containers deep (JSON.stringify could not write the
 * deep ones): `{"d":{"d":…{}}}`, `[[…[]]]`, or both in turn, each level with
 * a shallow sibling before and after the deep branch, so a check that
 * looked at one branch only would miss it.
 */
function nestedJson(levels: number, shape: Shape = "objects"): string {
  let open = "";
  let close = "";
  for (let level = 1; level < levels; level++) {
    const isArray = shape === "arrays" || (shape === "mixed" && level % 2 === 0);
    open += isArray ? '[1,"x",' : '{"a":1,"d":';
    close = (isArray ? ",{}]" : ',"z":[]}') + close;
  }
  return open + "{}" + close;
}

/** Levels around a data part's value in an artifact update frame: envelope, result, update, artifact, parts, part. */
const ARTIFACT_FRAME_LEVELS = 6;

/** An artifact update whose one data part nests `levels` deep, as JSON text. */
const deepArtifact = (taskId: string, contextId: string, levels: number, shape: Shape = "objects") =>
  `{"artifactUpdate":{"taskId":"${taskId}","contextId":"${contextId}","artifact":{"artifactId":"a1","parts":[{"data":${nestedJson(levels, shape)}}]}}}`;

const shapes = fc.constantFrom<Shape>("objects", "arrays", "mixed");

describe("parseJson, which reads every kernel answer", () => {
  it(`takes JSON up to ${MAX_KERNEL_JSON_DEPTH} levels deep and refuses anything deeper with A2A_PROTOCOL_ERROR`, () => {
    const depths = fc.oneof(
      fc.integer({ min: 1, max: 2 * MAX_KERNEL_JSON_DEPTH }),
      fc.integer({ min: MAX_KERNEL_JSON_DEPTH - 2, max: MAX_KERNEL_JSON_DEPTH + 2 }),
      fc.integer({ min: 1, max: 20_000 }),
    );
    fc.assert(
      fc.property(depths, shapes, (levels, shape) => {
        let refusal: unknown;
        try {
          parseJson(nestedJson(levels, shape));
        } catch (error) {
          refusal = error;
        }
        if (levels <= MAX_KERNEL_JSON_DEPTH) expect(refusal).toBeUndefined();
        else expect(refusal).toEqual(expect.objectContaining({ code: "A2A_PROTOCOL_ERROR" }));
      }),
      { numRuns: 300 },
    );
  });

  it("takes a shallow answer whose strings hold more brackets than the depth limit, short or long", () => {
    for (const filler of ["{[".repeat(MAX_KERNEL_JSON_DEPTH), "{[".repeat(MAX_KERNEL_JSON_DEPTH) + "x".repeat(8192)]) {
      expect(parseJson(JSON.stringify({ jsonrpc: "2.0", result: { text: filler } }))).toEqual({ jsonrpc: "2.0", result: { text: filler } });
    }
  });
});

/** The test config, with the documented default of any setting it does not name yet (settings are being added). */
const serviceConfig = (overrides: Partial<Config>): Config => ({ ...loadConfig([], {}), ...testConfig(overrides) });

const errorCodeOf = (events: AGUIEvent[]) => (events.at(-1) as { code?: string } | undefined)?.code;

describe("a hostile kernel, through the service", () => {
  let kernel: HostileKernel;
  let service: RunningService;
  // An error rxjs could hand nowhere: in the service's process it would be an uncaught exception.
  const unhandled: unknown[] = [];

  beforeAll(async () => {
    rxjsConfig.onUnhandledError = (error) => unhandled.push(error);
    kernel = await startHostileKernel();
    service = await startService(serviceConfig({ a2aUrl: kernel.url }));
  });
  afterAll(async () => {
    rxjsConfig.onUnhandledError = null;
    await service.close();
    await kernel.close();
  });
  afterEach(() => expect(unhandled).toEqual([]));

  describe("a frame nested thousands of levels deep", () => {
    it.each([5_000, 200_000])(
      "ends its run with A2A_PROTOCOL_ERROR and cancels its task; a run beside it finishes (%i levels)",
      async (levels) => {
        const text = `deep ${levels}`;
        let taskId = "";
        let release: () => void = () => {};
        const sideRunStarted = new Promise<void>((resolve) => (release = resolve));
        kernel.script(text, ({ startSse, res, opening, rawRecord, taskId: id, contextId }) => {
          taskId = id;
          startSse();
          res.write(opening());
          // Sent once the other run is under way, so the failure happens while it streams.
          void sideRunStarted.then(() => res.write(rawRecord(deepArtifact(id, contextId, levels))));
        });
        let sideTask = "";
        kernel.script(`beside ${levels}`, ({ startSse, res, opening, record, taskId: id, contextId }) => {
          sideTask = id;
          startSse();
          res.write(opening());
          release();
          // The rest once the deep run has ended: the side run was streaming all along.
          void waitFor(() => kernel.calls("CancelTask").some((call) => call.params.id === taskId)).finally(() => {
            const message = { messageId: `${id}-m`, role: "ROLE_AGENT", parts: [{ text: "still here" }] };
            res.end(
              record({ statusUpdate: { taskId: id, contextId, status: { state: "TASK_STATE_WORKING", message } } }) +
                record({ statusUpdate: { taskId: id, contextId, status: { state: "TASK_STATE_COMPLETED" } } }),
            );
          });
        });

        const [deep, beside] = await Promise.all([
          postRun(service.url, runInput(text)),
          postRun(service.url, runInput(`beside ${levels}`)),
        ]);

        await expectValidRun(deep.events);
        expect(deep.events.at(-1)?.type).toBe("RUN_ERROR");
        expect(errorCodeOf(deep.events)).toBe("A2A_PROTOCOL_ERROR");
        await waitFor(() => kernel.calls("CancelTask").some((call) => call.params.id === taskId));

        await expectValidRun(beside.events);
        expect(beside.events.at(-1)?.type).toBe("RUN_FINISHED");
        expect(beside.events.some((event) => (event as { delta?: string }).delta === "still here")).toBe(true);
        expect(kernel.calls("CancelTask").some((call) => call.params.id === sideTask)).toBe(false);
      },
    );

    it("ends the run with A2A_PROTOCOL_ERROR exactly when the frame passes the limit, whatever its depth and shape", async () => {
      let round = 0;
      const depths = fc.oneof(
        fc.integer({ min: 1, max: MAX_KERNEL_JSON_DEPTH + 10 }),
        fc.constant(MAX_KERNEL_JSON_DEPTH - ARTIFACT_FRAME_LEVELS),
        fc.constant(MAX_KERNEL_JSON_DEPTH - ARTIFACT_FRAME_LEVELS + 1),
        fc.integer({ min: 1, max: 100_000 }),
      );
      await fc.assert(
        fc.asyncProperty(depths, shapes, async (levels, shape) => {
          const text = `fuzzed depth ${++round}`;
          let taskId = "";
          kernel.script(text, ({ startSse, res, opening, rawRecord, record, taskId: id, contextId }) => {
            taskId = id;
            startSse();
            res.end(
              opening() +
                rawRecord(deepArtifact(id, contextId, levels, shape)) +
                record({ statusUpdate: { taskId: id, contextId, status: { state: "TASK_STATE_COMPLETED" } } }),
            );
          });
          const { events } = await postRun(service.url, runInput(text));
          await expectValidRun(events);
          if (ARTIFACT_FRAME_LEVELS + levels > MAX_KERNEL_JSON_DEPTH) {
            expect(errorCodeOf(events)).toBe("A2A_PROTOCOL_ERROR");
            await waitFor(() => kernel.calls("CancelTask").some((call) => call.params.id === taskId));
          } else {
            expect(events.at(-1)?.type).toBe("RUN_FINISHED");
            expect(events.some((event) => event.type === "CUSTOM")).toBe(true);
          }
        }),
        { numRuns: 25 },
      );
    });
  });
});

/**
 * Writes `prefix`, then `x`s in 64 KiB chunks as fast as the socket takes
 * them, until the service closes the connection or `limit` bytes are out
 * (then `suffix`, and the end). Resolves with the bytes written.
 */
function pour(res: ServerResponse, prefix: string, limit: number, suffix = ""): Promise<number> {
  const chunk = "x".repeat(64 * 1024);
  let written = 0;
  const write = (text: string) => {
    written += Buffer.byteLength(text);
    return res.write(text);
  };
  return new Promise((resolve) => {
    res.once("close", () => resolve(written));
    const pump = () => {
      while (!res.destroyed && written < limit) if (!write(chunk)) return void res.once("drain", pump);
      if (!res.destroyed) res.end(suffix, () => resolve(written));
    };
    write(prefix);
    pump();
  });
}

const MiB = 1024 * 1024;

describe("what a kernel may send, through the service", () => {
  const CAP = MiB;
  // What the kernel may have written past the cap when the service hangs up: the socket buffers of both ends.
  const SLACK = 16 * MiB;
  const ENDLESS = 64 * MiB;
  let kernel: HostileKernel;
  let service: RunningService;

  beforeAll(async () => {
    kernel = await startHostileKernel();
    service = await startService(serviceConfig({ a2aUrl: kernel.url, maxKernelRecordBytes: CAP, maxKernelResponseBytes: CAP }));
  });
  afterAll(async () => {
    await service.close();
    await kernel.close();
  });

  it("ends a run whose SSE record never ends with A2A_PROTOCOL_ERROR once it passes IAC_CODE_AGUI_MAX_KERNEL_RECORD_BYTES, and cancels its task", async () => {
    let taskId = "";
    let poured: Promise<number> = Promise.resolve(0);
    kernel.script("endless record", ({ startSse, res, opening, taskId: id, contextId }) => {
      taskId = id;
      startSse();
      const statusPrefix = `data: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"${id}","contextId":"${contextId}","status":{"state":"TASK_STATE_WORKING"}},"padding":"`;
      poured = pour(res, opening() + statusPrefix, ENDLESS, '"}}\n\n');
    });
    const { events } = await postRun(service.url, runInput("endless record"));
    await expectValidRun(events);
    expect(errorCodeOf(events)).toBe("A2A_PROTOCOL_ERROR");
    await waitFor(() => kernel.calls("CancelTask").some((call) => call.params.id === taskId));
    expect(await poured).toBeLessThan(CAP + SLACK);
  });

  it("takes records up to the limit, however they are split into chunks", async () => {
    kernel.script("big records", ({ startSse, res, opening, record, taskId: id, contextId }) => {
      startSse();
      // Padding the projection leaves out, so the client is not sent megabytes it would have to read.
      const working = (padding: string) => ({
        statusUpdate: { taskId: id, contextId, status: { state: "TASK_STATE_WORKING" }, metadata: { padding } },
      });
      const nearLimit = record(working(""));
      const body =
        opening() +
        record(working("a".repeat(CAP - Buffer.byteLength(nearLimit)))) +
        record(working("b".repeat(CAP / 2))) +
        record(working("c".repeat(CAP - Buffer.byteLength(nearLimit)))) +
        record({ statusUpdate: { taskId: id, contextId, status: { state: "TASK_STATE_COMPLETED" } } });
      // Odd-sized pieces, so record ends fall inside chunks and across their edges.
      for (let at = 0; at < body.length; at += 65_537) res.write(body.slice(at, at + 65_537));
      res.end();
    });
    const { events } = await postRun(service.url, runInput("big records"));
    await expectValidRun(events);
    expect(events.at(-1)?.type).toBe("RUN_FINISHED");
  });

  it("ends a run whose kernel answers with an endless JSON body with A2A_PROTOCOL_ERROR once it passes IAC_CODE_AGUI_MAX_KERNEL_RESPONSE_BYTES, and cancels its task", async () => {
    let poured: Promise<number> = Promise.resolve(0);
    let contextId = "";
    kernel.script("endless json", ({ res, taskId, contextId: context }) => {
      contextId = context;
      res.writeHead(200, { "Content-Type": "application/json" });
      const prefix = `{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"${taskId}","contextId":"${context}","status":{"state":"TASK_STATE_WORKING"}},"padding":"`;
      poured = pour(res, prefix, ENDLESS, '"}}');
    });
    // The run never learned its task: the service looks it up in the thread's context.
    kernel.answer("ListTasks", (request, res) => {
      if (request.params.contextId !== contextId) return false;
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: request.id,
          result: { tasks: [{ id: "listed-task", contextId, status: { state: "TASK_STATE_WORKING" } }], nextPageToken: "" },
        }),
      );
      return true;
    });
    const { events } = await postRun(service.url, runInput("endless json"));
    await expectValidRun(events);
    expect(errorCodeOf(events)).toBe("A2A_PROTOCOL_ERROR");
    await waitFor(() => kernel.calls("CancelTask").some((call) => call.params.id === "listed-task"));
    expect(await poured).toBeLessThan(CAP + SLACK);
  });
});
