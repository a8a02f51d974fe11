/** The Redis store's list of threads (the contract in `thread-list-contract.ts`) against a real `redis-server`, SCANning its keys. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "@jest/globals";
import { RedisThreadStore } from "../../../lib/state/redis-thread-store.js";
import { redisForSpec } from "./redis-for-spec.js";
import { describeThreadListContract } from "./thread-list-contract.js";
import { threadState } from "./thread-state-fixture.js";

const redis = redisForSpec();

/** A store under a key prefix of its own, whose clock the test sets before each save. */
async function storeWithClock(keyPrefix = `test-${randomUUID()}:`) {
  const connection = await redis.connect();
  const clock = { now: 0 };
  return { store: new RedisThreadStore({ client: connection.client, keyPrefix, now: () => clock.now }), clock };
}

describe("RedisThreadStore.listThreads", () => {
  describeThreadListContract(async () => {
    const { store, clock } = await storeWithClock();
    return {
      store,
      saveAt: async (state, atMs) => {
        clock.now = atMs;
        await store.save(state);
      },
      writeRaw: async (threadId, content) => {
        await redis.raw.client.hSet(store.threadKey(threadId), "state", content);
      },
      remove: () => store.close(),
    };
  });

  it("lists only the threads under its own key prefix, even one with glob characters in it", async () => {
    // Unescaped, the pattern `test-*-<id>:thread:*` would match the other store's keys too.
    const id = randomUUID();
    const { store: mine, clock } = await storeWithClock(`test-*-${id}:`);
    const { store: other } = await storeWithClock(`test-x-${id}:`);
    clock.now = Date.parse("2026-11-30T10:00:00.000Z");
    await mine.save(threadState("thread-mine"));
    await other.save(threadState("thread-other"));
    expect((await mine.listThreads(50)).map((thread) => thread.threadId)).toEqual(["thread-mine"]);
  });
});
