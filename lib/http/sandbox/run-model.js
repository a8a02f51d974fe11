// @ts-check
/**
 * One run's events and the spans they open and close. Spans are kept as the
 * stream leaves them, unclosed ones included: a span the service forgot to
 * close is exactly what this page should show.
 */
import { runErrorText } from "./labels.js";

/** @typedef {"step" | "message" | "tool" | "reasoning"} SpanKind */
/** @typedef {SpanKind | "run" | "error" | "custom" | "pipeline" | "other"} Tone */
/**
 * @typedef {object} Span
 * @property {SpanKind} kind
 * @property {string} label
 * @property {number} start index of the event that opened it
 * @property {number | undefined} end index of the event that closed it; undefined while open
 * @property {string} text streamed deltas: message text, reasoning, tool arguments
 * @property {string | undefined} result a tool call's result
 * @property {boolean} failed
 * @property {boolean} resumed a tool call that started in an earlier run
 * @property {string | undefined} candidate the parallel candidate it belongs to, when it belongs to one
 */
/**
 * @typedef {object} EventEntry
 * @property {number} index
 * @property {number} at milliseconds since the request was sent
 * @property {Record<string, any>} event
 * @property {number} depth steps open around it
 * @property {Tone} tone
 * @property {Span | undefined} span the span it opened, fed or closed
 */
/** @typedef {"streaming" | "success" | "interrupt" | "answered" | "error" | "refused" | "cut" | "stopped"} RunStatus */

export const PIPELINE_EVENT = "iac-code.pipeline.v1";

/** @param {string} text */
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** @param {Record<string, any>} event @returns {Tone} */
export function toneOf(event) {
  const type = String(event.type);
  if (type === "RUN_ERROR") return "error";
  if (type.startsWith("RUN_")) return "run";
  if (type === "CUSTOM") return event.name === PIPELINE_EVENT ? "pipeline" : "custom";
  if (type.startsWith("STEP_")) return "step";
  if (type.startsWith("TEXT_MESSAGE_")) return "message";
  if (type.startsWith("TOOL_CALL_")) return "tool";
  if (type.startsWith("REASONING_")) return "reasoning";
  return "other";
}

export class RunModel {
  /** @param {{ runId: string, title: string, resume: boolean }} info */
  constructor({ runId, title, resume }) {
    this.runId = runId;
    this.title = title;
    this.resume = resume;
    /** @type {EventEntry[]} */
    this.events = [];
    /** @type {Span[]} */
    this.spans = [];
    /** Open spans by key; tool calls stay reachable after TOOL_CALL_END, for their result. @type {Map<string, Span>} */
    this.byKey = new Map();
    /** @type {RunStatus} */
    this.status = "streaming";
    this.detail = "";
    /** @type {Record<string, any>[]} */
    this.interrupts = [];
    this.heartbeats = 0;
    this.elapsedMs = 0;
    /** Candidate names from `candidate_started`, by candidate id: what a person knows a candidate by. @type {Map<string, string>} */
    this.candidateNames = new Map();
  }

  /**
   * How many steps enclose a span from its start to its end. Parallel steps
   * (a pipeline's candidates) overlap without one enclosing the other, so
   * they come out as siblings; a span that outlives its step is not under it.
   * A span still open is enclosed only by steps still open. A candidate's
   * step encloses only that candidate's spans: while two candidates stream,
   * both are open, and the second is no more inside the first than after.
   * @param {Span} span
   */
  depthOf(span) {
    const at = this.spans.indexOf(span);
    return this.spans.filter(
      (step, i) =>
        i < at &&
        step.kind === "step" &&
        (step.candidate === undefined || step.candidate === span.candidate) &&
        (step.end === undefined || (span.end !== undefined && step.end >= span.end)),
    ).length;
  }

  /**
   * Whose text a message is: the open candidate whose id its message id
   * carries (the service names pipeline messages by their candidate and
   * step, lib/model/pipeline-ids.ts), else the innermost open step.
   * @param {string} messageId @returns {{ owner: string | undefined, candidate: string | undefined }}
   */
  ownerOf(messageId) {
    const open = this.spans.filter((span) => span.kind === "step" && span.end === undefined);
    const mine = open.findLast(
      (step) =>
        step.candidate !== undefined && new RegExp(`(^|[^A-Za-z0-9])${escapeRegExp(step.candidate)}([^A-Za-z0-9]|$)`).test(messageId),
    );
    if (mine?.candidate !== undefined) return { owner: this.candidateNames.get(mine.candidate) ?? mine.label, candidate: mine.candidate };
    return { owner: open.findLast((step) => step.candidate === undefined)?.label, candidate: undefined };
  }

  get openSteps() {
    return this.spans.filter((span) => span.kind === "step" && span.end === undefined).length;
  }

  /** @param {Record<string, any>} event @param {number} at @returns {EventEntry} */
  add(event, at) {
    const index = this.events.length;
    const before = this.openSteps;
    const span = this.#track(event, index);
    const depth = event.type === "STEP_FINISHED" ? this.openSteps : before;
    /** @type {EventEntry} */
    const entry = { index, at, event, depth, tone: toneOf(event), span };
    this.events.push(entry);
    this.elapsedMs = at;
    if (event.type === "RUN_FINISHED") {
      this.interrupts = event.outcome?.type === "interrupt" ? (event.outcome.interrupts ?? []) : [];
      this.status = this.interrupts.length > 0 ? "interrupt" : "success";
    } else if (event.type === "RUN_ERROR") {
      this.status = "error";
      this.detail = runErrorText(event);
    }
    return entry;
  }

