/**
 * A kernel's stdout or stderr as lines for the log. readline would hold a
 * line without end in memory whole; a kernel that prints megabytes without
 * a newline (a progress bar, a binary blob) must not grow the service, so a
 * line is cut at `maxLineChars` and the rest of it, up to its newline, is
 * dropped.
 */
import { StringDecoder } from "node:string_decoder";
import type { Readable } from "node:stream";

export const MAX_LOGGED_LINE_CHARS = 8192;

export interface LineSplitter {
  /** Feeds a chunk; calls `onLine` for each line it completes. */
  push(chunk: Buffer | string): void;
  /** The last line, when the stream ended without a newline. */
  end(): void;
}

export function lineSplitter(onLine: (line: string) => void, maxLineChars = MAX_LOGGED_LINE_CHARS): LineSplitter {
  const decoder = new StringDecoder("utf8");
  let pending = "";
  /** Set once the line being read was cut: the rest of it is dropped. */
  let cut = false;
  const emit = (line: string) => onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
  const take = (text: string) => {
    let start = 0;
    for (let newline = text.indexOf("\n"); newline >= 0; newline = text.indexOf("\n", start)) {
      if (!cut) emit(pending + text.slice(start, newline));
      pending = "";
      cut = false;
      start = newline + 1;
    }
    if (cut) return;
    pending += text.slice(start);
    if (pending.length > maxLineChars) {
      onLine(`${pending.slice(0, maxLineChars)}… (cut)`);
      pending = "";
      cut = true;
    }
  };
  return {
    push: (chunk) => take(typeof chunk === "string" ? chunk : decoder.write(chunk)),
    end() {
      take(decoder.end());
      if (!cut && pending !== "") emit(pending);
      pending = "";
    },
  };
}

/** Every line of `stream`, as it arrives. */
export function forEachLine(stream: Readable, onLine: (line: string) => void): void {
  const lines = lineSplitter(onLine);
  stream.on("data", (chunk: Buffer) => lines.push(chunk));
  stream.on("end", () => lines.end());
  // A pipe that breaks (the child's end went away) ends the output; the exit is reported elsewhere.
  stream.on("error", () => lines.end());
}
