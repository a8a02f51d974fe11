/**
 * A real `redis-server` for one spec file (`lib/testing/redis-server.ts`):
 * started before its tests and stopped after them, with the test's own
 * connection (`raw`, to look at keys beside the stores) and every
 * connection the spec's stores opened through `connect`.
 */
import { afterAll, beforeAll } from "@jest/globals";
import { connectRedis, type RedisConnection } from "../../../lib/state/redis-connection.js";
import { startRedisServer, type RedisServer } from "../../../lib/testing/redis-server.js";

export interface SpecRedis {
  /** The server itself, for a spec that stops Redis and starts it again. */
  readonly server: RedisServer;
  readonly url: string;
  /** The test's own view of Redis, beside the stores' connections. */
  readonly raw: RedisConnection;
  /** A connection of its own, as another instance would have; closed after the file's tests. */
  connect(): Promise<RedisConnection>;
}

export function redisForSpec(): SpecRedis {
  let server: RedisServer | undefined;
  let raw: RedisConnection | undefined;
  const connections: RedisConnection[] = [];
  beforeAll(async () => {
    server = await startRedisServer();
    raw = await connectRedis(server.url);
  });
  afterAll(async () => {
    for (const connection of connections.splice(0)) await connection.close();
    await raw?.close();
    await server?.stop();
  });
  return {
    get server() {
      return server!;
    },
    get url() {
      return server!.url;
    },
    get raw() {
      return raw!;
    },
    async connect() {
      const connection = await connectRedis(server!.url);
      connections.push(connection);
      return connection;
    },
  };
}
