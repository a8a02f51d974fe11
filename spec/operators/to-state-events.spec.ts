import { describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type JsonPatchOperation } from "@ag-ui/core";
import fc from "fast-check";
import { from, lastValueFrom, take, toArray } from "rxjs";
import { canonicalJson } from "../../lib/model/json.js";
import { toStateEvents } from "../../operators/to-state-events.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

type Status = Record<string, unknown>;

const snapshot = (status: Status): AGUIEvent => ({ type: EventType.STATE_SNAPSHOT, snapshot: status });
const atSequence = (sequence: number): Status => ({ pipeline: { sequence } });
const delta = (...operations: JsonPatchOperation[]): AGUIEvent => ({ type: EventType.STATE_DELTA, delta: operations });

/**
 * RFC 6902 applied to the top level of a status, as a client would, but
 * stricter than the RFC where a slip would hide: every path must name one
 * top-level member (RFC 6901 escapes undone), `replace` and `remove` need it
 * to exist (as the RFC says), and `add` needs it absent (the RFC would let
 * `add` overwrite, which would hide a patch that reads a key as new when
 * the client has it).
 */
function applyTopLevel(status: Status, patch: readonly JsonPatchOperation[]): Status {
  const next = { ...status };
  for (const operation of patch) {
    if (!/^\/[^/]*$/.test(operation.path)) throw new Error(`not a top-level pointer: ${operation.path}`);
    const key = operation.path.slice(1).replaceAll("~1", "/").replaceAll("~0", "~");
    const present = Object.hasOwn(next, key);
    if (operation.op === "add" && !present) next[key] = operation.value;
    else if (operation.op === "replace" && present) next[key] = operation.value;
    else if (operation.op === "remove" && present) delete next[key];
    else throw new Error(`${operation.op} ${operation.path} does not apply to ${JSON.stringify(status)}`);
  }
  return next;
}

describe("toStateEvents", () => {
  const s1 = { runActive: true, currentSteps: ["plan"], pipeline: { sequence: 1 } };

  it("sends the first status whole, as a snapshot, an empty one too", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a|", { a: s1 }).pipe(toStateEvents())).toBe("s|", { s: snapshot(s1) });
      expectObservable(cold("a|", { a: {} }).pipe(toStateEvents())).toBe("s|", { s: snapshot({}) });
    });
  });

  it("sends a change as a delta of the changed top-level keys only: removed first, then added and replaced in the status's order", () => {
    const s2 = { runActive: true, currentSteps: ["plan", "apply"], usage: [] };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab|", { a: s1, b: s2 }).pipe(toStateEvents())).toBe("sd|", {
        s: snapshot(s1),
        d: delta(
          { op: "remove", path: "/pipeline" },
          { op: "replace", path: "/currentSteps", value: ["plan", "apply"] },
          { op: "add", path: "/usage", value: [] },
        ),
      });
    });
  });

  it("replaces a changed nested value whole, not the inner path that changed", () => {
    marbles().run(({ cold, expectObservable }) => {
      const deeper = { ...s1, pipeline: { sequence: 2 } };
      expectObservable(cold("ab", { a: s1, b: deeper }).pipe(toStateEvents())).toBe("sd", {
        s: snapshot(s1),
        d: delta({ op: "replace", path: "/pipeline", value: { sequence: 2 } }),
      });
    });
  });

  it("escapes `/` and `~` in a key as a JSON Pointer must (RFC 6901)", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab", { a: { "a/b": 1, "c~d": 1 }, b: { "a/b": 2, "c~d": 2 } }).pipe(toStateEvents())).toBe("sd", {
        s: snapshot({ "a/b": 1, "c~d": 1 }),
        d: delta({ op: "replace", path: "/a~1b", value: 2 }, { op: "replace", path: "/c~0d", value: 2 }),
      });
    });
  });

  it("sends nothing for a status equal to the last one: a copy, or the same values with their keys in another order", () => {
    const reordered = { pipeline: { sequence: 1 }, currentSteps: ["plan"], runActive: true };
    const advanced = { ...s1, pipeline: { sequence: 1, lastEventType: "x" } };
    const advancedReordered = { ...s1, pipeline: { lastEventType: "x", sequence: 1 } };
    marbles().run(({ cold, expectObservable }) => {
      const statuses = cold("abcde|", { a: s1, b: { ...s1 }, c: reordered, d: advanced, e: advancedReordered });
      expectObservable(statuses.pipe(toStateEvents())).toBe("s--d-|", {
        s: snapshot(s1),
        d: delta({ op: "replace", path: "/pipeline", value: { sequence: 1, lastEventType: "x" } }),
      });
    });
  });

  it("diffs against the last status sent, so a status that comes back is a change again", () => {
    const s2 = { ...s1, runActive: false };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("abba", { a: s1, b: s2 }).pipe(toStateEvents())).toBe("sf-t", {
        s: snapshot(s1),
        f: delta({ op: "replace", path: "/runActive", value: false }),
        t: delta({ op: "replace", path: "/runActive", value: true }),
      });
    });
  });

  it("passes the source's error on", () => {
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a#", { a: s1 }, "gone").pipe(toStateEvents())).toBe("s#", { s: snapshot(s1) }, "gone");
    });
  });

  it("keeps a client that applies the snapshot and each delta at the latest status, and says nothing when nothing changed", async () => {
    const key = fc.constantFrom("runActive", "currentSteps", "a/b", "c~d", "~1", "");
    const status = fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
    // Drawn from a few statuses, so unchanged and returning ones are common; each a copy, so equal means equal
    // in value, never the same object.
    const statuses = fc.array(status, { minLength: 1, maxLength: 6 }).chain((pool) =>
      fc.array(
        fc.constantFrom(...pool).map((picked) => structuredClone(picked)),
        { minLength: 1 },
      ),
    );
    await fc.assert(
      fc.asyncProperty(statuses, async (sequence) => {
        const events = await lastValueFrom(from(sequence).pipe(toStateEvents(), toArray()));
        const [first, ...rest] = events;
        expect(first).toEqual(snapshot(sequence[0]!));
        let shown: Status = sequence[0]!;
        let previous = sequence[0]!;
        for (const next of sequence.slice(1)) {
          if (canonicalJson(next) === canonicalJson(previous)) continue;
          const event = rest.shift();
          if (event?.type !== EventType.STATE_DELTA) throw new Error(`expected a delta, got ${JSON.stringify(event)}`);
          expect(event.delta.length).toBeGreaterThan(0);
          shown = applyTopLevel(shown, event.delta as JsonPatchOperation[]);
          expect(canonicalJson(shown)).toBe(canonicalJson(next));
          previous = next;
        }
        expect(rest).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });
});

describe("toStateEvents and its subscription", () => {
  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const statuses = cold("a-b-c|", { a: atSequence(1), b: atSequence(2), c: atSequence(3) });
      expectObservable(statuses.pipe(inChain(toStateEvents())), "^--!").toBe("a-b", {
        a: snapshot(atSequence(1)),
        b: delta({ op: "replace", path: "/pipeline", value: { sequence: 2 } }),
      });
      expectSubscriptions(statuses.subscriptions).toBe("^--!");
    });
  });

  it("stops a synchronous source when the subscriber leaves", () => {
    const { source, sent } = synchronousSource([atSequence(1), atSequence(2), atSequence(3)]);
    source.pipe(toStateEvents(), take(2)).subscribe();
    expect(sent).toEqual([atSequence(1), atSequence(2)]);
  });
});
