/**
 * `POST /sandbox/replay`: a recorded A2A fixture from the person's disk (the
 * format of `examples/fixtures/`, which recorder mode writes) replayed
 * through the run's own chain (`runPipeline`) into the AG-UI stream this
 * service would have sent for it. What a person debugging a recording
 * expects is "what did the client get from this?", whatever kernel the
 * service fronts, so no kernel is called: the frames stand in for one.
 *
 * Nothing is kept: the thread is a fresh id per replay, ids the kernel
 * announced are not written anywhere, and a pause shows its interrupts
 * without storing them (there is no task to answer). The route sits in the
 * sandbox's router, so it exists only where the sandbox does, and it asks for
 * the bearer token as every run does (docs/sandbox.md, "Keep").
 */
import { randomUUID } from "node:crypto";
import express, { type Request, type RequestHandler, type Response } from "express";
import { concatMap, concatWith, defer, EMPTY, from, map, of, throwError, timer, type Observable } from "rxjs";
import type { ReadGate } from "../a2a/body-reader.js";
import { executionFailed, MAX_KERNEL_JSON_DEPTH } from "../a2a/rpc-errors.js";
import type { JsonRpcResult } from "../a2a/client.js";
import { AguiError } from "../errors.js";
import { describeError } from "../i18n/index.js";
import { FixtureFormatError, parseFixture, sectionFor, type FixtureLine } from "../fixtures/fixture-format.js";
import { fillPlaceholders } from "../fixtures/placeholders.js";
import { isJsonObject } from "../model/json.js";
import { runPipeline, type RunPorts } from "../run-pipeline.js";
import { framesToSignals, freshRunSetup, withInterruptsShown } from "../runs/fresh-run.js";
import { bearerAuth } from "./auth.js";
import { jsonBody } from "./json-body.js";
import { requestLanguage } from "./request-language.js";
import { FlowGate } from "../runs/flow-gate.js";
import { ReplaySlots } from "./replay-slots.js";
import { pipeToSse, type SseSinkOptions } from "./sse-sink.js";

/** Recordings of long pipeline runs come to a few MiB; the cap keeps one upload from holding much more. */
export const MAX_REPLAY_BODY_BYTES = 8 * 1024 * 1024;
/** A recording's long pause (a person reading before answering) is not worth sitting through again. */
export const MAX_REPLAY_GAP_MS = 2_000;
const MAX_TIME_SCALE = 10;

export interface ReplayRequest {
  /** The fixture file's text. */
  fixture: string;
  /** The task's turn to play: 0 for the first message, 1 for the first answer, … Default 0. */
  turn: number;
  /** For a turn with `when` sections: the answer that picks one (the fallback section otherwise). */
  answer: string;
  /** Multiplies the recorded delays: 1 keeps the recording's rhythm, 0 plays it at once. Default 1. */
  timeScale: number;
}

export interface SandboxReplayOptions {
  authToken: string | undefined;
  heartbeatMs: number;
  /** How long a client may take nothing before it counts as gone (`IAC_CODE_AGUI_CLIENT_STALL_S`); the sink's default without it. */
  clientStallS?: number;
  /** Replays going at once (`IAC_CODE_AGUI_SANDBOX_MAX_REPLAYS`); `DEFAULT_SANDBOX_MAX_REPLAYS` without it. */
  maxReplays?: number | undefined;
  /** The SSE sink's high-water mark, and a look at its pressure, as runs have them (see `sse-sink.ts`). */
  sse?: Pick<SseSinkOptions, "highWaterMark" | "onPressure">;
}

const invalid = (detail: string) => new AguiError("INVALID_INPUT", { reason: "fixture", detail: detail.slice(0, 500) });

export function readReplayRequest(body: unknown): ReplayRequest {
  if (!isJsonObject(body) || typeof body.fixture !== "string" || body.fixture.trim() === "") {
    throw invalid('the body must be {"fixture": "<the .jsonl file\'s text>", "turn"?: N, "answer"?: "…", "timeScale"?: 0…10}');
  }
  const turn = body.turn ?? 0;
  if (typeof turn !== "number" || !Number.isInteger(turn) || turn < 0) throw invalid('"turn" must be an integer ≥ 0');
  const answer = body.answer ?? "";
  if (typeof answer !== "string") throw invalid('"answer" must be a string');
  const timeScale = body.timeScale ?? 1;
  if (typeof timeScale !== "number" || !(timeScale >= 0 && timeScale <= MAX_TIME_SCALE)) {
    throw invalid(`"timeScale" must be a number from 0 to ${MAX_TIME_SCALE}`);
  }
  return { fixture: body.fixture, turn, answer, timeScale };
}

