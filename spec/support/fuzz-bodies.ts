/**
 * Malformed RunAgentInput requests for the HTTP fuzz: anything fast-check
 * can make, valid bodies with one part changed, bodies that are not JSON,
 * and the wrong content types. Valid bodies are in the mix too, since a
 * mutation can leave one valid; they must simply run.
 */
import fc from "fast-check";
import { runInput } from "./service.js";

export interface FuzzRequest {
  contentType: string;
  body: string;
}

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/json; charset=latin1",
  "",
  "multipart/form-data; boundary=x",
  "application/merge-patch+json",
];

type Path = Array<string | number>;

/** Every path to a value inside `value`, the root included. */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const here = [prefix];
  if (Array.isArray(value)) return here.concat(value.flatMap((item, index) => pathsOf(item, [...prefix, index])));
  if (value !== null && typeof value === "object")
    return here.concat(Object.entries(value).flatMap(([key, item]) => pathsOf(item, [...prefix, key])));
  return here;
}

function setAt(root: unknown, path: Path, replacement: unknown, remove: boolean): unknown {
  if (path.length === 0) return replacement;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (remove) {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else parent[last] = replacement;
  return copy;
}

/** A valid body with one value replaced by something else, or removed. */
const mutatedValid = fc
  .record({
    pick: fc.nat(),
    replacement: fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.string({ unit: "binary" }),
      fc.constantFrom("", -1, Number.POSITIVE_INFINITY, "../../etc/passwd", "data:image/png;base64,AAAA"),
    ),
    remove: fc.boolean(),
    text: fc.string({ maxLength: 40 }),
  })
  .map(({ pick, replacement, remove, text }) => {
    const valid = runInput(text);
    const paths = pathsOf(valid);
    return JSON.stringify(setAt(valid, paths[pick % paths.length]!, replacement, remove)) ?? "";
  });

const anythingAsJson = fc.anything({ maxDepth: 3 }).map((value) => {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
});

const notJson = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: "binary", maxLength: 100 }),
  fc.constantFrom("{", "[1,", '{"threadId":', "null", "true", "\u0000", "{}{}"),
);

export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.record({
  contentType: fc.oneof(
    { weight: 6, arbitrary: fc.constant("application/json") },
    { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  ),
  body: fc.oneof({ weight: 4, arbitrary: mutatedValid }, { weight: 2, arbitrary: anythingAsJson }, { weight: 1, arbitrary: notJson }),
});

/** Requests too big or too deep for a generator to stumble on: each is sent as is. */
export function extremeRequests(): FuzzRequest[] {
  const json = (body: unknown): FuzzRequest => ({ contentType: "application/json", body: JSON.stringify(body) });
  const deep = (depth: number, leaf: string) => "[".repeat(depth) + leaf + "]".repeat(depth);
  const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  const valid = runInput("chat");
  return [
    json({ ...runInput("x".repeat(11 * 1024 * 1024)) }),
    { contentType: "application/json", body: `{"pad":"${"y".repeat(13 * 1024 * 1024)}"}` },
    json(runInput("chat", { threadId: "t".repeat(100_000) })),
    json(runInput("chat", { runId: "r".repeat(1_000_000) })),
    { contentType: "application/json", body: JSON.stringify(valid).replace('"state":{}', `"state":${deepObject(10_000)}`) },
    { contentType: "application/json", body: JSON.stringify(runInput("chat")).replace('"state":{}', `"state":${deep(100_000, "1")}`) },
    { contentType: "application/json", body: JSON.stringify(runInput("chat")).replace('"context":[]', `"context":${deep(5_000, "{}")}`) },
    { contentType: "application/json", body: JSON.stringify(runInput("chat")).replace('"tools":[]', `"tools":${deep(50_000, "")}`) },
    { contentType: "application/json", body: deep(200_000, "") },
    json(runInput("chat", { messages: Array.from({ length: 20_000 }, (_, i) => ({ id: `m${i}`, role: "user", content: "hi" })) })),
    json(runInput("chat", { forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "r", cwd: "/", extra: deepObject(3_000) } } })),
  ];
}
