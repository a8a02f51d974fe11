import { describe, it } from "@jest/globals";
import { EventType } from "@ag-ui/core";
import type { RunItem } from "../../lib/model/kernel-signal.js";
import { projectArtifacts } from "../../operators/project-artifacts.js";
import { marbles } from "../support/marbles.js";

describe("projectArtifacts", () => {
  it("turns an artifact into CUSTOM iac-code.artifact.v1 carrying the kernel artifact", () => {
    const artifact = {
      artifactId: "a1",
      name: "template.yaml",
      parts: [{ url: "file:///w/template.yaml", filename: "template.yaml", mediaType: "text/yaml" }],
      metadata: { uri: "file:///w/template.yaml", mediaType: "text/yaml", byteSize: 120.0, sha256: "ab" },
    };
    const other: RunItem = { kind: "task-state", state: "working" };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("ab", { a: { kind: "artifact", artifact } as RunItem, b: other }).pipe(projectArtifacts())).toBe("cb", {
        c: { type: EventType.CUSTOM, name: "iac-code.artifact.v1", value: { schemaVersion: 1, ...artifact } },
        b: other,
      });
    });
  });
});
