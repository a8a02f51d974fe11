/**
 * `POST /sandbox/replay` is capped (`IAC_CODE_AGUI_SANDBOX_MAX_REPLAYS`):
 * replays call no kernel, so the run slots do not count them, and ten
 * clients that replayed and read nothing once cost the service a GiB.
 * Through the real service: with the cap held, the next replay is refused
 * with 429 TOO_MANY_RUNS, a Retry-After and the request's language; a slot
 * comes back when its connection closes.
 *
 * A held replay is a request whose body has not come yet: the slot is
 * taken before the body is read. It asks `Expect: 100-continue`, which
 * Node answers in the same turn it hands the request to the app, so the
 * `100 Continue` it reads says its slot is taken: no waiting on timing.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { ConfigError, loadConfig } from "../../lib/config.js";
import { FIXTURES_DIR } from "../../lib/paths.js";
import { startService, type RunningService } from "../../lib/server.js";
import { expectValidRun } from "../support/agui.js";
import { postRun, testConfig } from "../support/service.js";

const TOKEN = "replay-cap-token";
const NO_KERNEL = "http://127.0.0.1:9/";
const chat = readFileSync(path.join(FIXTURES_DIR, "chat.jsonl"), "utf8");

/** A replay request sent up to its body, answered `100 Continue`: it holds its slot until the socket closes. */
async function heldReplay(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const head = [
    "POST /sandbox/replay HTTP/1.1",
    `Host: ${hostname}:${port}`,
    `Authorization: Bearer ${TOKEN}`,
    "Content-Type: application/json",
    "Content-Length: 1000",
    "Expect: 100-continue",
    "",
    "",
  ].join("\r\n");
  socket.write(head);
  let received = "";
  await new Promise<void>((resolve, reject) => {
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      if (received.startsWith("HTTP/1.1 100")) resolve();
      else if (received.includes("\r\n\r\n")) reject(new Error(`expected 100 Continue, got ${received.split("\r\n")[0]}`));
    });
    socket.once("error", reject);
  });
  return socket;
}

describe("the sandbox replay's cap", () => {
  let service: RunningService;
  const replay = (headers: Record<string, string> = {}) =>
    postRun(`${service.url}/sandbox/replay`, { fixture: chat, timeScale: 0 }, { authorization: `Bearer ${TOKEN}`, ...headers });

  beforeAll(async () => {
    service = await startService(testConfig({ a2aUrl: NO_KERNEL, authToken: TOKEN, sandboxMaxReplays: 2 }));
  });
  afterAll(() => service?.close());

  it("refuses a replay past the cap with 429 TOO_MANY_RUNS and Retry-After, and takes one again once a slot is back", async () => {
    const held = [await heldReplay(service.url), await heldReplay(service.url)];
    try {
      const refused = await fetch(`${service.url}/sandbox/replay`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "accept-language": "fr" },
        body: JSON.stringify({ fixture: chat, timeScale: 0 }),
      });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("5");
      expect(await refused.json()).toMatchObject({
        error: {
          code: "TOO_MANY_RUNS",
          message: "Le bac à sable rejoue déjà autant d’enregistrements à la fois qu’il en accepte (2). Réessayez plus tard.",
          limit: "sandboxReplays",
        },
      });

      // A held replay's client leaves: its slot comes back when the service sees its connection close.
      const gone = held.shift()!;
      gone.destroy();
      let answered = await replay();
      for (let tries = 0; answered.status === 429 && tries < 100; tries++) {
        await new Promise((resolve) => setImmediate(resolve));
        answered = await replay();
      }
      expect(answered.status).toBe(200);
      await expectValidRun(answered.events);
      expect(answered.events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    } finally {
      for (const socket of held) socket.destroy();
    }
  });

  it("gives each finished replay's slot back: more replays one after another than the cap all play", async () => {
    for (let n = 0; n < 5; n++) {
      const result = await replay();
      expect(result.status).toBe(200);
      await expectValidRun(result.events);
    }
  });

  it("is read from IAC_CODE_AGUI_SANDBOX_MAX_REPLAYS or --sandbox-max-replays, a whole number from 1", () => {
    expect(loadConfig([], { IAC_CODE_AGUI_SANDBOX_MAX_REPLAYS: "7" }).sandboxMaxReplays).toBe(7);
    expect(loadConfig(["--sandbox-max-replays", "3"], {}).sandboxMaxReplays).toBe(3);
    expect(() => loadConfig([], { IAC_CODE_AGUI_SANDBOX_MAX_REPLAYS: "0" })).toThrow(ConfigError);
  });
});
