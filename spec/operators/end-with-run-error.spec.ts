import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { map, mergeMap, of, throwError } from "rxjs";
import { endWithRunError } from "../../operators/end-with-run-error.js";
import { marbles } from "../support/marbles.js";

const text: AGUIEvent = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: "m", delta: "hi" };
const finished: AGUIEvent = { type: EventType.RUN_FINISHED, threadId: "t", runId: "r" };
const runError = (error: unknown): AGUIEvent => ({ type: EventType.RUN_ERROR, code: "INTERNAL_ERROR", message: String(error) });

describe("endWithRunError", () => {
  it("turns a failure into RUN_ERROR and completes", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-a-#", { a: text }, "boom");
      expectObservable(source.pipe(endWithRunError(runError))).toBe("-a-(e|)", { a: text, e: runError("boom") });
      expectSubscriptions(source.subscriptions).toBe("^--!");
    });
  });

  it("only ends the stream when the run has told its end already", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-a-f-#", { a: text, f: finished });
      expectObservable(source.pipe(endWithRunError(runError))).toBe("-a-f-|", { a: text, f: finished });
      expectSubscriptions(source.subscriptions).toBe("^----!");
    });
  });

  it("tells the opening first when the failure comes before anything passed", () => {
    const started: AGUIEvent = { type: EventType.RUN_STARTED, threadId: "t", runId: "r" };
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<AGUIEvent>("-#", {}, "boom");
      expectObservable(source.pipe(endWithRunError(runError, [started]))).toBe("-(se|)", { s: started, e: runError("boom") });
      expectSubscriptions(source.subscriptions).toBe("^!");
    });
  });

  it("passes a source that does not fail untouched", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-a-f|", { a: text, f: finished });
      expectObservable(source.pipe(endWithRunError(runError))).toBe("-a-f|", { a: text, f: finished });
      expectSubscriptions(source.subscriptions).toBe("^---!");
    });
  });

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold("-a-a-a-a-|", { a: text });
      const result = source.pipe(
        mergeMap((item) => of(item)),
        endWithRunError(runError),
        mergeMap((item) => of(item)),
      );
      expectObservable(result, "^----!").toBe("-a-a-", { a: text });
      expectSubscriptions(source.subscriptions).toBe("^----!");
    });
  });

  it("handles a synchronous source, and a failure thrown by a stage before it", () => {
    const seen: AGUIEvent[] = [];
    of(text, text)
      .pipe(
        map((item, index) => {
          if (index === 1) throw new Error("stage");
          return item;
        }),
        endWithRunError(runError),
      )
      .subscribe((item) => seen.push(item));
    expect(seen).toEqual([text, runError(new Error("stage"))]);
    const after: AGUIEvent[] = [];
    throwError(() => "early")
      .pipe(endWithRunError(runError))
      .subscribe((item) => after.push(item));
    expect(after).toEqual([runError("early")]);
  });
});
