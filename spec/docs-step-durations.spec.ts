/**
 * `docs/pipeline-feed.md` shows step durations in four places (a
 * `STEP_FINISHED`'s `durationMs`, the stream listing, the graph drawing
 * and the node table), and they once disagreed with each other and with
 * the times beside them. Each is held here to the code's one rule,
 * `stepDuration` (`finishedAt − startedAt`), and to each other, so an
 * edit of one cannot leave the others behind.
 */
import { describe, expect, it } from "@jest/globals";
import { readFileSync } from "node:fs";
import path from "node:path";
import { stepDuration } from "../lib/model/step-facts.js";
import { PROJECT_ROOT } from "../lib/paths.js";

const DOC = readFileSync(path.join(PROJECT_ROOT, "docs/pipeline-feed.md"), "utf8");

/** The JSON blocks of the document that parse (some are sketches with `…`, kept as strings). */
function jsonBlocks(): unknown[] {
  const blocks = [...DOC.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1]!);
  return blocks.flatMap((text) => {
    try {
      return [JSON.parse(text) as unknown];
    } catch {
      return [];
    }
  });
}

interface TimedFacts {
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}

function timedFactsIn(value: unknown, found: TimedFacts[] = []): TimedFacts[] {
  if (typeof value !== "object" || value === null) return found;
  const record = value as Record<string, unknown>;
  if (typeof record.durationMs === "number") found.push(record as unknown as TimedFacts);
  for (const child of Object.values(record)) timedFactsIn(child, found);
  return found;
}

/** `HH:MM:SS.mmm` → milliseconds since midnight; a shortened end (`05.625`) takes its hour and minute from the start. */
function clock(text: string, from?: string): number {
  const full = text.includes(":") ? text : `${from!.slice(0, from!.lastIndexOf(":"))}:${text}`;
  const [hours, minutes, seconds] = full.split(":").map(Number);
  return Math.round(((hours! * 60 + minutes!) * 60 + seconds!) * 1000);
}
const isoAt = (time: string) => `2026-03-12T${time}Z`;

/** The node table of section 7: `| node | key | status | attempt | started | finished | ms |`. */
function tableRows(): Array<{ key: string; started: string; finished: string; ms: number }> {
  return DOC.split("\n")
    .filter((line) => /^\| .+ \| `(?:step|candidate):[^`]+` \|/.test(line))
    .map((line) => {
      const cells = line.split("|").map((cell) => cell.trim());
      return { key: cells[2]!.replaceAll("`", ""), started: cells[5]!, finished: cells[6]!, ms: Number(cells[7]) };
    });
}

describe("docs/pipeline-feed.md: one duration rule in its examples", () => {
  it("gives every durationMs of its JSON examples as finishedAt − startedAt", () => {
    const facts = jsonBlocks().flatMap((block) => timedFactsIn(block));
    expect(facts.length).toBeGreaterThan(0);
    for (const fact of facts) expect(fact.durationMs).toBe(stepDuration(fact.startedAt, fact.finishedAt));
  });

  it("gives each node of the table its own finished − started", () => {
    const rows = tableRows();
    expect(rows.map((row) => row.key)).toEqual(expect.arrayContaining(["step:plan", "step:generate"]));
    for (const row of rows) {
      expect(row.ms).toBe(stepDuration(isoAt(row.started), isoAt(row.finished)));
    }
  });

  it("draws the graph and lists the stream with the table's durations", () => {
    const byStep = new Map(tableRows().map((row) => [row.key, row]));
    // `├─ plan  agent  [done]  08:14:05.170 → 05.625  (455 ms)`
    const drawn = [...DOC.matchAll(/[├└]─ (\w+) .*?(\d\d:\d\d:\d\d\.\d{3}) → ([\d:.]+)\s+\((\d+) ms\)/g)];
    expect(drawn.length).toBeGreaterThan(0);
    for (const [, stepId, started, finished, ms] of drawn) {
      expect(Number(ms)).toBe(clock(finished!, started) - clock(started!));
      expect(Number(ms)).toBe(byStep.get(`step:${stepId}`)?.ms);
    }
    // `STEP_FINISHED plan   completed, 455 ms`, or a candidate's `candidate:…:draft`.
    const listed = [...DOC.matchAll(/^STEP_FINISHED (\S+)\s+\w+, (\d+) ms$/gm)];
    expect(listed.length).toBe(byStep.size);
    for (const [, name, ms] of listed) {
      const key = name!.includes(":") ? name! : `step:${name}`;
      expect(Number(ms)).toBe(byStep.get(key)?.ms);
    }
  });
});
