/**
 * The words a recording's file name ends with, so "the permission one" is
 * found by its name rather than by grepping headers: what the run did (a
 * pipeline, an interrupt of some kind, a failure), then the first words of
 * the user's first message. Only `[a-z0-9-]`, so the name stays a fixture
 * name (`[A-Za-z0-9_-]`) and is what a user types to replay it; bounded, so
 * a long message cannot make a name the filesystem refuses.
 */
import type { JsonRpcResult } from "../a2a/client.js";
import { isJsonObject } from "../model/json.js";

/** What a run did, as a name says it; in this order in the name. */
export const RUN_TRAITS = ["pipeline", "permission", "question", "confirm", "failed", "error"] as const;
export type RunTrait = (typeof RUN_TRAITS)[number];

/** The whole slug at most (a name is then at most about 70 characters with its time, task and a `-N`). */
export const MAX_SLUG_CHARS = 40;
const MAX_WORDS = 4;
const MAX_WORD_CHARS = 16;

/** An interrupt's `kind` (wire contract), as a name says it. */
const INPUT_TRAITS: Readonly<Record<string, RunTrait>> = {
  permission: "permission",
  ask_user_question: "question",
  deployment_confirmation: "confirm",
};

/** What one frame of a `SendStreamingMessage` stream tells of the run; only known places are looked at. */
export function traitsOfFrame(frame: JsonRpcResult): RunTrait[] {
  const body = Object.values(frame)[0];
  if (!isJsonObject(body)) return [];
  const traits: RunTrait[] = [];
  const status = isJsonObject(body.status) ? body.status : undefined;
  if (status?.state === "TASK_STATE_FAILED" || status?.state === "TASK_STATE_REJECTED") traits.push("failed");
  const iacCode = isJsonObject(body.metadata) && isJsonObject(body.metadata.iac_code) ? body.metadata.iac_code : undefined;
  if (iacCode === undefined) return traits;
  if (iacCode.pipeline !== undefined || iacCode.pipelineBatch !== undefined) traits.push("pipeline");
  if (Array.isArray(iacCode.pendingPermissions) && iacCode.pendingPermissions.length > 0) traits.push("permission");
  const kind = isJsonObject(iacCode.input) && typeof iacCode.input.kind === "string" ? INPUT_TRAITS[iacCode.input.kind] : undefined;
  if (kind !== undefined) traits.push(kind);
  return traits;
}

/** Lower-case ASCII words of a text: accents dropped (`é` → `e`), anything else a separator. */
function asciiWords(text: string): string[] {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== "")
    .map((word) => word.slice(0, MAX_WORD_CHARS));
}

/**
 * `permission-deploy-the-vpc`: the traits in `RUN_TRAITS` order, then up to
 * four words of `text` (a word a trait already says is not repeated), cut
 * at a word to `MAX_SLUG_CHARS`. Empty when there is nothing to say.
 */
export function recordingSlug(traits: Iterable<RunTrait>, text = ""): string {
  const seen = new Set(traits);
  const said = RUN_TRAITS.filter((trait) => seen.has(trait));
  const words = asciiWords(text)
    .filter((word) => !seen.has(word as RunTrait))
    .slice(0, MAX_WORDS);
  let slug = "";
  for (const word of [...said, ...words]) {
    const longer = slug === "" ? word : `${slug}-${word}`;
    if (longer.length > MAX_SLUG_CHARS) break;
    slug = longer;
  }
  return slug;
}
