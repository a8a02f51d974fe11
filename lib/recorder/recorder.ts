/**
 * Recorder mode: each upstream `SendStreamingMessage` stream is written down
 * as a fixture the demo kernel can replay (format in
 * `examples/fixtures/README.md`, the recorder in `docs/recorder.md`).
 *
 * One file per task. A task's first call is turn 0; each later call on the
 * same task (an answer to an interrupt) is appended as a `{"turn": N}`
 * section. A recording is kept in memory while its stream runs and written
 * when the stream ends (completes, fails, or the run stops reading), by an
 * atomic replace of the whole file: a crash loses at most the turn in
 * progress, never leaves a file the kernel cannot parse.
 *
 * Recording never changes the run: the stream the run gets is the upstream
 * stream with a `tap` on it (one subscription, the same frames, the same
 * errors), every step of the recorder is guarded, and writing happens off
 * the stream's path, one file at a time; failures are logged and dropped.
 */
import path from "node:path";
import { defer, tap, type Observable } from "rxjs";
import type { JsonRpcResult } from "../a2a/client.js";
import { rpcErrorOf } from "../a2a/rpc-errors.js";
import { AguiError } from "../errors.js";
import { errorFields, silentLogger, type Logger } from "../log.js";
import {
  ensureRecordDir,
  findRecording,
  freeName,
  lastTurn,
  readRecording,
  recordingName,
  RECORDING_EXTENSION,
  writeAtomically,
  type WriteHooks,
} from "./fixture-file.js";
import { withPlaceholders } from "../fixtures/placeholders.js";
import { redact, redactString, secretsIn } from "./redact.js";
import { recordingSlug, traitsOfFrame, type RunTrait } from "./recording-slug.js";
import { isJsonObject, isNonEmptyString, nonEmptyString } from "../model/json.js";

export interface RecorderOptions extends WriteHooks {
  /** Where write failures go; they never reach the run. */
  log?: Logger;
  /** Credentials to redact besides the request's own: the service's tokens, say. Empty and undefined entries are skipped. */
  secrets?: readonly (string | undefined)[];
  /** Milliseconds; delays and dates are read from it. Default `Date.now`. */
  now?: () => number;
  /** A turn whose lines grow past this many characters is not recorded (logged): recordings stay in memory until their stream ends. Default 64 Mi. */
  maxTurnChars?: number;
}

/** How much of the first user message the header comment shows. */
export const FIRST_TEXT_CHARS = 60;

/** Tasks whose file the recorder remembers; older ones are found again by name (`findRecording`). */
const REMEMBERED_TASKS = 10_000;

/** The request's user message, as much of it as the recorder reads. */
interface RequestFacts {
  /** Set on every call but a task's first. */
  taskId: string | undefined;
  contextId: string | undefined;
  /** The text parts, joined and trimmed. */
  text: string;
  /** A `when` for the turn marker, from a structured answer. */
  when: string | undefined;
}

function requestFacts(params: unknown): RequestFacts {
  const message = isJsonObject(params) && isJsonObject(params.message) ? params.message : {};
  const parts = Array.isArray(message.parts) ? message.parts.filter(isJsonObject) : [];
  return {
    taskId: nonEmptyString(message.taskId),
    contextId: nonEmptyString(message.contextId),
    text: parts
      .map((part) => (typeof part.text === "string" ? part.text : ""))
      .join("")
      .trim(),
    when: whenOf(parts),
  };
}

/**
 * What makes the answer of a later turn recognizable, when that is natural:
 * a permission answer's decision (`"decision":"deny"`, as the kernel matches
 * data parts in compact JSON), or a deployment confirmation's action
 * (`"action": "confirm"`, Python `json.dumps` spacing, as the adapter sends
 * it). Free text gets none: the section is the turn's fallback, and the
 * user's words stay out of the file.
 */
