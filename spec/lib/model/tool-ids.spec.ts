import { describe, expect, it } from "@jest/globals";
import { newToolCallId } from "../../../lib/model/tool-ids.js";

describe("newToolCallId", () => {
  it("is tool- and 32 hex digits, new on every call", () => {
    const ids = new Set(Array.from({ length: 100 }, newToolCallId));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^tool-[0-9a-f]{32}$/);
  });
});
