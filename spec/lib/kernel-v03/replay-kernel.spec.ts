import { describe, expect, it } from "@jest/globals";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { AgentCard } from "a2a-sdk-v03";
import { A2AClient } from "a2a-sdk-v03/client";
import { fillPlaceholders } from "../../../lib/fixtures/placeholders.js";
import { listFixtures, loadFixture } from "../../../lib/kernel/fixtures.js";
import { V03_FRAMES } from "../../../lib/kernel-v03/frames.js";
import { FIXTURES_V03_DIR, LEGACY_AGENT_CARD_PATH } from "../../../lib/kernel-v03/replay-kernel.js";
import { artifactText, collect, getTask, kernelsClosedAfterEach, taskIdOf, untimed, userMessage, type StreamEvent } from "./a2a-v03.js";

const start = kernelsClosedAfterEach();

/** What the fixture's first turn records, for the live task. */
async function recorded(name: string, ids: { taskId: string; contextId: string }): Promise<unknown[]> {
  const [first] = await loadFixture(FIXTURES_V03_DIR, name, V03_FRAMES);
  return first!.lines.flatMap((line) => (line.frame === undefined ? [] : [fillPlaceholders(line.frame, ids)]));
}

const contextIdOf = (events: readonly StreamEvent[]) => (events[0]?.kind === "task" ? events[0].contextId : "");