/** Whether a value has containers more than `levels` deep, walked without recursion: the value is an upload's. */
function nestsDeeperThan(value: unknown, levels: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    if (depth === levels) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The lines of the turn asked for, or the reason there are none. */
export function linesToReplay({ fixture, turn, answer }: ReplayRequest): FixtureLine[] {
  let sections;
  try {
    sections = parseFixture(fixture, "the fixture");
  } catch (error) {
    if (error instanceof FixtureFormatError) throw invalid(error.message);
    throw error;
  }
  const section = sectionFor(sections, turn, answer);
  if (section === undefined) {
    const turns = [...new Set(sections.map((s) => s.turn))].join(", ");
    throw invalid(`the fixture has no section for turn ${turn} (its turns: ${turns || "none"})`);
  }
  // What a kernel sends is refused past this depth as it is read (rpc-errors.ts); a recording of it is held to the same.
  const deep = section.lines.findIndex((line) => nestsDeeperThan(line.frame, MAX_KERNEL_JSON_DEPTH));
  if (deep >= 0) throw invalid(`line ${deep + 1} of turn ${turn} nests deeper than ${MAX_KERNEL_JSON_DEPTH} levels`);
  return section.lines;
}

/**
 * A recorded drop (line `line` of the turn's section, 1-based), as the
 * run's end: a live run re-attaches to the kernel's task past it
 * (`run.ts`, `followDropsOf`) and gets what the kernel published
 * meanwhile, which a replay, with no kernel, cannot. Ending with the
 * reason beats the chain's "stream ended while working", which tells a
 * person nothing about a recording.
 */
function droppedStream(line: number, turn: number, rest: number): AguiError {
  return new AguiError("A2A_UNAVAILABLE", { reason: "replayDrop", line, turn, rest });
}

/**
 * The section's lines as the kernel's stream would bring them: each frame
 * after its delay, an error line as the kernel's JSON-RPC error, a drop as
 * the end of the stream, told as such (`droppedStream`).
 */
export function replayedFrames(
  lines: readonly FixtureLine[],
  timeScale: number,
  ids: { taskId: string; contextId: string },
  gate?: ReadGate,
  turn = 0,
): Observable<JsonRpcResult> {
  const cut = lines.findIndex((line) => line.drop === true);
  const played = cut < 0 ? lines : lines.slice(0, cut);
  const afterPlayed = cut < 0 ? EMPTY : throwError(() => droppedStream(cut + 1, turn, lines.length - cut - 1));
  // As a kernel's stream is read: each line waits while the client is behind, so what it has not taken stays here, unplayed.
  const whenClientReady = (line: FixtureLine) =>
    defer(() => {
      const opened = gate?.whenOpen();
      return opened === undefined ? of(line) : from(opened).pipe(map(() => line));
    });
  return from(played).pipe(
    concatMap(whenClientReady),
    concatMap((line) => {
      const wait = Math.min(line.delayMs * timeScale, MAX_REPLAY_GAP_MS);
      const after = wait > 0 ? timer(wait).pipe(map(() => line)) : of(line);
      return after.pipe(
        concatMap((due) => {
          if (due.error) return throwError(() => executionFailed(due.error!));
          return due.frame === undefined ? EMPTY : of(fillPlaceholders(due.frame, ids) as JsonRpcResult);
        }),
      );
    }),
    concatWith(afterPlayed),
  );
}

/** The ports of a run that keeps nothing: no thread on disk, no task to cancel, interrupts shown and forgotten. */
function replayPorts(language: string): RunPorts {
  return {
    persistIds: () => undefined,
    settleAndPersistEnd: (end) => withInterruptsShown(end, language),
  };
}

function replay(req: Request, res: Response, { heartbeatMs, clientStallS, sse }: SandboxReplayOptions): void {
  const request = readReplayRequest(req.body);
  const lines = linesToReplay(request);
  const language = requestLanguage(req);
  const threadId = `sandbox-replay-${randomUUID()}`;
  const runId = `replay-${randomUUID()}`;
  const ids = { taskId: randomUUID(), contextId: `sandbox-replay-${randomUUID()}` };
  const describe = (error: AguiError) => describeError(error, language);
  const gate = new FlowGate();
  const items$ = replayedFrames(lines, request.timeScale, ids, gate, request.turn).pipe(
    framesToSignals(),
    runPipeline(
      freshRunSetup(
        { threadId, runId, executionId: randomUUID(), contextId: ids.contextId, rosInvocationId: "sandbox-replay" },
        { describe, heartbeatMs },
      ),
      replayPorts(language),
    ),
  );
  // The chain ends every failure in RUN_ERROR; what reaches here is the sink's own, after the stream is over.
  pipeToSse(items$, res, () => undefined, {
    ...sse,
    gate,
    ...(clientStallS === undefined ? {} : { stallMs: clientStallS * 1000 }),
  });
}

/** The replay route, for the sandbox's router: the token first, then a capped JSON body. */
export function sandboxReplayRoute(options: SandboxReplayOptions): express.Router {
  const router = express.Router();
  const handle: RequestHandler = (req, res, next) => {
    try {
      replay(req, res, options);
    } catch (error) {
      next(error);
    }
  };
  // The slot is taken before the body is read (an upload is most of what a replay holds) and kept until the connection closes.
  const slots = new ReplaySlots(options.maxReplays);
  const takeSlot: RequestHandler = (_req, res, next) => {
    try {
      res.once("close", slots.take());
      next();
    } catch (error) {
      next(error);
    }
  };
  router.post("/replay", bearerAuth(options.authToken), takeSlot, jsonBody(MAX_REPLAY_BODY_BYTES), handle);
  return router;
}
