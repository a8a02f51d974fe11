/**
 * Whether a kernel answers: its A2A agent card, fetched like every request
 * to the kernel (loopback only, no redirect; see `a2a/kernel-fetch.ts`).
 * The supervisor waits on it after a start, and `/ready` asks it.
 */
import { AGENT_CARD_PATH } from "@a2a-js/sdk";
import { kernelFetch, readAnswer } from "../a2a/kernel-fetch.js";

/** An agent card is a few KiB; a kernel that answers with more is read no further. */
const MAX_CARD_BYTES = 1024 * 1024;

/** Where the card of the kernel at `kernelUrl` (its JSON-RPC URL) lives: `/.well-known/…` on its origin (RFC 8615). */
export function agentCardUrl(kernelUrl: string): string {
  return new URL(`/${AGENT_CARD_PATH}`, kernelUrl).toString();
}

export interface AnswerCheckOptions {
  timeoutMs: number;
  /** The kernel's token, sent as on every call: a kernel may guard its card too. */
  token?: string | undefined;
}

/** True when the kernel answers its agent card with a 2xx JSON document within the timeout; never throws. */
export async function kernelAnswers(kernelUrl: string, { timeoutMs, token }: AnswerCheckOptions): Promise<boolean> {
  try {
    const response = await kernelFetch(
      agentCardUrl(kernelUrl),
      {
        method: "GET",
        headers: { Accept: "application/json", ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) },
        signal: AbortSignal.timeout(timeoutMs),
      },
      MAX_CARD_BYTES,
    );
    // Read whole either way, so the kept-alive connection is free for the next request.
    const text = await readAnswer(response);
    if (!response.ok) return false;
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
