/**
 * The text a store writes is serialised once (`documentText`): it must be
 * exactly what stringifying the checked, parsed document gives, so the
 * bytes on disk are the document the schema passed.
 */
import { describe, expect, it } from "@jest/globals";
import { documentText } from "../../../lib/state/thread-state-codec.js";
import { StatePersistenceError } from "../../../lib/state/thread-store.js";
import type { ThreadState } from "../../../lib/state/thread-state.js";
import { threadState } from "./thread-state-fixture.js";

describe("documentText", () => {
  it("is the text of the parsed document, integer-like and non-ASCII keys included", () => {
    const base = threadState("codec-thread");
    const state = {
      ...base,
      runDigests: { "run-b": "b".repeat(64), "10": "c".repeat(64), "2": "d".repeat(64), "rún-é😀": "e".repeat(64) },
    } as ThreadState;
    const text = documentText(state, "codec-thread.json");
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(state)));
  });

  it("leaves out what is not a stored field, and is not changed by later edits of the state", () => {
    const state = { ...threadState("codec-thread"), notAField: 1 } as ThreadState;
    const text = documentText(state, "codec-thread.json");
    (state as { cwd: string }).cwd = "/elsewhere";
    expect(JSON.parse(text)).not.toHaveProperty("notAField");
    expect(JSON.parse(text).cwd).toBe(threadState("codec-thread").cwd);
  });

  it("refuses a state the schema refuses, and one that is not JSON", () => {
    expect(() => documentText({ ...threadState("codec-thread"), cwd: 7 } as unknown as ThreadState, "x.json")).toThrow(
      StatePersistenceError,
    );
    const unserialisable = { ...threadState("codec-thread"), cwd: 1n } as unknown as ThreadState;
    expect(() => documentText(unserialisable, "x.json")).toThrow(/not serialisable as JSON/);
  });
});
