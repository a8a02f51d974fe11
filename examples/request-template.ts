/**
 * The sample requests in `examples/requests/` are templates: `{{thread}}`
 * stands for a thread of one try, `{{run}}` for a run of it (the service
 * takes a run id once per thread) and `{{interrupt}}`, in an answer, for
 * the id of the interrupt it answers. The README fills them in with `sed`;
 * `client.ts` and the specs with `fillRequest`.
 */
import { randomUUID } from "node:crypto";
import type { RunAgentInput } from "@ag-ui/core";

export type Placeholder = "thread" | "run" | "interrupt";
export type PlaceholderValues = Partial<Record<Placeholder, string>>;

const PLACEHOLDER = /\{\{([a-z]+)\}\}/g;
const KNOWN: ReadonlySet<string> = new Set<Placeholder>(["thread", "run", "interrupt"]);

/** The placeholders a template uses. */
export function placeholdersIn(template: string): Set<Placeholder> {
  const found = new Set<Placeholder>();
  for (const [, name] of template.matchAll(PLACEHOLDER)) {
    if (!KNOWN.has(name!)) throw new Error(`unknown placeholder {{${name}}}: the templates know {{thread}}, {{run}} and {{interrupt}}`);
    found.add(name as Placeholder);
  }
  return found;
}

/** A thread and a run nobody used: a try of its own, which no earlier try can have left busy or paused. */
export const freshValues = (): Required<Pick<PlaceholderValues, "thread" | "run">> => ({ thread: randomUUID(), run: randomUUID() });

/**
 * The request a template gives with these values. Placeholders are filled
 * inside the JSON's strings, so a value cannot change its structure; one
 * the template uses without a value is an error.
 */
export function fillRequest(template: string, values: PlaceholderValues): RunAgentInput {
  for (const name of placeholdersIn(template)) {
    if (values[name] === undefined) throw new Error(`the request needs a value for {{${name}}}`);
  }
  const fill = (value: unknown): unknown => {
    if (typeof value === "string") return value.replace(PLACEHOLDER, (_match, name: Placeholder) => values[name]!);
    if (Array.isArray(value)) return value.map(fill);
    if (typeof value === "object" && value !== null)
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fill(item)]));
    return value;
  };
  return fill(JSON.parse(template)) as RunAgentInput;
}
