/**
 * The demo kernel's fixtures: the files in its directory, and which one a
 * user message asks for. The format they are written in is
 * `lib/fixtures/fixture-format.ts`, shared with the recorder and the
 * sandbox.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import {
  FIXTURE_EXTENSION,
  FIXTURE_NAME,
  FixtureFormatError,
  parseFixture,
  STREAM_RESPONSE_FRAMES,
  type FixtureSection,
  type FrameFormat,
} from "../fixtures/fixture-format.js";

export const DEFAULT_FIXTURE = "chat";

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
