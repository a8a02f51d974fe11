/**
 * Recorded kernel streams: one `<name>.jsonl` file per scenario, one line per
 * frame, optionally split into turn sections (format in
 * `examples/fixtures/README.md`). Parsing is strict and names
 * the file and line of each mistake, because users write these by hand.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { isJsonObject } from "../model/json.js";

export interface FixtureError {
  code: number;
  message: string;
  data?: unknown;
}

export interface FixtureLine {
  delayMs: number;
  frame?: unknown;
  error?: FixtureError;
  /**
   * Cut the SSE response of the call that started this turn, abruptly, once
   * the frames before it are written; the replay goes on publishing the
   * rest of its lines to the task (see `stream-drops.ts`).
   */
  drop?: true;
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

/** What a `frame` of a dialect's fixture must look like; the 1.0 one is `STREAM_RESPONSE_FRAMES`. */
export interface FrameFormat {
  accepts(frame: unknown): boolean;
  /** Ends "… must be <expected>" in a format error. */
  expected: string;
}

export const STREAM_RESPONSE_FRAMES: FrameFormat = {
  accepts: (frame) => frameKey(frame) !== undefined,
  expected: `an object with exactly one of ${STREAM_RESPONSE_KEYS.join(", ")}`,
};

/** The single key of a wire frame, or undefined if it is not a StreamResponse. */
export function frameKey(frame: unknown): StreamResponseKey | undefined {
  if (!isJsonObject(frame)) return undefined;
  const keys = Object.keys(frame);
  const key = keys[0];
  return keys.length === 1 && (STREAM_RESPONSE_KEYS as readonly string[]).includes(key!) ? (key as StreamResponseKey) : undefined;
}

function parseError(value: unknown, where: string): FixtureError {
  if (!isJsonObject(value) || !Number.isInteger(value.code) || typeof value.message !== "string") {
    throw new FixtureFormatError(`${where}: "error" must be {"code": <integer>, "message": <string>, "data"?: any}`);
  }
  const error: FixtureError = { code: value.code as number, message: value.message };
  if ("data" in value) error.data = value.data;
  return error;
}

/**
 * The lines played on one turn of a task. A file without turn markers is a
 * single section for turn 0; `{"turn": N}` and `{"turn": N, "when": "…"}`
 * start new ones.
 */
export interface FixtureSection {
  /** The task's turn this section plays on: 0 for the first message, 1 for the first answer, … */
  turn: number;
  /** Played only when this substring occurs in the answer; absent on the turn's fallback section. */
  when?: string;
  lines: FixtureLine[];
}

interface TurnMarker {
  turn: number;
  when?: string;
}

type ParsedLine = { line: FixtureLine } | { marker: TurnMarker };

function parseMarker(value: Record<string, unknown>, where: string): TurnMarker {
  const unknownKeys = Object.keys(value).filter((k) => !["turn", "when"].includes(k));
  if (unknownKeys.length > 0) {
    throw new FixtureFormatError(`${where}: a turn marker is {"turn": N, "when"?: "<substring>"}, not ${unknownKeys.join(", ")}`);
  }
  if (!Number.isInteger(value.turn) || (value.turn as number) < 0) {
    throw new FixtureFormatError(`${where}: "turn" must be an integer ≥ 0`);
  }
  if ("when" in value && (typeof value.when !== "string" || value.when === "")) {
    throw new FixtureFormatError(`${where}: "when" must be a non-empty string`);
  }
  return "when" in value ? { turn: value.turn as number, when: value.when as string } : { turn: value.turn as number };
}

function parseLine(raw: string, where: string, format: FrameFormat): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (cause) {
    throw new FixtureFormatError(`${where}: not JSON (${(cause as Error).message})`);
  }
  if (!isJsonObject(value)) throw new FixtureFormatError(`${where}: a line must be a JSON object`);
  if ("turn" in value) return { marker: parseMarker(value, where) };
  const unknownKeys = Object.keys(value).filter((k) => !["delayMs", "frame", "error", "drop"].includes(k));
  if (unknownKeys.length > 0) throw new FixtureFormatError(`${where}: unknown key(s) ${unknownKeys.join(", ")}`);
  const delayMs = value.delayMs ?? 0;
  if (typeof delayMs !== "number" || !Number.isFinite(delayMs) || delayMs < 0) {
    throw new FixtureFormatError(`${where}: "delayMs" must be a number ≥ 0`);
  }
  if (["frame", "error", "drop"].filter((key) => key in value).length !== 1) {
    throw new FixtureFormatError(`${where}: a line needs exactly one of "frame", "error" or "drop"`);
  }
  if ("drop" in value) {
    if (value.drop !== true) throw new FixtureFormatError(`${where}: "drop" must be true`);
    return { line: { delayMs, drop: true } };
  }
  if ("error" in value) return { line: { delayMs, error: parseError(value.error, where) } };
  if (!format.accepts(value.frame)) throw new FixtureFormatError(`${where}: "frame" must be ${format.expected}`);
  return { line: { delayMs, frame: value.frame } };
}

