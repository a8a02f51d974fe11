// @ts-check
/**
 * Reads the service's SSE body. EventSource cannot POST a body or send an
 * Authorization header, so the page reads the fetch stream itself.
 */

/** `raw` is the record as received, for saving the stream as it came (run-files.js). @typedef {{ data: string | undefined, comments: string[], raw: string }} SseRecord */

/**
 * @param {ReadableStream<BufferSource>} body
 * @returns {AsyncGenerator<SseRecord>}
 */
export async function* sseRecords(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      // Normalised on the whole buffer, so a CRLF split across two chunks still joins up.
      buffer = (buffer + value).replace(/\r\n/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const record = parseRecord(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (record) yield record;
      }
    }
    const last = parseRecord(buffer);
    if (last) yield last;
  } finally {
    reader.releaseLock();
  }
}

/** @param {string} text @returns {SseRecord | undefined} */
function parseRecord(text) {
  if (text.trim() === "") return undefined;
  /** @type {string[]} */
  const data = [];
  /** @type {string[]} */
  const comments = [];
  for (const line of text.split("\n")) {
    if (line.startsWith(":")) comments.push(line.slice(1).trim());
    else if (line === "data" || line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  return { data: data.length > 0 ? data.join("\n") : undefined, comments, raw: text };
}

/** What the service answered instead of a stream (its error body), as a line. @param {string} text */
export function errorText(text) {
  try {
    const { error } = JSON.parse(text);
    return `${error.code}: ${error.message}`;
  } catch {
    return text.slice(0, 300);
  }
}
