/**
 * Recorder mode (`IAC_CODE_AGUI_RECORD_DIR`, `--record-dir`): the upstream
 * client, with every `SendStreamingMessage` stream recorded as a replayable
 * fixture (see `recorder.ts` and `docs/recorder.md`).
 */
import type { A2AClient } from "../a2a/client.js";
import { Recorder, type RecorderOptions } from "./recorder.js";

export { Recorder, type RecorderOptions } from "./recorder.js";

/**
 * `client` itself when `recordDir` is unset. Otherwise the same client seen
 * through a Proxy: `sendStreamingMessage` returns the client's own stream
 * with a recording tap on it, and every other member is the client's own,
 * bound to it. A Proxy rather than a wrapper class because `A2AClient` keeps
 * its URL and token in `#private` fields, which makes the class type nominal:
 * nothing but an `A2AClient` instance can stand where one is expected, and a
 * Proxy of one is.
 */
export function recordingClient(client: A2AClient, recordDir: string | undefined, options: RecorderOptions = {}): A2AClient {
  if (recordDir === undefined) return client;
  const recorder = new Recorder(recordDir, options);
  const sendStreamingMessage: A2AClient["sendStreamingMessage"] = (params, streamOptions) =>
    recorder.record(params, client.sendStreamingMessage(params, streamOptions));
  const recording = new Proxy(client, {
    get(target, property) {
      if (property === "sendStreamingMessage") return sendStreamingMessage;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  recorders.set(recording, recorder);
  return recording;
}

const recorders = new WeakMap<A2AClient, Recorder>();

/** The recorder behind a client `recordingClient` made, if any: a shutdown waits for its last writes (`idle()`). */
export function recorderOf(client: A2AClient): Recorder | undefined {
  return recorders.get(client);
}
