/**
 * `npm run soak`: a real kernel process SIGKILLed at a random moment of a
 * run (`npm test` cuts the connection instead, in
 * `spec/properties/kernel-killed.spec.ts`). The client gets RUN_ERROR with
 * every span closed; once a kernel is back on the same address, the thread
 * takes its next message (no lease, execution or pending answer left
 * behind), and the new kernel has no task of the old run running.
 */
import { fork, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { A2AClient } from "../lib/a2a/client.js";
import { SESSION_EVENT } from "../operators/announce-session.js";
import { startService, type RunningService } from "../lib/server.js";
import { expectValidRun } from "../spec/support/agui.js";
import { postRun, runInput, testConfig } from "../spec/support/service.js";

const KERNEL = new URL("./kernel-child.mjs", import.meta.url).pathname;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The long-run kernel on `port`, ready. */
async function startKernel(port: number): Promise<ChildProcess> {
  const child = fork(KERNEL, [String(port), "--long"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  await new Promise((resolve, reject) => {
    child.once("message", resolve);
    child.once("exit", (code) => reject(new Error(`kernel exited with ${code} before it was ready`)));
  });
  return child;
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
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
        const { status, events } = await postRun(service.url, input);
        await killed;
        expect(status).toBe(200);
        await expectValidRun(events);
        expect(events.at(-1)).toMatchObject({ type: "RUN_ERROR", code: "A2A_UNAVAILABLE" });

        kernel = await startKernel(port);
        const next = await postRun(service.url, { ...runInput("again"), threadId: input.threadId });
        expect(next.status).toBe(200);
        await expectValidRun(next.events);
        expect(next.events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
        // Of the thread's context, the restarted kernel runs nothing: it knows only the run it was just given, and that one is done.
        const session = next.events.find((event) => event.type === "CUSTOM" && event.name === SESSION_EVENT) as { value: { contextId: string } } | undefined;
        const { tasks } = (await new A2AClient({ url: `http://127.0.0.1:${port}/` }).listTasks(session!.value.contextId)) as { tasks: Array<{ status: { state: string } }> };
        expect(tasks.map((task) => task.status.state)).toEqual(["TASK_STATE_COMPLETED"]);
      }),
      { numRuns: 25 },
    );
  });
});
