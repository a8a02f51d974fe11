import { describe, expect, it } from "@jest/globals";
import { isJsonObject } from "../../../lib/model/json.js";

describe("isJsonObject", () => {
  it.each([{}, { a: 1 }, Object.create(null) as object, JSON.parse('{"nested":{"x":[1]}}') as unknown])(
    "accepts the object %p",
    (value) => {
      expect(isJsonObject(value)).toBe(true);
    },
  );

  it.each([null, undefined, [], [{ a: 1 }], "{}", 0, true])("refuses %p, whose fields cannot be read as an object's", (value) => {
    expect(isJsonObject(value)).toBe(false);
  });
});
