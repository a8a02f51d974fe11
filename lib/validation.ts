/**
 * Admission of one AG-UI RunAgentInput (R-IN, R-EXT). The JSON Schema files
 * in `schemas/` decide the shape; this file only adds what a schema cannot
 * say: where `cwd` really points (`workspace.ts`), how many bytes the images decode to, and
 * whether a new run carries a user message. Two settings let a generic
 * client (CopilotKit and the like) through: a default cwd for a request
 * without iacCode, and declared client tools accepted and left unused.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { AguiError, type MessageParams } from "./errors.js";
import { detailParams, schemaErrorDetail } from "./i18n/detail.js";
import type { Config } from "./config.js";
import { SCHEMAS_DIR } from "./paths.js";
import { latestUserMessage } from "./a2a/request-mapping.js";
import { isJsonObject } from "./model/json.js";
import type { ValidRunInput } from "./model/run-input.js";
import { expandHome, isDirectory, workspaceTarget, type WorkspaceTarget } from "./workspace.js";

/**
 * Which message an INVALID_INPUT carries (`INVALID_INPUT.<reason>` in the
 * locales). Absent means the envelope itself. Wire contract §9 reports
 * forwardedProps and cwd failures under one reason, "forwardedProps" (a
 * cwd's message then says its problem, as the reference does); client tools
 * have their own ("tools": declared at all; "toolDeclaration": declared
 * wrong while they are accepted), since a generic client that sends them
 * sends no iac-code properties to blame. An image part says what is wrong
 * with it: a remote source, a media type, or data that is not base64.
 */
export type InvalidInputReason =
  | "forwardedProps"
  | "tools"
  | "toolDeclaration"
  | "userMessage"
  | "userContent"
  | "remoteMedia"
  | "imageMediaType"
  | "imageData"
  | "imageTooLarge"
  | "imagesTooLarge"
  | "notObject";

const MiB = 1024 * 1024;
export const MAX_IMAGE_BYTES = 8 * MiB;
export const MAX_TOTAL_IMAGE_BYTES = 10 * MiB;

const SCHEMA_FILES = ["iac-code-extension.schema.json", "user-message-content.schema.json", "run-agent-input.schema.json"];
const RUN_INPUT_SCHEMA_ID = "urn:iac-code:agui:schema:run-agent-input:v1";
const DECLARED_TOOLS_SCHEMA_ID = `${RUN_INPUT_SCHEMA_ID}#/$defs/declaredTools`;

let validators: { envelope: ValidateFunction; declaredTools: ValidateFunction } | undefined;

function schemaValidators(): NonNullable<typeof validators> {
  if (!validators) {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
    for (const file of SCHEMA_FILES) ajv.addSchema(JSON.parse(readFileSync(path.join(SCHEMAS_DIR, file), "utf8")));
    const get = (id: string) => {
      const validate = ajv.getSchema(id);
      if (!validate) throw new Error(`schema ${id} not found in ${SCHEMAS_DIR}`);
      return validate;
    };
    validators = { envelope: get(RUN_INPUT_SCHEMA_ID), declaredTools: get(DECLARED_TOOLS_SCHEMA_ID) };
  }
  return validators;
}

/** `detail` says where and what, in params `messageFor` can say in any language (see `i18n/detail.ts`). */
function invalid(reason: InvalidInputReason | undefined, detail: MessageParams, cause?: unknown): AguiError {
  return new AguiError("INVALID_INPUT", reason ? { reason, ...detail } : detail, cause === undefined ? undefined : { cause });
}

/** Which part of an image source failed: its type (a URL or file is remote media), its media type, or its data. */
function imageReason(error: ErrorObject, within: string): InvalidInputReason {
  if (within === "/source/type") return "remoteMedia";
  if (within === "/source/mimeType") return "imageMediaType";
  if (within === "/source/value") return error.keyword === "maxLength" ? "imageTooLarge" : "imageData";
  return "userContent";
}

function reasonFor(error: ErrorObject, body: unknown): InvalidInputReason | undefined {
  const missing = error.keyword === "required" ? String(error.params.missingProperty) : undefined;
  if (error.instancePath === "" && error.keyword === "type") return "notObject";
  if (/^\/tools(\/|$)/.test(error.instancePath) || (error.instancePath === "" && missing === "tools")) return "tools";
  if (/^\/forwardedProps(\/|$)/.test(error.instancePath)) return "forwardedProps";
  if (error.instancePath === "" && missing === "forwardedProps") return "forwardedProps";
  const content = /^\/messages\/(\d+)\/content(\/\d+)?(.*)$/.exec(error.instancePath);
  if (!content) return undefined;
  const messages = (body as { messages: Array<{ role?: unknown }> }).messages;
  if (messages[Number(content[1])]?.role !== "user") return undefined;
  return content[2] === undefined ? "userContent" : imageReason(error, content[3]!);
}

/** Where the request's cwd leads; refused unless it is a directory or may become one. */
function checkCwd(cwd: string, allowedCwds: readonly string[]): WorkspaceTarget {
  const target = workspaceTarget(cwd, allowedCwds);
  if (typeof target === "string") throw invalid("forwardedProps", detailParams("/forwardedProps/iacCode/cwd", target));
  return target;
}

/**
 * Creates a workspace that does not exist yet, as the reference adapter
 * does, private to the service user (0700). Another request may create it
 * first; something else in its place (a file) is refused.
 */