function whenOf(parts: readonly Record<string, unknown>[]): string | undefined {
  for (const part of parts) {
    const data = part.data;
    if (isJsonObject(data) && data.kind === "permission" && isNonEmptyString(data.decision)) {
      return `"decision":${JSON.stringify(data.decision)}`;
    }
    if (typeof part.text === "string") {
      let value: unknown;
      try {
        value = JSON.parse(part.text);
      } catch {
        continue;
      }
      if (isJsonObject(value) && isNonEmptyString(value.action)) {
        const when = `"action": ${JSON.stringify(value.action)}`;
        if (part.text.includes(when)) return when;
      }
    }
  }
  return undefined;
}

/**
 * A Task frame's history holds the request itself: the user's messages, with
 * their `metadata.iac_code` (credentials included). Those are kept as empty
 * user turns (id and role only), so the history keeps its shape and the
 * agent's turns their place, and nothing of the request is written.
 */
function withoutUserContent(frame: JsonRpcResult): JsonRpcResult {
  const task = frame.task;
  if (!isJsonObject(task) || !Array.isArray(task.history)) return frame;
  const history = task.history.map((message: unknown) => {
    if (!isJsonObject(message) || (message.role !== "ROLE_USER" && message.role !== "user")) return message;
    const kept: Record<string, unknown> = { role: message.role, parts: [] };
    for (const key of ["messageId", "taskId", "contextId"]) if (typeof message[key] === "string") kept[key] = message[key];
    return kept;
  });
  return { ...frame, task: { ...task, history } };
}

/** The task and context ids a frame names. */
function idsOf(frame: JsonRpcResult): { taskId?: string | undefined; contextId?: string | undefined } {
  const [key] = Object.keys(frame);
  const body = key === undefined ? undefined : frame[key];
  if (!isJsonObject(body)) return {};
  return key === "task"
    ? { taskId: nonEmptyString(body.id), contextId: nonEmptyString(body.contextId) }
    : { taskId: nonEmptyString(body.taskId), contextId: nonEmptyString(body.contextId) };
}

/** One call's stream, as it goes: each line is redacted and serialized as it arrives. */
class CallRecording {
  readonly startedAt: number;
  #lastAt: number;
  readonly request: RequestFacts;
  readonly secrets: Set<string>;
  taskId: string | undefined;
  contextId: string | undefined;
  /** The fixture lines (frames, an error) and `#` comments, in order. */
  readonly lines: string[] = [];
  /** How many of `lines` are frames or errors. */
  lineCount = 0;
  /** The JSON-RPC code of an error that came before any frame: the call was refused, no turn ran. */
  refusedWith: number | undefined;
  /** What the stream showed the run did, for the file's name. */
  readonly traits = new Set<RunTrait>();
  #bytes = 0;
  #ended = false;

  constructor(
    params: unknown,
    staticSecrets: readonly string[],
    private readonly now: () => number,
    private readonly maxBytes: number,
  ) {
    this.startedAt = now();
    this.#lastAt = this.startedAt;
    this.request = requestFacts(params);
    this.secrets = secretsIn(params, new Set(staticSecrets));
    this.taskId = this.request.taskId;
    this.contextId = this.request.contextId;
  }

