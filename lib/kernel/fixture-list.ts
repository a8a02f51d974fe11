/**
 * `GET /iac-code/fixtures` on the demo kernel: the fixtures it can replay,
 * each with the whole comment it opens with, so a page in front of the
 * service (the sandbox) can offer them. A kernel without this route has no
 * fixtures to offer, and the sandbox then takes free text only.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { RequestHandler } from "express";
import { FIXTURE_EXTENSION, FIXTURE_NAME } from "../fixtures/fixture-format.js";
import type { FixtureSummary } from "../fixtures/fixture-summary.js";

function leadingComment(text: string): string[] {
  const lines: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith("#")) lines.push(line.replace(/^#\s?/, "").trim());
    else if (line.trim() !== "") break;
  }
  return lines;
}

/** Fixture files are read on every call: the kernel reads them on every turn, so edits show at once. */
export async function listFixtures(dir: string): Promise<FixtureSummary[]> {
  const names = (await readdir(dir))
    .filter((file) => file.endsWith(FIXTURE_EXTENSION))
    .map((file) => file.slice(0, -FIXTURE_EXTENSION.length))
    .filter((name) => FIXTURE_NAME.test(name))
    .sort();
  return Promise.all(
    names.map(async (name) => {
      // A comment wrapped over several lines is one description: cutting it at the first line cut it mid-sentence.
      const description = leadingComment(await readFile(path.join(dir, name + FIXTURE_EXTENSION), "utf8"))
        .filter((line) => line !== "")
        .join(" ");
      return { name, description, pipeline: description.includes('runMode "pipeline"') };
    }),
  );
}

export function fixtureListRoute(dir: string): RequestHandler {
  return (_req, res, next) => {
    listFixtures(dir).then((fixtures) => res.json({ fixtures }), next);
  };
}
