/**
 * The options of a projection as the client sees them (`metadata.standardOptions`,
 * the selection message and the `selectedId` branches of the response schema).
 */
import { pythonStr, pythonTruthy } from "./python-json.js";
import { isJsonObject } from "../model/json.js";

export interface StandardOption {
  id: string;
  title: string;
}

/**
 * Ids come from `id`, then `candidate_index` (pipeline candidates have no
 * id), then the position; a repeated id gets `-2`, `-3`, … so every schema
 * branch is distinct. A null `id` counts as absent. An empty id becomes
 * `option-<n>` (1-based), as in the reference. Titles come from the first
 * non-empty `label`, `name`, `title`, else the id as the kernel sent it.
 */
export function standardOptions(rawOptions: unknown): StandardOption[] {
  const list: unknown[] = Array.isArray(rawOptions) ? rawOptions : [];
  const used = new Set<string>();
  return list.map((option, index) => {
    let id: string;
    let title: string;
    if (isJsonObject(option)) {
      id = pythonStr(option.id ?? option.candidate_index ?? index);
      title = pythonStr([option.label, option.name, option.title].find(pythonTruthy) ?? id);
    } else {
      id = title = pythonStr(option);
    }
    const base = id === "" ? `option-${index + 1}` : id;
    let unique = base;
    for (let suffix = 2; used.has(unique); suffix++) unique = `${base}-${suffix}`;
    used.add(unique);
    return { id: unique, title };
  });
}

/** `<prompt>` followed by `\n- <id>: <title>` per option; the prompt alone when there are none. */
export function selectionMessage(prompt: string, options: readonly StandardOption[]): string {
  return [prompt, ...options.map(({ id, title }) => `- ${id}: ${title}`)].join("\n");
}