/**
 * Parses a fixture's text into its turn sections, in file order; `source`
 * only labels error messages. A file without lines gives no sections.
 */
export function parseFixture(text: string, source = "fixture", format: FrameFormat = STREAM_RESPONSE_FRAMES): FixtureSection[] {
  const sections: FixtureSection[] = [];
  // Where each section starts, to name it when it turns out to be empty.
  const starts: string[] = [];
  const open = (marker: TurnMarker, where: string) => {
    const previous = sections.at(-1);
    if (previous && previous.lines.length === 0) throw new FixtureFormatError(`${starts.at(-1)}: a turn section needs at least one line`);
    if (previous && marker.turn < previous.turn) {
      throw new FixtureFormatError(`${where}: turn ${marker.turn} comes after turn ${previous.turn}; keep the turns in order`);
    }
    const sameTurn = sections.filter((s) => s.turn === marker.turn);
    if (marker.when === undefined && sameTurn.some((s) => s.when === undefined)) {
      throw new FixtureFormatError(`${where}: turn ${marker.turn} already has a section without "when"; only one can be the fallback`);
    }
    if (marker.when !== undefined && sameTurn.some((s) => s.when === marker.when)) {
      throw new FixtureFormatError(`${where}: turn ${marker.turn} already has a section for "when": ${JSON.stringify(marker.when)}`);
    }
    sections.push({ ...marker, lines: [] });
    starts.push(where);
  };
  text.split(/\r?\n/).forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const where = `${source}:${index + 1}`;
    const parsed = parseLine(trimmed, where, format);
    if ("marker" in parsed) return open(parsed.marker, where);
    // Lines before any marker are turn 0's.
    if (sections.length === 0) open({ turn: 0 }, where);
    const section = sections.at(-1)!;
    // An error ends the stream, so anything after it in its section could never be sent.
    if (section.lines.at(-1)?.error) throw new FixtureFormatError(`${where}: nothing may follow an "error" line in its turn`);
    section.lines.push(parsed.line);
  });
  if (sections.at(-1)?.lines.length === 0) throw new FixtureFormatError(`${starts.at(-1)}: a turn section needs at least one line`);
  return sections;
}

/**
 * The section a turn plays: among the sections for `turn`, the first whose
 * `when` occurs in `answer`, else the one without `when`; undefined if none fits.
 */
export function sectionFor(sections: readonly FixtureSection[], turn: number, answer: string): FixtureSection | undefined {
  const candidates = sections.filter((s) => s.turn === turn);
  return candidates.find((s) => s.when !== undefined && answer.includes(s.when)) ?? candidates.find((s) => s.when === undefined);
}

export async function listFixtures(dir: string): Promise<string[]> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  return entries
    .filter((file) => file.endsWith(FIXTURE_EXTENSION))
    .map((file) => file.slice(0, -FIXTURE_EXTENSION.length))
    .filter((name) => FIXTURE_NAME.test(name))
    .sort();
}

export async function loadFixture(dir: string, name: string, format: FrameFormat = STREAM_RESPONSE_FRAMES): Promise<FixtureSection[]> {
  if (!FIXTURE_NAME.test(name)) throw new FixtureFormatError(`invalid fixture name "${name}"`);
  const file = path.join(dir, name + FIXTURE_EXTENSION);
  return parseFixture(await readFile(file, "utf8"), file, format);
}

/**
 * The fixture a user message asks for: its whole text is a fixture name,
 * optionally written `fixture:<name>` or `/<name>`. Anything else (a real
 * question, an empty resume message) gets the default (`fallback`).
 */
export function selectFixture(text: string, available: readonly string[], fallback = DEFAULT_FIXTURE): string {
  const match = /^(?:fixture:|\/)?\s*([A-Za-z0-9_-]+)$/.exec(text.trim());
  const name = match?.[1];
  return name !== undefined && available.includes(name) ? name : fallback;
}
