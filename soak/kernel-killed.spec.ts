/**
 * `npm run soak`: a real kernel process SIGKILLed at a random moment of a
 * run (`npm test` cuts the connection instead, in
 * `spec/properties/kernel-killed.spec.ts`). The client gets RUN_ERROR with
 * every span closed; once a kernel is back on the same address, the thread
 * takes its next message (no lease, execution or pending answer left
 * behind). The killed kernel's tasks die with it; that a kernel which
 * survives a cut has its task cancelled is the property spec's to show.
 */
import type { ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { startService, type RunningService } from "../lib/server.js";
import { expectValidRun } from "../spec/support/agui.js";
import { postRun, runInput, testConfig } from "../spec/support/service.js";
import { forkKernel } from "./kernel-process.js";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The long-run kernel on `port`, ready. */
async function startKernel(port: number): Promise<ChildProcess> {
  return (await forkKernel([String(port), "--long"])).child;
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

describe("a kernel process killed mid-run", () => {
  let port: number;
  let kernel: ChildProcess;
  let service: RunningService;
  beforeAll(async () => {
    port = await freePort();
    kernel = await startKernel(port);
    service = await startService(testConfig({ a2aUrl: `http://127.0.0.1:${port}/` }));
  });
  afterAll(async () => {
    await service.close();
    kernel.kill("SIGTERM");
  });

  it("ends the run in RUN_ERROR with every span closed, and the thread takes its next message from the restarted kernel", async () => {
    // The long run sends a frame every 25 ms for 200 ms: the kill lands anywhere from before the first frame to after the last.
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 260 }), async (killAfterMs) => {
        const input = runInput("long");
        const killed = new Promise<void>((resolve) => setTimeout(() => void killHard(kernel).then(resolve), killAfterMs));
        try {
          const { status, events } = await postRun(service.url, input);
          await killed;
          expect(status).toBe(200);
          await expectValidRun(events);
          expect(events.at(-1)).toMatchObject({ type: "RUN_ERROR", code: "A2A_UNAVAILABLE" });
        } finally {
          // Whatever failed above, the next case (fast-check shrinks a failure by re-running) needs a live kernel.
          await killed;
          kernel = await startKernel(port);
        }
        const next = await postRun(service.url, { ...runInput("again"), threadId: input.threadId });
        expect(next.status).toBe(200);
        await expectValidRun(next.events);
        expect(next.events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
      }),
      { numRuns: 25 },
    );
  });
});
