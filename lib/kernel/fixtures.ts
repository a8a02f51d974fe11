/**
 * Recorded kernel streams: one `<name>.jsonl` file per scenario, one line per
 * frame (format in `examples/fixtures/README.md`). Parsing is strict and names
 * the file and line of each mistake, because users write these by hand.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

export interface FixtureError {
  code: number;
  message: string;
  data?: unknown;
}

export interface FixtureLine {
  delayMs: number;
  frame?: unknown;
  error?: FixtureError;
}

/** The keys of an A2A 1.0 `StreamResponse`; a frame holds exactly one. */
export const STREAM_RESPONSE_KEYS = ["task", "statusUpdate", "artifactUpdate", "message"] as const;
export type StreamResponseKey = (typeof STREAM_RESPONSE_KEYS)[number];

export const DEFAULT_FIXTURE = "chat";

const FIXTURE_EXTENSION = ".jsonl";
// Names double as file names and as what a user types, so keep them to a
// safe alphabet: no path separators can sneak in through the chat text.
const FIXTURE_NAME = /^[A-Za-z0-9_-]+$/;

export class FixtureFormatError extends Error {
  override name = "FixtureFormatError";
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The single key of a wire frame, or undefined if it is not a StreamResponse. */
export function frameKey(frame: unknown): StreamResponseKey | undefined {
  if (!isObject(frame)) return undefined;
  const keys = Object.keys(frame);
  const key = keys[0];
  return keys.length === 1 && (STREAM_RESPONSE_KEYS as readonly string[]).includes(key!)
    ? (key as StreamResponseKey)
    : undefined;
}

function parseError(value: unknown, where: string): FixtureError {
  if (!isObject(value) || !Number.isInteger(value.code) || typeof value.message !== "string") {
    throw new FixtureFormatError(`${where}: "error" must be {"code": <integer>, "message": <string>, "data"?: any}`);
  }
  const error: FixtureError = { code: value.code as number, message: value.message };
  if ("data" in value) error.data = value.data;
  return error;
}

function parseLine(raw: string, where: string): FixtureLine {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (cause) {
    throw new FixtureFormatError(`${where}: not JSON (${(cause as Error).message})`);
  }
  if (!isObject(value)) throw new FixtureFormatError(`${where}: a line must be a JSON object`);
  const unknownKeys = Object.keys(value).filter((k) => !["delayMs", "frame", "error"].includes(k));
  if (unknownKeys.length > 0) throw new FixtureFormatError(`${where}: unknown key(s) ${unknownKeys.join(", ")}`);
  const delayMs = value.delayMs ?? 0;
  if (typeof delayMs !== "number" || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new FixtureFormatError(`${where}: "delayMs" must be a number ≥ 0`);
  }
  if (("frame" in value) === ("error" in value)) {
    throw new FixtureFormatError(`${where}: a line needs exactly one of "frame" or "error"`);
  }
  if ("error" in value) return { delayMs, error: parseError(value.error, where) };
  if (!frameKey(value.frame)) {
    throw new FixtureFormatError(`${where}: "frame" must be an object with exactly one of ${STREAM_RESPONSE_KEYS.join(", ")}`);
  }
  return { delayMs, frame: value.frame };
}

/** Parses a fixture's text; `source` only labels error messages. */
export function parseFixture(text: string, source = "fixture"): FixtureLine[] {
  const lines: FixtureLine[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const where = `${source}:${index + 1}`;
    // An error ends the stream, so anything after it could never be sent.
    if (lines.at(-1)?.error) throw new FixtureFormatError(`${where}: nothing may follow an "error" line`);
    lines.push(parseLine(trimmed, where));
  });
  return lines;
}

export async function listFixtures(dir: string): Promise<string[]> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  return entries
    .filter((file) => file.endsWith(FIXTURE_EXTENSION))
    .map((file) => file.slice(0, -FIXTURE_EXTENSION.length))
    .filter((name) => FIXTURE_NAME.test(name))
    .sort();
}

export async function loadFixture(dir: string, name: string): Promise<FixtureLine[]> {
  if (!FIXTURE_NAME.test(name)) throw new FixtureFormatError(`invalid fixture name "${name}"`);
  const file = path.join(dir, name + FIXTURE_EXTENSION);
  return parseFixture(await readFile(file, "utf8"), file);
}

/**
 * The fixture a user message asks for: its whole text is a fixture name,
 * optionally written `fixture:<name>` or `/<name>`. Anything else (a real
 * question, an empty resume message) gets the default.
 */
export function selectFixture(text: string, available: readonly string[]): string {
  const match = /^(?:fixture:|\/)?\s*([A-Za-z0-9_-]+)$/.exec(text.trim());
  const name = match?.[1];
  return name !== undefined && available.includes(name) ? name : DEFAULT_FIXTURE;
}
