import { describe, expect, it } from "@jest/globals";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { INTERRUPT_SCHEMAS_DIR, selectionResponseSchema } from "../../../lib/interrupts/response-schemas.js";

const files = readdirSync(INTERRUPT_SCHEMAS_DIR).filter((file) => file.endsWith(".schema.json"));

describe("schemas/interrupts", () => {
  it("holds the permission, option, free-text, resource and deployment schemas", () => {
    expect(files.sort()).toEqual([
      "deployment-action.schema.json",
      "deployment-option.schema.json",
      "free-text.schema.json",
      "permission-response.schema.json",
      "resource-cancellation.schema.json",
      "resource-value.schema.json",
      "selected-option.schema.json",
    ]);
  });

  it.each(files)("%s is a valid 2020-12 schema under ajv strict mode, with a unique $id", (file) => {
    const schema = JSON.parse(readFileSync(path.join(INTERRUPT_SCHEMAS_DIR, file), "utf8"));
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.$id).toMatch(/^urn:iac-code:agui:schema:interrupt:[a-z-]+:v1$/);
    expect(() => new Ajv2020({ strict: true }).compile(schema)).not.toThrow();
  });

  it("templates are copied, never filled in place", () => {
    const first = selectionResponseSchema([{ id: "a", title: "A" }], false);
    const second = selectionResponseSchema([{ id: "b", title: "B" }], false);
    expect(JSON.stringify(first)).toContain('"const":"a"');
    expect(JSON.stringify(second)).not.toContain('"const":"a"');
  });
});
