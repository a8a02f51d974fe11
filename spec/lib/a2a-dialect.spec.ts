/**
 * Which dialect an agent speaks, from its card (`lib/a2a/dialect.ts`), and
 * recorded A2A 0.3 frames read as the 1.0 frames they stand for
 * (`lib/a2a/dialect-v03.ts`).
 */
import { afterEach, describe, expect, it } from "@jest/globals";
import http from "node:http";
import type net from "node:net";
import type { Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from "a2a-sdk-v03";
import { AgentCardSource, dialectOfCard, readAgentCard } from "../../lib/a2a/dialect.js";
import { paramsToV03, streamResultFromV03, taskResultFromV03, v03Method } from "../../lib/a2a/dialect-v03.js";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { AguiError } from "../../lib/errors.js";

describe("dialectOfCard", () => {
  it("reads 0.3 from a 0.3 card's protocolVersion", () => {
    expect(dialectOfCard({ name: "a", protocolVersion: "0.3.0", url: "http://127.0.0.1/" })).toBe("0.3");
    expect(dialectOfCard({ protocolVersion: "0.2.5" })).toBe("0.3");
  });

  it("reads 1.0 from a 1.0 interface, even beside a 0.3 one, and from a card that says nothing", () => {
    expect(dialectOfCard({ supportedInterfaces: [{ protocolBinding: "JSONRPC", protocolVersion: "1.0" }] })).toBe("1.0");
    expect(dialectOfCard({ protocolVersion: "0.3.0", supportedInterfaces: [{ protocolVersion: "0.3" }, { protocolVersion: "1.0" }] })).toBe(
      "1.0",
    );
    expect(dialectOfCard({ name: "no version" })).toBe("1.0");
    expect(dialectOfCard(undefined)).toBe("1.0");
  });
});

/** The 1.0 frame, and nothing of 0.3's (`kind`, `final`) left in what a reader or the JSON of it sees. */
function expectSameFrame(actual: unknown, expected: unknown): void {
  expect(actual).toEqual(expected);
  expect(JSON.parse(JSON.stringify(actual))).toStrictEqual(expected);
}

describe("A2A 0.3 frames read as A2A 1.0 frames", () => {
  it("a status update: kind and final gone, the state and the message's role and parts in 1.0's spelling", () => {
    const frame: TaskStatusUpdateEvent = {
      kind: "status-update",
      taskId: "t1",
      contextId: "c1",
      final: true,
      status: {
        state: "input-required",
        message: { kind: "message", messageId: "m1", role: "agent", parts: [{ kind: "text", text: "Your name?" }] },
      },
    };
    const expected = {
      statusUpdate: {
        taskId: "t1",
        contextId: "c1",
        status: { state: "TASK_STATE_INPUT_REQUIRED", message: { messageId: "m1", role: "ROLE_AGENT", parts: [{ text: "Your name?" }] } },
      },
    };
    expectSameFrame(streamResultFromV03(frame as unknown as Record<string, unknown>), expected);
  });

  it("a status update whose parts are not all objects: only its object parts are read", () => {
    const frame = {
      kind: "status-update",
      taskId: "t1",
      contextId: "c1",
      final: false,
      status: {
        state: "working",
        message: { kind: "message", messageId: "m1", role: "agent", parts: ["stray", { kind: "text", text: "hi" }] },
      },
    };
    expectSameFrame(streamResultFromV03(frame), {
      statusUpdate: {
        taskId: "t1",
        contextId: "c1",
        status: { state: "TASK_STATE_WORKING", message: { messageId: "m1", role: "ROLE_AGENT", parts: [{ text: "hi" }] } },
      },
    });
  });

  it("an artifact update: text, data and both kinds of file part", () => {
    const frame: TaskArtifactUpdateEvent = {
      kind: "artifact-update",
      taskId: "t1",
      contextId: "c1",
      append: true,
      lastChunk: false,
      artifact: {
        artifactId: "a1",
        name: "report",
        parts: [
          { kind: "text", text: "chunk" },
          { kind: "data", data: { rows: 3 } },
          { kind: "file", file: { uri: "file:///tmp/r.pdf", mimeType: "application/pdf", name: "r.pdf" } },
          { kind: "file", file: { bytes: "aGk=", mimeType: "text/plain" } },
        ],
      },
    };
    expectSameFrame(streamResultFromV03(frame as unknown as Record<string, unknown>), {
      artifactUpdate: {
        taskId: "t1",
        contextId: "c1",
        append: true,
        lastChunk: false,
        artifact: {
          artifactId: "a1",
          name: "report",
          parts: [
            { text: "chunk" },
            { data: { rows: 3 }, mediaType: "application/json" },
            { url: "file:///tmp/r.pdf", mediaType: "application/pdf", filename: "r.pdf" },
            { raw: "aGk=", mediaType: "text/plain" },
          ],
        },
      },
    });
  });

  it("a task, wrapped on a stream and bare from tasks/get; every lowercase state has its 1.0 name, unknown is unspecified", () => {
    const task: Task = {
      kind: "task",
      id: "t1",
      contextId: "c1",
      status: { state: "auth-required" },
      history: [{ kind: "message", messageId: "u1", role: "user", parts: [{ kind: "text", text: "hi" }] }],
    };
    const bare = taskResultFromV03(task as unknown as Record<string, unknown>);
    expect(bare).toEqual({
      id: "t1",
      contextId: "c1",
      status: { state: "TASK_STATE_AUTH_REQUIRED" },
      history: [{ messageId: "u1", role: "ROLE_USER", parts: [{ text: "hi" }] }],
    });
    expect(streamResultFromV03(task as unknown as Record<string, unknown>)).toEqual({ task: bare });
    const states = ["submitted", "working", "completed", "canceled", "failed", "rejected", "unknown"].map(
      (state) => (taskResultFromV03({ kind: "task", id: "t", status: { state } }).status as { state: string }).state,
    );
    expect(states).toEqual([
      "TASK_STATE_SUBMITTED",
      "TASK_STATE_WORKING",
      "TASK_STATE_COMPLETED",
      "TASK_STATE_CANCELED",
      "TASK_STATE_FAILED",
      "TASK_STATE_REJECTED",
      "TASK_STATE_UNSPECIFIED",
    ]);
  });

  it("a result of no kind 0.3 knows is a protocol error, not a guess", () => {
    expect(() => streamResultFromV03({ statusUpdate: {} })).toThrow(AguiError);
    expect(() => v03Method("ListTasks")).toThrow(AguiError);
  });

  it("the user's message goes out kinded and lowercase; an image (a data part {filename, bytes}) as a file part", () => {
    const params = {
      message: {
        messageId: "m1",
        role: "ROLE_USER",
        contextId: "c1",
        taskId: "t1",
        parts: [
          { text: "look" },
          { data: { filename: "a.png", bytes: "iVBO" }, mediaType: "image/png" },
          { data: { kind: "permission" }, mediaType: "application/json" },
        ],
        metadata: { iac_code: { cwd: "/tmp" } },
      },
      configuration: { acceptedOutputModes: ["text/plain"] },
    };
    expect(paramsToV03(params)).toEqual({
      message: {
        kind: "message",
        messageId: "m1",
        role: "user",
        contextId: "c1",
        taskId: "t1",
        parts: [
          { kind: "text", text: "look" },
          { kind: "file", file: { bytes: "iVBO", mimeType: "image/png", name: "a.png" } },
          { kind: "data", data: { kind: "permission" } },
        ],
        metadata: { iac_code: { cwd: "/tmp" } },
      },
      configuration: { acceptedOutputModes: ["text/plain"] },
    });
    expect(paramsToV03({ id: "t1", historyLength: 100 })).toEqual({ id: "t1", historyLength: 100 });
  });
});

describe("AgentCardSource", () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  async function cardServer(routes: Record<string, unknown>): Promise<{ url: string; asked: string[] }> {
    const asked: string[] = [];
    const server = http.createServer((req, res) => {
      asked.push(req.url ?? "");
      const card = routes[req.url ?? ""];
      if (card === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(card));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/a2a`, asked };
  }

  it("falls back to the older /.well-known/agent.json, and names the agent", async () => {
    const { url, asked } = await cardServer({ "/.well-known/agent.json": { name: "old", version: "2.1", protocolVersion: "0.3.0" } });
    const source = new AgentCardSource({ kernelUrl: url });

    expect(await source.agent()).toEqual({ dialect: "0.3", name: "old", version: "2.1" });
    expect(asked).toEqual(["/.well-known/agent-card.json", "/.well-known/agent.json"]);
    await source.dialect();
    expect(asked).toHaveLength(2);
  });

  it("a setting overrides the card's dialect but not its name; forget() reads the card again", async () => {
    const { url, asked } = await cardServer({ "/.well-known/agent-card.json": { name: "new", version: "1", protocolVersion: "0.3.0" } });
    const pinned = new AgentCardSource({ kernelUrl: url, setting: "1.0" });

    expect(await pinned.dialect()).toBe("1.0");
    expect(asked).toEqual([]);
    expect(await pinned.agent()).toEqual({ dialect: "1.0", name: "new", version: "1" });
    pinned.forget();
    await pinned.agent();
    expect(asked).toHaveLength(2);
  });

  it("an agent out of reach counts as 1.0 for now and is asked again next time", async () => {
    let reads = 0;
    const source = new AgentCardSource({
      kernelUrl: "http://127.0.0.1:9/",
      read: async () => {
        reads++;
        if (reads === 1) throw new Error("ECONNREFUSED");
        return { protocolVersion: "0.3.0" };
      },
    });
    expect(await source.dialect()).toBe("1.0");
    expect(await source.dialect()).toBe("0.3");
    expect(reads).toBe(2);
  });

  it("says the dialect without waiting only once the current read of the card has settled", async () => {
    let reads = 0;
    let answer!: (card: unknown) => void;
    const source = new AgentCardSource({
      kernelUrl: "http://127.0.0.1:9/",
      read: () => {
        reads++;
        if (reads === 1) return Promise.reject(new Error("ECONNREFUSED"));
        return new Promise((resolve) => (answer = resolve));
      },
    });
    expect(source.settled()).toBeUndefined();
    // Out of reach: 1.0 for now, but not settled, so the next stream asks again.
    expect(await source.dialect()).toBe("1.0");
    expect(source.settled()).toBeUndefined();
    const second = source.dialect();
    expect(source.settled()).toBeUndefined();
    answer({ protocolVersion: "0.3.0" });
    expect(await second).toBe("0.3");
    expect(source.settled()).toBe("0.3");
    source.forget();
    expect(source.settled()).toBeUndefined();
    expect(new AgentCardSource({ kernelUrl: "http://127.0.0.1:9/", setting: "0.3" }).settled()).toBe("0.3");
  });

  it("a read forgotten while under way settles nothing", async () => {
    let answer!: (card: unknown) => void;
    const source = new AgentCardSource({ kernelUrl: "http://127.0.0.1:9/", read: () => new Promise((resolve) => (answer = resolve)) });
    const first = source.dialect();
    source.forget();
    answer({ protocolVersion: "0.3.0" });
    expect(await first).toBe("0.3");
    expect(source.settled()).toBeUndefined();
  });

  it("a kernel with no card at all is read as having none (undefined), not as unreachable", async () => {
    const { url } = await cardServer({});
    await expect(readAgentCard(url)).resolves.toBeUndefined();
  });
});

describe("IAC_CODE_AGUI_A2A_DIALECT", () => {
  it("is auto (unset) by default, and takes 1.0 or 0.3 from the environment or --a2a-dialect", () => {
    expect(loadConfig([], {}).a2aDialect).toBeUndefined();
    expect(loadConfig([], { IAC_CODE_AGUI_A2A_DIALECT: "0.3" }).a2aDialect).toBe("0.3");
    expect(loadConfig(["--a2a-dialect", "1.0"], { IAC_CODE_AGUI_A2A_DIALECT: "0.3" }).a2aDialect).toBe("1.0");
    expect(loadConfig(["--a2a-dialect=AUTO"], {}).a2aDialect).toBe("auto");
  });

  it("refuses any other dialect at start, naming the setting and the choices", () => {
    expect(() => loadConfig([], { IAC_CODE_AGUI_A2A_DIALECT: "0.2" })).toThrow(ConfigError);
    expect(() => loadConfig([], { IAC_CODE_AGUI_A2A_DIALECT: "0.2" })).toThrow(/IAC_CODE_AGUI_A2A_DIALECT.*auto, 1\.0, 0\.3/);
  });
});
