/** A real `redis-server` for one test file; it lives in `lib/testing/`, which the bench shares. */
export * from "../../lib/testing/redis-server.js";
