/**
 * Usage signals → one usage list on the `run-end` signal, grouped by
 * (provider, model) with the counts summed; absent when the kernel reported
 * none. `finishRun` copies it onto `RUN_FINISHED` / `RUN_ERROR`.
 */
import type { TokenUsage } from "@ag-ui/core";
import type { OperatorFunction } from "rxjs";
import { emitEachPer } from "./emit-each.js";
import { isSignal, type RunItem } from "../lib/model/kernel-signal.js";
import { TOKEN_COUNTS as COUNTS } from "../lib/model/usage.js";

export function sumUsage(items: readonly TokenUsage[]): TokenUsage[] | undefined {
  if (items.length === 0) return undefined;
  const groups = new Map<string, TokenUsage>();
  for (const item of items) {
    const key = JSON.stringify([item.provider ?? null, item.model ?? null]);
    let group = groups.get(key);
    if (!group) {
      group = {};
      if (item.provider !== undefined) group.provider = item.provider;
      if (item.model !== undefined) group.model = item.model;
      for (const count of COUNTS) group[count] = 0;
      groups.set(key, group);
    }
    for (const count of COUNTS) group[count] = (group[count] ?? 0) + (item[count] ?? 0);
  }
  return [...groups.values()];
}

export function aggregateUsage(): OperatorFunction<RunItem, RunItem> {
  return emitEachPer(() => {
    const seen: TokenUsage[] = [];
    return (item): RunItem | RunItem[] => {
      if (!isSignal(item)) return item;
      if (item.kind === "usage") {
        seen.push(item.usage);
        return [];
      }
      if (item.kind !== "run-end") return item;
      const usage = sumUsage(seen);
      return [usage ? { ...item, usage } : item];
    };
  });
}
