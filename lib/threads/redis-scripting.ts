/**
 * What the shared status hub and grace window need of node-redis: scripts
 * on a command connection, and channels on a connection of its own (a
 * connection that subscribes can send nothing else, hence
 * `client.duplicate()`). Written as the two calls they make, so any client
 * node-redis builds fits, whatever scripts or modules it was given.
 */
export interface RedisScripting {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

export type ChannelListener = (message: string) => unknown;

export interface RedisChannels {
  subscribe(channel: string, listener: ChannelListener): Promise<void>;
  unsubscribe(channel: string, listener: ChannelListener): Promise<void>;
}

/** Runs `script` with its keys and arguments; the reply as node-redis gives it. */
export const runScript = (redis: RedisScripting, script: string, keys: string[], args: Array<string | number>) =>
  redis.eval(script, { keys, arguments: args.map(String) });
