import { describe, expect, it } from "@jest/globals";
import { take } from "rxjs";
import { EventType } from "@ag-ui/core";
import type { RunItem } from "../../lib/model/kernel-signal.js";
import { projectArtifacts } from "../../operators/project-artifacts.js";
import { inChain, marbles, synchronousSource } from "../support/marbles.js";

describe("projectArtifacts", () => {
  it("turns an artifact into CUSTOM iac-code.artifact.v1 carrying the kernel artifact", () => {
    const artifact = {
      artifactId: "a1",
      name: "template.yaml",
      parts: [{ url: "file:///w/template.yaml", filename: "template.yaml", mediaType: "text/yaml" }],
      metadata: { uri: "file:///w/template.yaml", mediaType: "text/yaml", byteSize: 120.0, sha256: "ab" },
    };
    const other: RunItem = { kind: "task-state", state: "working" };
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("ab|", { a: { kind: "artifact", artifact } as RunItem, b: other });
      expectObservable(items.pipe(projectArtifacts())).toBe("cb|", {
        c: { type: EventType.CUSTOM, name: "iac-code.artifact.v1", value: { schemaVersion: 1, ...artifact } },
        b: other,
      });
      expectSubscriptions(items.subscriptions).toBe("^-!");
    });
  });
});

describe("projectArtifacts, for a plain agent's message data", () => {
  it("turns message data into CUSTOM iac-code.message-data.v1 carrying the message with its data parts", () => {
    const message = { messageId: "m1", role: "ROLE_AGENT", parts: [{ data: { city: "Hangzhou" }, mediaType: "application/json" }] };
    marbles().run(({ cold, expectObservable }) => {
      expectObservable(cold("a|", { a: { kind: "message-data", message } as RunItem }).pipe(projectArtifacts())).toBe("c|", {
        c: { type: EventType.CUSTOM, name: "iac-code.message-data.v1", value: { schemaVersion: 1, ...message } },
      });
    });
  });
});

describe("projectArtifacts and its subscription", () => {
  const other: RunItem = { kind: "task-state", state: "working" };

  it("should not break unsubscription chain when unsubscribed explicitly", () => {
    marbles().run(({ cold, expectObservable, expectSubscriptions }) => {
      const items = cold("a-b-c|", { a: other, b: other, c: other });
      expectObservable(items.pipe(inChain(projectArtifacts())), "^--!").toBe("a-b", { a: other, b: other });
      expectSubscriptions(items.subscriptions).toBe("^--!");
    });
  });

  it("reads a synchronous source, and stops it when the subscriber leaves", () => {
    const whole = synchronousSource([other, other]);
    const seen: RunItem[] = [];
    whole.source.pipe(projectArtifacts()).subscribe((item) => seen.push(item));
    expect(seen).toEqual([other, other]);

    const { source, sent } = synchronousSource([other, other, other]);
    source.pipe(projectArtifacts(), take(1)).subscribe();
    expect(sent).toEqual([other]);
  });
});
