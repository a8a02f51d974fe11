import { expect } from "@jest/globals";
import type { FuzzRequest } from "./fuzz-bodies.js";

/** Sends one request; a 5xx fails, a stream is read to its end and must end with a terminal event. */
export async function expectAnswerNever5xx(url: string, { contentType, body }: FuzzRequest): Promise<void> {
  const response = await fetch(url, { method: "POST", headers: contentType ? { "content-type": contentType } : {}, body });
  const text = await response.text();
  if (response.status >= 500) throw new Error(`HTTP ${response.status} for ${contentType} ${body.slice(0, 300)}: ${text.slice(0, 300)}`);
  if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
    const records = text.split("\n\n").filter((record) => record.startsWith("data: "));
    const last = JSON.parse(records.at(-1)!.slice("data: ".length)) as { type: string };
    expect(["RUN_FINISHED", "RUN_ERROR"]).toContain(last.type);
  } else {
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(JSON.parse(text)).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
  }
}
