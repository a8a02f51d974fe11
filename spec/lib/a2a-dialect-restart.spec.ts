/**
 * A kernel the service runs (`IAC_CODE_AGUI_KERNEL_COMMAND`) that comes back
 * from a restart speaking another dialect: the service reads its card again
 * when it is ready, `/health` names the new agent, and the next run talks
 * to it in its dialect. The demo kernel (`dist/lib/kernel/main.js`, built by
 * `npm test`) chooses its dialect from a file the test rewrites.
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import { PROJECT_ROOT } from "../../lib/paths.js";
import type { KernelEvent } from "../../lib/kernel-process/supervisor.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, runInput, testConfig, waitFor } from "../support/service.js";

const DEMO_KERNEL = path.join(PROJECT_ROOT, "dist", "lib", "kernel", "main.js");

describe("a kernel that restarts in another dialect", () => {
  let service: RunningService;
  const events: KernelEvent[] = [];
  const dialectFile = path.join(mkdtempSync(path.join(os.tmpdir(), "agui-dialect-")), "dialect");

  beforeAll(async () => {
    if (!existsSync(DEMO_KERNEL)) throw new Error(`${DEMO_KERNEL} is missing: run \`npm run build\` (npm test does)`);
    writeFileSync(dialectFile, "1.0");
    const command = `exec "${process.execPath}" "${DEMO_KERNEL}" --port {port} --time-scale 0 --dialect "$(cat "${dialectFile}")"`;
    service = await startService(testConfig({ a2aUrl: undefined, kernelCommand: ["sh", "-c", command] }), {
      kernelSupervision: {
        restart: { initialDelayMs: 50, maxDelayMs: 100, resetAfterMs: 60_000 },
        onEvent: (event) => events.push(event),
      },
    });
  });
  afterAll(() => service?.close());

  const health = async () => (await (await fetch(`${service.url}/health`)).json()) as { executionKernel: string; agent?: unknown };

  /** `/health` as soon as it names `executionKernel`, or as it is after 5 s. */
  async function healthOnceItSays(executionKernel: string) {
    const deadline = Date.now() + 5000;
    for (;;) {
      const answer = await health();
      if (answer.executionKernel === executionKernel || Date.now() > deadline) return answer;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it("reads the card again once the restarted kernel is ready, and runs in its dialect", async () => {
    expect(await health()).toMatchObject({ executionKernel: "a2a-1.0", agent: { a2aDialect: "1.0" } });

    writeFileSync(dialectFile, "0.3");
    process.kill(service.kernelProcess!.pid!, "SIGKILL");
    await waitFor(() => events.filter((event) => event.type === "ready").length === 2, 15_000);
    // The card is read again as the kernel is ready, and answered a moment later: polled, as waitFor does.
    const now = await healthOnceItSays("a2a-0.3");
    expect(now).toMatchObject({ executionKernel: "a2a-0.3", agent: { a2aDialect: "0.3" } });

    const { events: run } = await postRun(service.url, runInput("plain-chat"));
    await expectValidRun(run);
    expect(run.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: "success" } });
  });
});
