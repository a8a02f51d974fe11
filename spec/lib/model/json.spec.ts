import { describe, expect, it } from "@jest/globals";
import { isJsonObject, isNonEmptyString, nonEmptyString } from "../../../lib/model/json.js";

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

describe("isNonEmptyString and nonEmptyString", () => {
  it("take a string with at least one character, spaces included", () => {
    for (const value of ["a", " ", "task-1"]) {
      expect(isNonEmptyString(value)).toBe(true);
      expect(nonEmptyString(value)).toBe(value);
    }
  });

  it.each(["", undefined, null, 0, 1, ["a"], { id: "a" }])("treat %p as absent", (value) => {
    expect(isNonEmptyString(value)).toBe(false);
    expect(nonEmptyString(value)).toBeUndefined();
  });

  it("let a fallback follow an absent value", () => {
    expect(nonEmptyString("") ?? nonEmptyString("run-2") ?? "pipeline").toBe("run-2");
  });
});