  /** Time since the previous line, whole milliseconds. */
  #delay(): number {
    const at = this.now();
    const delay = Math.max(0, Math.round(at - this.#lastAt));
    this.#lastAt = at;
    return delay;
  }

  #push(line: Record<string, unknown>): void {
    // Redacted first (a credential could contain an id), then the ids become placeholders.
    const text = JSON.stringify(withPlaceholders(redact(line, this.secrets), { taskId: this.taskId, contextId: this.contextId }));
    this.#bytes += text.length;
    if (this.#bytes > this.maxBytes) throw new Error(`the turn is larger than ${this.maxBytes} characters`);
    this.lines.push(text);
    this.lineCount++;
  }

  frame(frame: JsonRpcResult): void {
    // The first frame names the task (a new task's call does not).
    const ids = idsOf(frame);
    this.taskId ??= ids.taskId;
    this.contextId ??= ids.contextId;
    this.#push({ delayMs: this.#delay(), frame: withoutUserContent(frame) });
    for (const trait of traitsOfFrame(frame)) this.traits.add(trait);
  }

  error(error: unknown): void {
    this.#ended = true;
    const rpc = error instanceof AguiError ? rpcErrorOf(error) : undefined;
    if (rpc) {
      this.traits.add("error");
      if (this.lineCount === 0) this.refusedWith = rpc.code;
      this.#push({
        delayMs: this.#delay(),
        error: { code: rpc.code, message: rpc.message, ...(rpc.data === undefined ? {} : { data: rpc.data }) },
      });
    } else {
      // A cut connection or a broken frame is no JSON-RPC error; a fixture cannot say it, so it is only noted.
      const code = error instanceof AguiError ? error.code : "an error";
      this.lines.push(`# the upstream stream failed here (${code}); a replay ends its stream normally instead`);
    }
  }

  complete(): void {
    this.#ended = true;
  }

  /** Called once the run stops reading: after complete or error, or on its own when the run let go first. */
  finish(): void {
    if (!this.#ended) this.lines.push("# the run stopped reading here (its end, or its client, left the stream open)");
    this.#ended = true;
  }

  /** The first user text for the header: short, one line, credentials out. */
  firstText(): string {
    const text = this.request.text;
    const cut = text.length > FIRST_TEXT_CHARS ? `${text.slice(0, FIRST_TEXT_CHARS)}…` : text;
    return JSON.stringify(redactString(cut, this.secrets));
  }

  /** The words a file's name ends with: what the run did, then the first message's first words, credentials out. */
  slug(): string {
    return recordingSlug(this.traits, redactString(this.request.text.slice(0, 200), this.secrets));
  }

  /** The `when` of this turn's marker; dropped if it would carry a credential. */
  when(): string | undefined {
    const when = this.request.when;
    return when !== undefined && redactString(when, this.secrets) === when ? when : undefined;
  }
}

export class Recorder {
  readonly #dir: string;
  readonly #log: Logger;
  readonly #secrets: string[];
  readonly #now: () => number;
  readonly #hooks: WriteHooks;
  readonly #maxTurnChars: number;
  /** Each task's recording file. */
  readonly #files = new Map<string, string>();
  /** Writes, one at a time, in the order their streams ended. */
  #queue: Promise<void> = Promise.resolve();

  constructor(recordDir: string, options: RecorderOptions = {}) {
    this.#dir = recordDir;
    this.#log = options.log ?? silentLogger;
    this.#secrets = (options.secrets ?? []).filter(isNonEmptyString);
    this.#now = options.now ?? Date.now;
    this.#hooks = options.beforeRename ? { beforeRename: options.beforeRename } : {};
    this.#maxTurnChars = options.maxTurnChars ?? 64 * 1024 * 1024;
  }

  get recordDir(): string {
    return this.#dir;
  }

  /**
   * `upstream` with its frames recorded: the same stream (a tap, one
   * subscription per subscription), each subscription one recording.
   */
  record(params: unknown, upstream: Observable<JsonRpcResult>): Observable<JsonRpcResult> {
    return defer(() => {
      let call: CallRecording | undefined;
      try {
        call = new CallRecording(params, this.#secrets, this.#now, this.#maxTurnChars);
      } catch (error) {
        this.#log.warn(errorFields(error), "recorder: cannot record this call");
      }
      if (!call) return upstream;
      const guard = (step: string, action: (recording: CallRecording) => void) => () => {
        if (!call) return;
        try {
          action(call);
        } catch (error) {
          // A recording that went wrong is dropped whole, never written half right.
          this.#log.warn(errorFields(error), `recorder: ${step} failed; this call is not recorded`);
          call = undefined;
        }
      };
      return upstream.pipe(
        tap({
          next: (frame) => guard("reading a frame", (recording) => recording.frame(frame))(),
          error: (error: unknown) => guard("reading an error", (recording) => recording.error(error))(),
          complete: guard("reading the end", (recording) => recording.complete()),
          finalize: guard("finishing", (recording) => {
            recording.finish();
            this.#enqueue(recording);
          }),
        }),
      );
    });
  }

  /** Resolves once every recording whose stream has ended is written (or has failed to be). */
  idle(): Promise<void> {
    return this.#queue;
  }

