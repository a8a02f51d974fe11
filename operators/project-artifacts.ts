/**
 * Artifact signals → CUSTOM `iac-code.artifact.v1` with the kernel artifact
 * as its value (R-CUS-2, wire contract §7):
 *
 *   {artifactId, name, parts, metadata} → CUSTOM {schemaVersion: 1, artifactId, name, parts, metadata}
 */
import { EventType } from "@ag-ui/core";
import { map, type OperatorFunction } from "rxjs";
import { isSignalOf, type RunItem } from "../lib/model/kernel-signal.js";

export const ARTIFACT_EVENT = "iac-code.artifact.v1";

const isArtifact = isSignalOf("artifact");

export function projectArtifacts(): OperatorFunction<RunItem, RunItem> {
  return map((item) =>
    isArtifact(item) ? { type: EventType.CUSTOM, name: ARTIFACT_EVENT, value: { schemaVersion: 1, ...item.artifact } } : item,
  );
}
