import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import type { JsonObject } from "../../lib/model/json.js";
import { toA2AUpdate, unwrapStreamResponse, type A2AUpdate } from "../../operators/unwrap-stream-response.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

const task = { id: "t1", contextId: "c1", status: { state: "TASK_STATE_WORKING" } };
const statusUpdate = { taskId: "t1", contextId: "c1", status: { state: "TASK_STATE_COMPLETED" } };
const artifactUpdate = { taskId: "t1", contextId: "c1", artifact: { artifactId: "a1", parts: [{ text: "plan.json" }] } };
const message = { messageId: "m1", role: "ROLE_AGENT", parts: [{ text: "Hello" }] };

describe("unwrapStreamResponse", () => {
  it("unwraps each kind of A2A 1.0 StreamResponse and tags it by its key", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const results = cold<JsonObject>("tsam|", { t: { task }, s: { statusUpdate }, a: { artifactUpdate }, m: { message } });
      expectObservable(results.pipe(unwrapStreamResponse())).toBe("tsam|", {
        t: { kind: "task", body: task },
        s: { kind: "statusUpdate", body: statusUpdate },
        a: { kind: "artifactUpdate", body: artifactUpdate },
        m: { kind: "message", body: message },
      });
      expectSubscriptions(results.subscriptions).toBe("^---!");
    });
  });

  it("reads a result with no wrapper (GetTask's bare Task, or a kernel that sends payloads bare) by its shape", () => {
    marbles().run(({ cold, expectObservable }) => {
      const results = cold<JsonObject>("tsam", { t: task, s: statusUpdate, a: artifactUpdate, m: message });
      expectObservable(results.pipe(unwrapStreamResponse())).toBe("tsam", {
        t: { kind: "task", body: task },
        s: { kind: "statusUpdate", body: statusUpdate },
        a: { kind: "artifactUpdate", body: artifactUpdate },
        m: { kind: "message", body: message },
      });
    });
  });

  it("hands the payload on as it came, not a copy: the wrapped one, or the bare result itself", () => {
    expect(toA2AUpdate({ statusUpdate }).body).toBe(statusUpdate);
    expect(toA2AUpdate(task).body).toBe(task);
  });

  it("takes the wrapper keys in one order, task, statusUpdate, artifactUpdate, message, whatever the object's own order", () => {
    expect(toA2AUpdate({ message, statusUpdate })).toEqual({ kind: "statusUpdate", body: statusUpdate });
    expect(toA2AUpdate({ artifactUpdate, task })).toEqual({ kind: "task", body: task });
    expect(toA2AUpdate({ message, artifactUpdate })).toEqual({ kind: "artifactUpdate", body: artifactUpdate });
  });

  it("skips a wrapper key whose value is not an object, and takes the next", () => {
    for (const notAnObject of [null, "t1", 7, true, [task]]) {
      expect(toA2AUpdate({ task: notAnObject, statusUpdate })).toEqual({ kind: "statusUpdate", body: statusUpdate });
    }
  });

  it("reads a malformed result by its shape, the result whole as the body, never failing the stream", () => {
    const cases: Array<[JsonObject, A2AUpdate["kind"]]> = [
      // Nothing it could be: a status update with nothing in it, which the next stage reads as no signal.
      [{}, "statusUpdate"],
      // Wrapper keys with nothing usable under them: the result itself, by its shape.
      [{ task: null }, "statusUpdate"],
      [{ message: "Hello" }, "statusUpdate"],
      // An artifact under any task id is an artifact update; parts with a role, a message, even beside an id.
      [{ taskId: "t1", artifact: null }, "artifactUpdate"],
      [{ id: "x", role: "ROLE_AGENT", parts: [] }, "message"],
      // Parts without a role are no message; an id beside a task id is no task.
      [{ parts: [{ text: "Hello" }] }, "statusUpdate"],
      [{ id: "t1", taskId: "t1", status: {} }, "statusUpdate"],
    ];
    for (const [result, kind] of cases) expect(toA2AUpdate(result)).toEqual({ kind, body: result });

    marbles().run(({ cold, expectObservable }) => {
      const results = cold<JsonObject>("ab|", { a: {}, b: { task: null } });
      expectObservable(results.pipe(unwrapStreamResponse())).toBe("ab|", {
        a: { kind: "statusUpdate", body: {} },
        b: { kind: "statusUpdate", body: { task: null } },
      });
    });
  });
});

describe("unwrapStreamResponse and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const results = cold<JsonObject>("a-b-c|", { a: { task }, b: { statusUpdate }, c: { message } });
      expectObservable(results.pipe(inChain(unwrapStreamResponse())), "^--!").toBe("a-b", {
        a: { kind: "task", body: task },
        b: { kind: "statusUpdate", body: statusUpdate },
      });
      expectSubscriptions(results.subscriptions).toBe("^--!");
    });
  });

  it("stops a synchronous source when the subscriber leaves", () => {
    const { source, sent } = synchronousSource<JsonObject>([{ task }, { statusUpdate }, { message }]);
    source.pipe(unwrapStreamResponse(), take(1)).subscribe();
    expect(sent).toEqual([{ task }]);
  });
});
