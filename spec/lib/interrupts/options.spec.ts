import { describe, expect, it } from "@jest/globals";
import { AguiError } from "../../../lib/errors.js";
import { deploymentOptions, parameterOverrides } from "../../../lib/interrupts/deployment-options.js";
import { selectionMessage, standardOptions } from "../../../lib/interrupts/options.js";

describe("standardOptions", () => {
  it("takes ids from id, then candidate_index, then the position", () => {
    expect(standardOptions([{ id: "a", label: "A" }, { candidate_index: 7, name: "Seven" }, { title: "Third" }])).toEqual([
      { id: "a", title: "A" },
      { id: "7", title: "Seven" },
      { id: "2", title: "Third" },
    ]);
  });

  it("treats a null id as absent", () => {
    expect(standardOptions([{ id: null, candidate_index: 3 }])).toEqual([{ id: "3", title: "3" }]);
  });

  it("takes titles from label, then name, then title, then the id, skipping empty values", () => {
    expect(
      standardOptions([
        { id: "a", label: "L", name: "N", title: "T" },
        { id: "b", label: "", name: "N", title: "T" },
        { id: "c", title: "T" },
        { id: "d" },
      ]).map((o) => o.title),
    ).toEqual(["L", "N", "T", "d"]);
  });

  it("suffixes repeated ids with -2, -3, …, skipping ids already taken", () => {
    expect(standardOptions([{ id: "x" }, { id: "x" }, { id: "x-3" }, { id: "x" }]).map((o) => o.id)).toEqual(["x", "x-2", "x-3", "x-4"]);
  });

  it("names an option with an empty id by its 1-based position, and accepts bare strings", () => {
    expect(standardOptions([{ id: "" }, "plain"])).toEqual([
      { id: "option-1", title: "" },
      { id: "plain", title: "plain" },
    ]);
  });

  it("has no options when the kernel sent none or not a list", () => {
    expect(standardOptions(undefined)).toEqual([]);
    expect(standardOptions({ id: "a" })).toEqual([]);
  });
});

describe("selectionMessage", () => {
  it("lists the options under the prompt", () => {
    expect(
      selectionMessage("Pick", [
        { id: "a", title: "A" },
        { id: "b", title: "B" },
      ]),
    ).toBe("Pick\n- a: A\n- b: B");
    expect(selectionMessage("Pick", [])).toBe("Pick");
  });
});

describe("deploymentOptions", () => {
  const valid = [
    { id: "go", action: "confirm" },
    { id: "again", action: "reselect" },
    { id: "tweak", action: "adjust" },
    { id: "go2", action: "confirm" },
  ];

  it("maps each id to its action and lists the distinct actions sorted", () => {
    const options = deploymentOptions(valid);
    expect(options.actions).toEqual(["adjust", "confirm", "reselect"]);
    expect(options.actionById.get("tweak")).toBe("adjust");
    expect(options.standard.map((o) => o.id)).toEqual(["go", "again", "tweak", "go2"]);
  });

  it("accepts an id of exactly 200 characters", () => {
    expect(() => deploymentOptions([{ id: "x".repeat(200), action: "confirm" }])).not.toThrow();
  });

  it.each([
    ["no options", undefined, "options: must be a non-empty list"],
    ["an empty list", [], "options: must be a non-empty list"],
    ["an option that is not an object", ["go"], "options[0]: must be an object"],
    ["a missing id", [{ action: "confirm" }], "options[0].id"],
    ["a blank id", [{ id: "  ", action: "confirm" }], "options[0].id"],
    ["a numeric id", [{ id: 1, action: "confirm" }], "options[0].id"],
    ["an id over 200 characters", [{ id: "x".repeat(201), action: "confirm" }], "options[0].id"],
    [
      "a repeated id",
      [
        { id: "go", action: "confirm" },
        { id: "go", action: "cancel" },
      ],
      "options[1].id: must be unique",
    ],
    ["a missing action", [{ id: "go" }], "options[0].action"],
    ["an unknown action", [{ id: "go", action: "deploy" }], "options[0].action: must be one of confirm, adjust, reselect, cancel"],
  ])("rejects %s as A2A_PROTOCOL_ERROR", (_, options, detail) => {
    let error: unknown;
    try {
      deploymentOptions(options);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AguiError);
    expect((error as AguiError).code).toBe("A2A_PROTOCOL_ERROR");
    expect(String((error as AguiError).params.detail)).toContain(detail);
  });
});

describe("parameterOverrides", () => {
  it("defaults to {}, trims keys and drops null values", () => {
    expect(parameterOverrides(undefined)).toEqual({});
    expect(parameterOverrides({ " Size ": 2, Gone: null })).toEqual({ Size: 2 });
  });

  it("is undefined for a blank key or a non-object", () => {
    expect(parameterOverrides({ " ": 1 })).toBeUndefined();
    expect(parameterOverrides([1])).toBeUndefined();
  });
});
