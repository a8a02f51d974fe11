/**
 * Recorder mode (`IAC_CODE_AGUI_RECORD_DIR`): not built yet; the client is
 * returned as it is.
 */
import type { A2AClient } from "../a2a/client.js";

export function recordingClient(client: A2AClient, _recordDir: string | undefined): A2AClient {
  return client;
}