  #enqueue(call: CallRecording): void {
    this.#queue = this.#queue.then(() =>
      this.#write(call).catch((error: unknown) =>
        this.#log.warn(
          { ...errorFields(error), taskId: call.taskId, recordDir: this.#dir },
          `recorder: cannot write the recording of task ${call.taskId ?? "(none)"} to ${this.#dir}`,
        ),
      ),
    );
  }

  async #write(call: CallRecording): Promise<void> {
    // A stream the run left before its first frame has nothing to replay.
    if (call.lineCount === 0) return;
    await ensureRecordDir(this.#dir);
    const resumed = call.request.taskId;
    if (resumed === undefined) return this.#writeFirstTurn(call);
    return this.#appendTurn(call, resumed);
  }

  /** The comment lines a file starts with; `note` is for a file that starts at a later turn (no first message to show). */
  #header(call: CallRecording, name: string, note?: string): string[] {
    const date = new Date(call.startedAt).toISOString();
    const task = call.taskId === undefined ? "no task" : `task ${call.taskId}`;
    const about = note === undefined ? `first message ${call.firstText()}` : "first message not recorded";
    return [
      `# iac-code-agui recording of ${task}, started ${date}; ${about}`,
      ...(note === undefined ? [] : [`# ${note}`]),
      `# To replay: copy this file into examples/fixtures/ (or run the kernel with --fixtures on its directory) and send the message ${name}`,
    ];
  }

  async #writeFirstTurn(call: CallRecording): Promise<void> {
    const name = await freeName(this.#dir, recordingName(new Date(call.startedAt), call.taskId, call.slug()));
    const file = path.join(this.#dir, name + RECORDING_EXTENSION);
    await writeAtomically(file, [...this.#header(call, name), ...call.lines].join("\n") + "\n", this.#hooks);
    if (call.taskId !== undefined) this.#remember(call.taskId, file);
  }

  async #appendTurn(call: CallRecording, taskId: string): Promise<void> {
    const known = this.#files.get(taskId) ?? (await findRecording(this.#dir, taskId));
    const existing = known === undefined ? undefined : await readRecording(known);
    const turn = existing === undefined ? undefined : lastTurn(existing);
    if (call.refusedWith !== undefined) {
      // The kernel does not count a refused answer as a turn, so neither does the file; it is only noted.
      if (known === undefined || existing === undefined || turn === undefined) return;
      await writeAtomically(
        known,
        `${existing.trimEnd()}\n# an answer was refused before any frame (JSON-RPC ${call.refusedWith}); not a turn\n`,
        this.#hooks,
      );
      return;
    }
    const when = call.when();
    const marker = JSON.stringify(when === undefined ? { turn: (turn ?? 0) + 1 } : { turn: (turn ?? 0) + 1, when });
    const section = [marker, `# turn ${(turn ?? 0) + 1}, started ${new Date(call.startedAt).toISOString()}`, ...call.lines];
    if (known !== undefined && existing !== undefined && turn !== undefined) {
      await writeAtomically(known, `${existing.trimEnd()}\n${section.join("\n")}\n`, this.#hooks);
      this.#remember(taskId, known);
      return;
    }
    // The task's earlier turns are not on disk (recorded before a restart elsewhere, moved, or edited
    // past parsing): this turn starts a file of its own, numbered as if it followed one turn.
    // An answer's words stay out of the file (see `when`), so out of its name too: what the run did only.
    const name = await freeName(this.#dir, recordingName(new Date(call.startedAt), taskId, recordingSlug(call.traits)));
    const file = path.join(this.#dir, name + RECORDING_EXTENSION);
    const note =
      "its earlier turns were not recorded here; turn 0 is missing, so a replay of this file starts with the kernel's `nothing recorded` answer";
    await writeAtomically(file, [...this.#header(call, name, note), ...section].join("\n") + "\n", this.#hooks);
    this.#remember(taskId, file);
  }

  #remember(taskId: string, file: string): void {
    this.#files.delete(taskId);
    this.#files.set(taskId, file);
    if (this.#files.size > REMEMBERED_TASKS) this.#files.delete(this.#files.keys().next().value!);
  }
}