describe("startReplayKernelV03", () => {
  it("serves a 0.3 agent card, with a name and version, at agent-card.json and at the older agent.json", async () => {
    const { kernel } = await start();
    for (const cardPath of [".well-known/agent-card.json", LEGACY_AGENT_CARD_PATH]) {
      const card = (await (await fetch(new URL(cardPath, kernel.url))).json()) as AgentCard;
      expect(card).toMatchObject({ protocolVersion: "0.3.0", url: kernel.url, capabilities: { streaming: true } });
      expect(card.name).toEqual(expect.any(String));
      expect(card.version).toEqual(expect.any(String));
    }
    const legacy = await A2AClient.fromCardUrl(new URL(LEGACY_AGENT_CARD_PATH, kernel.url).href);
    const { events } = await collect(legacy.sendMessageStream(userMessage("plain-chat")));
    expect(events.at(-1)).toMatchObject({ kind: "status-update", status: { state: "completed" }, final: true });
  });

  it("has the fixtures the issue asks for, each opening with a # description line", async () => {
    const names = await listFixtures(FIXTURES_V03_DIR);
    expect(names).toEqual(expect.arrayContaining(["plain-chat", "ask-input", "fails", "drops", "data-and-file", "slow-chat"]));
    for (const name of names) {
      const text = await readFile(path.join(FIXTURES_V03_DIR, `${name}.jsonl`), "utf8");
      expect(text.startsWith("# ")).toBe(true);
      expect(text).not.toContain("iac_code");
    }
  });

  it("lists its fixtures for the sandbox, as the 1.0 demo kernel does", async () => {
    const { kernel } = await start();
    const { fixtures } = (await (await fetch(new URL("iac-code/fixtures", kernel.url))).json()) as {
      fixtures: { name: string; description: string }[];
    };
    expect(fixtures.map((fixture) => fixture.name)).toEqual(await listFixtures(FIXTURES_V03_DIR));
    expect(fixtures.find((fixture) => fixture.name === "ask-input")?.description).toMatch(/^An agent that asks for input/);
  });

  it.each(["plain-chat", "fails", "data-and-file", "slow-chat"])(
    "streams %s frame by frame, with the live ids, over message/stream",
    async (name) => {
      const { kernel, client } = await start();
      const { events, error } = await collect(client.sendMessageStream(userMessage(name)));
      expect(error).toBeUndefined();
      const ids = { taskId: taskIdOf(events), contextId: contextIdOf(events) };
      expect(untimed(events)).toEqual(await recorded(name, ids));
      // The task opens with the user's message in its history; every status has its time.
      expect(events[0]).toMatchObject({ history: [expect.objectContaining({ role: "user" })] });
      for (const event of events) if (event.kind === "status-update") expect(Date.parse(event.status.timestamp!)).not.toBeNaN();
      expect(events.at(-1)).toMatchObject({ kind: "status-update", final: true });
      expect(kernel.received.map((call) => call.method)).toEqual(["message/stream"]);
    },
  );

  it("ends plain-chat completed, and tasks/get shows the streamed artifact whole", async () => {
    const { client } = await start();
    const { events } = await collect(client.sendMessageStream(userMessage("how are you?")));
    const task = await getTask(client, taskIdOf(events), 10);
    expect(task.status.state).toBe("completed");
    expect(artifactText(task)).toBe("Hi! This is a plain A2A 0.3 agent built on @a2a-js/sdk 0.3, answering through the AG-UI service.");
    expect(task.history?.map((message) => message.role)).toEqual(["user", "agent"]);
  });

  it("ends fails failed, with a message saying why", async () => {
    const { client } = await start();
    const { events } = await collect(client.sendMessageStream(userMessage("fails")));
    expect(events.at(-1)).toMatchObject({
      kind: "status-update",
      final: true,
      status: { state: "failed", message: { role: "agent", parts: [{ kind: "text", text: expect.stringContaining("refused") }] } },
    });
    expect((await getTask(client, taskIdOf(events))).status.state).toBe("failed");
  });

  it("sends data-and-file's data and file parts in one artifact, and completes with no text", async () => {
    const { client } = await start();
    const { events } = await collect(client.sendMessageStream(userMessage("/data-and-file")));
    const task = await getTask(client, taskIdOf(events));
    expect(task.status).toMatchObject({ state: "completed" });
    expect(task.status.message).toBeUndefined();
    expect(task.artifacts).toHaveLength(1);
    const [data, file] = task.artifacts![0]!.parts;
    expect(data).toMatchObject({ kind: "data", data: { stacks: expect.any(Array) } });
    expect(file).toMatchObject({ kind: "file", file: { name: "report.csv", mimeType: "text/csv" } });
    const bytes = file?.kind === "file" && "bytes" in file.file ? file.file.bytes : "";
    expect(Buffer.from(bytes, "base64").toString("utf8")).toContain("web,CREATE_COMPLETE");
  });

  it("answers message/send with the finished task, as the SDK does", async () => {
    const { client } = await start();
    const reply = await client.sendMessage(userMessage("plain-chat"));
    expect("result" in reply && reply.result).toMatchObject({ kind: "task", status: { state: "completed" } });
  });

  it("opens a new task's stream with a task when the fixture does not, and says so when a turn has nothing recorded", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "fixtures-v03-"));
    const ask = { kind: "status-update", taskId: "${taskId}", contextId: "${contextId}", status: { state: "input-required" }, final: true };
    await writeFile(path.join(dir, "plain-chat.jsonl"), `# asks, then has nothing for the answer\n${JSON.stringify({ frame: ask })}\n`);
    const { client } = await start({ fixturesDir: dir });
    const { events } = await collect(client.sendMessageStream(userMessage("anything")));
    const ids = { taskId: taskIdOf(events), contextId: contextIdOf(events) };
    expect(untimed(events)).toEqual([
      { kind: "task", id: ids.taskId, contextId: ids.contextId, status: { state: "submitted" } },
      { ...ask, ...ids },
    ]);
    const answer = await collect(client.sendMessageStream(userMessage("blue", ids)));
    expect(answer.events).toEqual([
      expect.objectContaining({
        kind: "status-update",
        final: true,
        status: expect.objectContaining({
          state: "completed",
          message: expect.objectContaining({ parts: [{ kind: "text", text: expect.stringContaining("nothing recorded for turn 1") }] }),
        }),
      }),
    ]);
  });

  it("fails the task, on its own ids, whose fixture has an error line: 0.3 fixtures end failed instead", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "fixtures-v03-"));
    await writeFile(path.join(dir, "plain-chat.jsonl"), `# a 1.0 habit\n${JSON.stringify({ error: { code: -32603, message: "boom" } })}\n`);
    const { client } = await start({ fixturesDir: dir });
    const { events } = await collect(client.sendMessageStream(userMessage("hi")));
    expect(events.at(-1)).toMatchObject({ kind: "status-update", taskId: taskIdOf(events), final: true, status: { state: "failed" } });
    expect(JSON.stringify(events.at(-1))).toContain('no \\"error\\" lines');
    expect((await getTask(client, taskIdOf(events))).status.state).toBe("failed");
  });

  it("records every JSON-RPC call in arrival order, and refuses calls without the token it requires", async () => {
    const { kernel } = await start({ requireToken: "s3cret" });
    const refused = await fetch(kernel.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "nope" } }),
    });
    expect(refused.status).toBe(401);
    const allowed = await fetch(kernel.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer s3cret" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tasks/get", params: { id: "nope" } }),
    });
    expect(await allowed.json()).toMatchObject({ id: 2, error: { code: -32001 } });
    expect(kernel.received.map(({ method, params }) => ({ method, params }))).toEqual([
      { method: "tasks/get", params: { id: "nope" } },
      { method: "tasks/get", params: { id: "nope" } },
    ]);
  });

  it("answers malformed JSON with a JSON-RPC parse error, as the SDK does", async () => {
    const { kernel } = await start();
    const reply = await fetch(kernel.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" });
    expect(reply.status).toBe(400);
    expect(await reply.json()).toMatchObject({ error: { code: -32700 } });
  });
});
