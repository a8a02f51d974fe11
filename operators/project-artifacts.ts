/**
 * Artifact signals → CUSTOM `iac-code.artifact.v1` with the kernel artifact
 * as its value (R-CUS-2, wire contract §7); the data parts of a plain
 * agent's message (`model/agent-message-parts.ts`) → CUSTOM
 * `iac-code.message-data.v1` with that message, its data parts only:
 *
 *   {artifactId, name, parts, metadata} → CUSTOM {schemaVersion: 1, artifactId, name, parts, metadata}
 *   {messageId, role, parts: [data…]}   → CUSTOM {schemaVersion: 1, messageId, role, parts: [data…]}
 */
import { EventType } from "@ag-ui/core";
import type { OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";
import { isSignal, type RunItem } from "../lib/model/kernel-signal.js";

export const ARTIFACT_EVENT = "iac-code.artifact.v1";
export const MESSAGE_DATA_EVENT = "iac-code.message-data.v1";

export function projectArtifacts(): OperatorFunction<RunItem, RunItem> {
  // `emitEach`, not `map`: it then runs in one subscriber with the detail stages around it.
  return emitEach((item): RunItem => {
    if (!isSignal(item)) return item;
    if (item.kind === "artifact") return { type: EventType.CUSTOM, name: ARTIFACT_EVENT, value: { schemaVersion: 1, ...item.artifact } };
    if (item.kind === "message-data") {
      return { type: EventType.CUSTOM, name: MESSAGE_DATA_EVENT, value: { schemaVersion: 1, ...item.message } };
    }
    return item;
  });
}
