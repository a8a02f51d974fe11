/**
 * What the shared status hub and grace window need of node-redis: scripts
 * on a command connection, and channels on a connection of its own (a
 * connection that subscribes can send nothing else, hence
 * `client.duplicate()`). Written as the two calls they make, so any client
 * node-redis builds fits, whatever scripts or modules it was given.
 *
 * Every call has a deadline of its own (`withDeadline`), as the thread
 * store's commands have: node-redis times a command out only until it is
 * written. What a missed deadline means is each caller's to say.
 */
import { withDeadline } from "../state/redis-connection.js";

export interface RedisScripting {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

export type ChannelListener = (message: string) => unknown;

export interface RedisChannels {
  subscribe(channel: string, listener: ChannelListener): Promise<void>;
  unsubscribe(channel: string, listener: ChannelListener): Promise<void>;
}

/**
 * Sends `script` with its keys and arguments; the reply as node-redis gives
 * it, whenever Redis sends it. For a caller that must act on a late reply
 * too (a script that takes holds); others use `runScript`.
 */
export const sendScript = (redis: RedisScripting, script: string, keys: string[], args: Array<string | number>) =>
  redis.eval(script, { keys, arguments: args.map(String) });

/**
 * `sendScript`, failing with a RedisDeadlineError after `deadlineMs`: a
 * Redis that is up but silent would otherwise hold its caller for good.
 */
export const runScript = (redis: RedisScripting, script: string, keys: string[], args: Array<string | number>, deadlineMs: number) =>
  withDeadline(sendScript(redis, script, keys, args), deadlineMs);
