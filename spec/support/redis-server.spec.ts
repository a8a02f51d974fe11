/**
 * The Redis test server itself: it answers, keeps what was written across a
 * restart (append-only), and is gone after stop.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { createClient } from "redis";
import { startRedisServer, type RedisServer } from "../../lib/testing/redis-server.js";

describe("startRedisServer", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(() => redis.stop());

  it("serves on loopback and keeps its data across a restart", async () => {
    const client = createClient({ url: redis.url });
    await client.connect();
    await client.set("kept", "yes");
    await client.close();

    await redis.halt();
    await redis.restart();

    const again = createClient({ url: redis.url });
    await again.connect();
    expect(await again.get("kept")).toBe("yes");
    await again.close();
  });
});
