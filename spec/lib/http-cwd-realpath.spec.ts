/**
 * The kernel is told a thread's workspace as the directory it really is
 * (issue 21, item 14): a client that names it through a symlink sends the
 * kernel the resolved path, in each message's `metadata.iac_code.cwd` and in
 * the cold-resume preflight, as the reference adapter resolves it. The
 * kernel keys its sessions on that path.
 */
import { mkdtempSync, realpathSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type Interrupt } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { interruptScript, permissionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, startHarness, uniqueId, type Harness } from "../support/service.js";

type Sent = { message: { metadata: { iac_code: { cwd: string } } } };

describe("the workspace the kernel is told", () => {
  let harness: Harness;
  let real: string;
  let link: string;
  beforeAll(async () => {
    harness = await startHarness({ script: interruptScript("permission", permissionProjection) });
    const base = mkdtempSync(path.join(os.tmpdir(), "agui-cwd-"));
    real = realpathSync(mkdtempSync(path.join(base, "workspace-")));
    link = path.join(base, "linked");
    symlinkSync(real, link, "dir");
  });
  afterAll(() => harness.close());
  const sentCwds = () =>
    harness.kernel.received
      .filter((call) => call.method === "SendStreamingMessage")
      .map((call) => (call.params as Sent).message.metadata.iac_code.cwd);

  it("is the real path of a cwd named through a symlink: in the turn's metadata, the answer's, and ensure-restored", async () => {
    const first = runInput("permission", {}, { cwd: link });
    const paused = await postRun(harness.service.url, first);
    await expectValidRun(paused.events);
    const [interrupt] = (paused.events.at(-1) as { outcome: { interrupts: Interrupt[] } }).outcome.interrupts;
    expect(sentCwds().at(-1)).toBe(real);

    const resumed = await postRun(harness.service.url, {
      ...first,
      runId: uniqueId("run"),
      resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { decision: "allow_once" } }],
    });
    await expectValidRun(resumed.events);
    expect(resumed.events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED });
    expect(sentCwds().at(-1)).toBe(real);
    expect((harness.kernel.restores.at(-1)!.body as { cwd: string }).cwd).toBe(real);
  });
});
