/**
 * A fixture names its tool calls with fixed ids (`toolu_deploy_1`), as the
 * kernel that was recorded did once. Played twice on one thread, the second
 * play's calls would reuse the first's ids, and a client keyed on tool call
 * ids would put the second turn's results under the first turn's calls. So
 * a fixture a context plays again names its calls afresh, `<id>~<n>` for
 * its n-th play there, the same way in every line (the call, its progress,
 * its result, the input that waits on it): a thread that plays a fixture
 * once shows the recorded ids.
 */
import { isJsonObject } from "../model/json.js";

/** The keys whose value is a tool call's id. */
const TOOL_ID_KEYS = new Set(["toolUseId", "progressToken"]);

/** `value` with every tool call id under one of the keys above suffixed; `value` itself when `suffix` is empty. */
export function withFreshToolIds<T>(value: T, suffix: string): T {
  if (suffix === "") return value;
  const walk = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(walk);
    if (!isJsonObject(item)) return item;
    return Object.fromEntries(
      Object.entries(item).map(([key, inner]) => [
        key,
        TOOL_ID_KEYS.has(key) && typeof inner === "string" ? `${inner}${suffix}` : walk(inner),
      ]),
    );
  };
  return walk(value) as T;
}

/** How many times each context has played each fixture, for the suffix of the next play. */
export class FixturePlays {
  readonly #plays = new Map<string, number>();

  /** The suffix of a new play of `fixture` in `contextId`: none for its first there. */
  next(contextId: string, fixture: string): string {
    const key = JSON.stringify([contextId, fixture]);
    const played = this.#plays.get(key) ?? 0;
    this.#plays.set(key, played + 1);
    return played === 0 ? "" : `~${played + 1}`;
  }
}