  /** @param {Record<string, any>} event @param {number} index @returns {Span | undefined} */
  #track(event, index) {
    switch (event.type) {
      case "STEP_STARTED": {
        const span = this.#open(`step:${event.stepName}`, "step", String(event.stepName), index);
        span.candidate = /^candidate:(.+):[^:]+$/.exec(span.label)?.[1];
        return span;
      }
      case "STEP_FINISHED":
        return this.#close(`step:${event.stepName}`, index);
      case "TEXT_MESSAGE_START": {
        // Parallel candidates stream at once: "assistant" alone would not say whose text a bar is.
        const { owner, candidate } = this.ownerOf(String(event.messageId));
        const role = String(event.role ?? "assistant");
        const span = this.#open(`message:${event.messageId}`, "message", owner ? `${role} · ${owner}` : role, index);
        span.candidate = candidate;
        return span;
      }
      case "TEXT_MESSAGE_CONTENT":
        return this.#append(`message:${event.messageId}`, event.delta);
      case "TEXT_MESSAGE_END":
        return this.#close(`message:${event.messageId}`, index);
      case "TOOL_CALL_START":
        return this.#open(`tool:${event.toolCallId}`, "tool", String(event.toolCallName ?? "tool"), index);
      case "TOOL_CALL_ARGS":
        return this.#append(`tool:${event.toolCallId}`, event.delta);
      case "TOOL_CALL_END":
        return this.#close(`tool:${event.toolCallId}`, index, { keep: true });
      case "TOOL_CALL_RESULT": {
        // The call's bar runs on to its result, which may come much later (after a permission, say).
        const span = this.byKey.get(`tool:${event.toolCallId}`) ?? this.#resumedTool(event.toolCallId, event.toolCallId, index);
        span.end = index;
        span.result = typeof event.content === "string" ? event.content : JSON.stringify(event.content);
        span.failed = event.metadata?.["iac-code"]?.status === "failed";
        return span;
      }
      case "REASONING_START": {
        // Named like a message: whose thinking it is says more than its id.
        const { owner, candidate } = this.ownerOf(String(event.messageId));
        const span = this.#open(
          `reasoning:${event.messageId}`,
          "reasoning",
          owner ? `reasoning · ${owner}` : String(event.messageId),
          index,
        );
        span.candidate = candidate;
        return span;
      }
      case "REASONING_MESSAGE_START":
      case "REASONING_MESSAGE_END":
        return this.byKey.get(`reasoning:${event.messageId}`) ?? this.#lastOpen("reasoning");
      case "REASONING_MESSAGE_CONTENT":
        return this.#append(`reasoning:${event.messageId}`, event.delta) ?? this.#appendTo(this.#lastOpen("reasoning"), event.delta);
      case "REASONING_END":
        return this.#close(`reasoning:${event.messageId}`, index);
      case "CUSTOM": {
        if (event.name === PIPELINE_EVENT && event.value?.eventType === "candidate_started") {
          const id = event.value.candidate?.id ?? event.value.data?.subPipelineId;
          if (typeof id === "string" && typeof event.value.candidate?.name === "string")
            this.candidateNames.set(id, event.value.candidate.name);
        }
        // Progress belongs to its tool call: selecting the call then marks its progress too.
        if (event.name !== "iac-code.tool-progress.v1") return undefined;
        const id = event.value?.toolUseId;
        return this.byKey.get(`tool:${id}`) ?? this.#resumedTool(id, event.value?.name ?? id, index);
      }
      default:
        return undefined;
    }
  }

  /** @param {string} key @param {SpanKind} kind @param {string} label @param {number} index */
  #open(key, kind, label, index) {
    /** @type {Span} */
    const span = {
      kind,
      label,
      start: index,
      end: undefined,
      text: "",
      result: undefined,
      failed: false,
      resumed: false,
      candidate: undefined,
    };
    this.spans.push(span);
    this.byKey.set(key, span);
    return span;
  }

  /**
   * A tool call that started in an earlier run of the thread (before the interrupt this run answers).
   * @param {unknown} id @param {unknown} name @param {number} index
   */
  #resumedTool(id, name, index) {
    const span = this.#open(`tool:${id}`, "tool", `${name} (started earlier)`, index);
    span.end = index;
    span.resumed = true;
    return span;
  }

  /** @param {string} key @param {number} index @param {{ keep?: boolean }} [options] */
  #close(key, index, { keep = false } = {}) {
    const span = this.byKey.get(key);
    if (!span || span.end !== undefined) return span;
    span.end = index;
    if (!keep) this.byKey.delete(key);
    return span;
  }

  /** @param {string} key @param {unknown} delta */
  #append(key, delta) {
    return this.#appendTo(this.byKey.get(key), delta);
  }

  /** @param {Span | undefined} span @param {unknown} delta */
  #appendTo(span, delta) {
    if (span && typeof delta === "string") span.text += delta;
    return span;
  }

  /** @param {SpanKind} kind */
  #lastOpen(kind) {
    return this.spans.findLast((span) => span.kind === kind && span.end === undefined);
  }
}
