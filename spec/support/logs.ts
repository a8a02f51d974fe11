/**
 * The service's log as a test reads it: a real pino logger (`createLogger`,
 * as `main.ts` makes it) writing into memory, each line parsed as the one
 * JSON record it must be.
 */
import { createLogger, type Logger, type LogLevel } from "../../lib/log.js";

export interface LogRecord {
  level: string;
  time: string;
  msg: string;
  [field: string]: unknown;
}

export interface CapturedLogs {
  logger: Logger;
  /** Every line written so far, as written. */
  text(): string;
  /** Every record written so far; a line that is not one JSON object fails the test here. */
  records(): LogRecord[];
  /** The records whose fields include `fields` (compared with `===`). */
  matching(fields: Record<string, unknown>): LogRecord[];
}

export function captureLogs(level: LogLevel = "debug"): CapturedLogs {
  const lines: string[] = [];
  const logger = createLogger({ level, destination: { write: (line: string) => void lines.push(line) } });
  const records = () =>
    lines.map((line) => {
      if (!line.endsWith("\n") || line.slice(0, -1).includes("\n")) throw new Error(`not one line: ${JSON.stringify(line)}`);
      return JSON.parse(line) as LogRecord;
    });
  return {
    logger,
    text: () => lines.join(""),
    records,
    matching: (fields) => records().filter((record) => Object.entries(fields).every(([key, value]) => record[key] === value)),
  };
}
