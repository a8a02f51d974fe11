/**
 * Neutralizes terminal control in every text leaf of every event (R-SIB-8):
 * a kernel's tool output may carry ANSI escape sequences or C0/C1 control
 * characters that would move a terminal's cursor, retitle a window or hide
 * text when a client prints them. Escape sequences (CSI, OSC, and other
 * ESC-introduced ones) are removed; any other control character but tab and
 * newline becomes U+FFFD, so nothing vanishes silently. So do the
 * bidirectional embeddings, overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069), which reorder what a reader sees ("Trojan Source"); the
 * marks (LRM, RLM, ALM) stay, since right-to-left text needs them and they
 * reorder nothing. Tool arguments are JSON text, where a control character
 * travels as an escape (`\u001b`) that the client's JSON.parse turns back
 * into the raw character: there such escapes become `\ufffd`. The run's own
 * ids (thread, run) are the client's and pass unchanged.
 *
 *   "\x1b[31mred\x1b[0m\x07" → "red\uFFFD"
 *   '{"a":"\\u001b[2J"}'    → '{"a":"\\ufffd[2J"}'   (TOOL_CALL_ARGS delta)
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import type { OperatorFunction } from "rxjs";
import { emitEach } from "./emit-each.js";

// OSC (ESC ] … BEL | ESC \), CSI (ESC [ params final), and two-byte ESC sequences, plus their C1 forms.
const ESCAPE_SEQUENCE =
  /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x9d[^\x07\x1b\x9c]*(?:\x07|\x9c)?|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|\x1b[ -/]*[0-~]?/g;
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
const ANY_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
/** One escape of JSON text: `\uXXXX`, or a backslash and the character it escapes (so `\\` is read as a pair). */
const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|([^u]))/g;
/** The short escapes of control characters (tab and newline stay, as in text). */
const CONTROL_SHORT_ESCAPES = new Set(["b", "f", "r"]);
const KEPT_AS_SENT = new Set(["threadId", "runId", "parentRunId"]);

export function neutralizeText(text: string): string {
  if (!ANY_CONTROL.test(text)) return text;
  return text.replace(ESCAPE_SEQUENCE, "").replace(CONTROL, "\uFFFD");
}

/** JSON text (or a piece of it) whose escapes can spell no control character once parsed. */
export function neutralizeJsonText(text: string): string {
  const raw = neutralizeText(text);
  if (!raw.includes("\\")) return raw;
  return raw.replace(JSON_ESCAPE, (escape, hex: string | undefined, short: string | undefined) => {
    const spelled = hex === undefined ? CONTROL_SHORT_ESCAPES.has(short!) : ANY_CONTROL.test(String.fromCharCode(parseInt(hex, 16)));
    return spelled ? "\\ufffd" : escape;
  });
}

/** The value with every string neutralized; the same object when nothing changed, so clean events cost no copy. */
function neutralize(value: unknown): unknown {
  if (typeof value === "string") return neutralizeText(value);
  if (value === null || typeof value !== "object") return value;
  // Plain loops, no per-event arrays: this runs on every event of every run.
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = neutralize(value[i]);
      if (next !== value[i]) (out ??= [...value])[i] = next;
    }
    return out ?? value;
  }
  const record = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key in record) {
    const item = record[key];
    // Numbers, booleans and absent fields first, before the set lookup: most fields of a step's facts are such.
    if (typeof item !== "string" && (item === null || typeof item !== "object")) continue;
    if (KEPT_AS_SENT.has(key)) continue;
    const next = neutralize(item);
    if (next !== item) (out ??= { ...record })[key] = next;
  }
  return out ?? value;
}

/**
 * A text delta, the event a run sends most, checked field by field: its
 * strings are tested as they are, without walking its keys. Its schema has
 * no other string field but `rawEvent`; one that carries it, or control,
 * goes the general way, so both ways neutralize alike.
 */
const isCleanTextContent = (event: AGUIEvent): boolean =>
  event.type === EventType.TEXT_MESSAGE_CONTENT &&
  event.rawEvent === undefined &&
  !ANY_CONTROL.test(event.delta) &&
  !ANY_CONTROL.test(event.messageId);

export function neutralizeTerminalControls(): OperatorFunction<AGUIEvent, AGUIEvent> {
  // `emitEach`, not `map`: one subscriber with no closures, which every open stream keeps while it lasts.
  return emitEach((event: AGUIEvent): AGUIEvent => {
    if (isCleanTextContent(event)) return event;
    const clean = neutralize(event) as AGUIEvent;
    if (clean.type !== EventType.TOOL_CALL_ARGS) return clean;
    const delta = neutralizeJsonText(clean.delta);
    return delta === clean.delta ? clean : { ...clean, delta };
  });
}