function createWorkspace(target: WorkspaceTarget): void {
  try {
    mkdirSync(target.directory, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw invalid("forwardedProps", detailParams("/forwardedProps/iacCode/cwd", "cannotCreate"), error);
  }
  if (!isDirectory(target.directory)) throw invalid("forwardedProps", detailParams("/forwardedProps/iacCode/cwd", "notDirectory"));
}

interface InlineImage {
  type: "image";
  source: { value: string };
}

function checkImageSizes(input: ValidRunInput): void {
  let total = 0;
  input.messages.forEach((message, m) => {
    if (message.role !== "user" || typeof message.content === "string") return;
    message.content.forEach((part, p) => {
      if (part.type !== "image") return;
      const where = `/messages/${m}/content/${p}/source/value`;
      const base64 = (part as InlineImage).source.value;
      // The schema's pattern checks the alphabet; padded length is checked here (see the schema's $comment).
      if (base64.length % 4 !== 0) throw invalid("imageData", detailParams(where, "unpaddedBase64"));
      const bytes = Buffer.byteLength(base64, "base64");
      if (bytes > MAX_IMAGE_BYTES) throw invalid("imageTooLarge", detailParams(where, "imageTooLarge", { limit: MAX_IMAGE_BYTES / MiB }));
      total += bytes;
      if (total > MAX_TOTAL_IMAGE_BYTES) {
        throw invalid("imagesTooLarge", detailParams(where, "imagesTooLarge", { limit: MAX_TOTAL_IMAGE_BYTES / MiB }));
      }
    });
  });
}

/**
 * How deep a request may nest. JSON.parse takes any depth, but everything
 * after it that walks a value recursively (the schema validator, the run id
 * digest, JSON.stringify) would overflow the stack on a body nested tens of
 * thousands deep; no real RunAgentInput comes near this.
 */
export const MAX_JSON_DEPTH = 512;

/** The nesting depth of a parsed JSON value, measured without recursion, stopping past `limit`. */
export function jsonDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** The input with its `~` cwd expanded (a copy of the parts on the way); the same input when there is none. */
function withExpandedCwd(input: ValidRunInput): ValidRunInput {
  const { iacCode } = input.forwardedProps;
  const cwd = expandHome(iacCode.cwd);
  if (cwd === iacCode.cwd) return input;
  return { ...input, forwardedProps: { ...input.forwardedProps, iacCode: { ...iacCode, cwd } } };
}

/** The invocation of a thread whose client names none: one per thread, so the thread's resumes name the same. */
export function invocationIdFor(threadId: string): string {
  return "agui-thread-" + createHash("sha256").update(threadId, "utf8").digest("hex").slice(0, 40);
}

/**
 * With `IAC_CODE_AGUI_DEFAULT_CWD`, a body that sends no iacCode (nor,
 * perhaps, forwardedProps) is given one before the schema looks, as an
 * iac-code client would have written it. An iacCode the client sent, even
 * a wrong one, is left for the schema to judge.
 */
function withDefaultIacCode(body: unknown, defaultCwd: string | undefined): unknown {
  if (defaultCwd === undefined || !isJsonObject(body) || typeof body.threadId !== "string") return body;
  const forwarded = body.forwardedProps === undefined ? {} : body.forwardedProps;
  if (!isJsonObject(forwarded) || "iacCode" in forwarded) return body;
  const iacCode = { schemaVersion: 1, rosInvocationId: invocationIdFor(body.threadId), cwd: defaultCwd };
  return { ...body, forwardedProps: { ...forwarded, iacCode } };
}

/**
 * With `IAC_CODE_AGUI_CLIENT_TOOLS=ignore`: the declared tools must be
 * tools, and the envelope is then judged as if it declared none. Nothing
 * reads them after this: they never reach the kernel.
 */
function withoutDeclaredTools(body: unknown): unknown {
  if (!isJsonObject(body)) return body;
  const { declaredTools } = schemaValidators();
  if (!declaredTools(body.tools)) {
    const first = declaredTools.errors?.[0];
    throw invalid("toolDeclaration", first ? schemaErrorDetail(first, `/tools${first.instancePath}`) : detailParams("/tools", "invalid"));
  }
  return { ...body, tools: [] };
}

/**
 * The body as a ValidRunInput, or an `INVALID_INPUT` AguiError describing the
 * first problem (`params.detail` in English, `at` and `phrase` for any
 * language; never a submitted value).
 * The body is returned as is, not copied or normalised, but for the iacCode
 * a default cwd gives it and a `~/…` cwd, given back expanded. A cwd that
 * does not exist yet is created once everything else has passed.
 */
export function validateRunInput(body: unknown, config: Pick<Config, "allowedCwds" | "defaultCwd" | "clientTools">): ValidRunInput {
  if (jsonDepth(body) > MAX_JSON_DEPTH) throw invalid(undefined, detailParams("/", "tooDeep", { limit: MAX_JSON_DEPTH }));
  const completed = withDefaultIacCode(body, config.defaultCwd);
  const judged = config.clientTools === "ignore" ? withoutDeclaredTools(completed) : completed;
  const { envelope } = schemaValidators();
  if (!envelope(judged)) {
    const first = envelope.errors?.[0];
    throw first ? invalid(reasonFor(first, judged), schemaErrorDetail(first)) : invalid(undefined, detailParams("/", "invalid"));
  }
  const input = withExpandedCwd(completed as ValidRunInput);
  const workspace = checkCwd(input.forwardedProps.iacCode.cwd, config.allowedCwds);
  checkImageSizes(input);
  const isResume = (input.resume?.length ?? 0) > 0;
  if (!isResume && !latestUserMessage(input)) throw invalid("userMessage", detailParams("/messages", "userMessageNeeded"));
  if (workspace.missing) createWorkspace(workspace);
  return input;
}
