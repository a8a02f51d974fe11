/**
 * A small AG-UI client for the service, built on the stock `@ag-ui/client`
 * HttpAgent — the same code any generic AG-UI front end runs — printing
 * each event of a run as one line.
 *
 *   npm run build && node dist/examples/client.js [request.json] [--url http://127.0.0.1:8080/] [--token T]
 *
 * The request file holds a RunAgentInput (see examples/requests/). Its
 * runId is replaced by a fresh one, since the service keeps run ids unique
 * per thread.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { HttpAgent, type BaseEvent } from "@ag-ui/client";
import type { RunAgentInput } from "@ag-ui/core";

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index > 0 ? process.argv[index + 1] : undefined;
}

/** The fields of an event worth a glance; deltas are shown as text. */
function describe(event: BaseEvent & Record<string, unknown>): string {
  const { type, timestamp: _timestamp, ...rest } = event;
  if ("delta" in rest && typeof rest.delta === "string") return `${type} ${JSON.stringify(rest.delta)}`;
  return `${type} ${JSON.stringify(rest)}`;
}

async function main(): Promise<void> {
  const file =
    process.argv.slice(2).find((arg, i, all) => !arg.startsWith("--") && !all[i - 1]?.startsWith("--")) ?? "examples/requests/chat.json";
  const request = JSON.parse(readFileSync(file, "utf8")) as RunAgentInput;
  const token = option("--token");
  const agent = new HttpAgent({
    url: option("--url") ?? "http://127.0.0.1:8080/",
    threadId: request.threadId,
    initialMessages: request.messages,
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
  });
  await agent.runAgent(
    { runId: randomUUID(), tools: [], context: request.context, forwardedProps: request.forwardedProps },
    { onEvent: ({ event }) => console.log(describe(event as BaseEvent & Record<string, unknown>)) },
  );
  const last = agent.messages.at(-1);
  if (last?.role === "assistant" && typeof last.content === "string") console.log(`\nassistant: ${last.content}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
