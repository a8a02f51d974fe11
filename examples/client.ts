/**
 * A small AG-UI client for the service, built on the stock `@ag-ui/client`
 * HttpAgent — the same code any generic AG-UI front end runs — printing
 * each event of a run as one line.
 *
 *   npm run build && node dist/examples/client.js [request.json] [--url http://127.0.0.1:8000/] [--token T]
 *                                                 [--thread ID --interrupt ID]
 *
 * The request file is a template (see examples/requests/ and
 * `request-template.ts`): each run fills in a fresh `{{thread}}` and
 * `{{run}}`, so running it again starts a try of its own instead of
 * meeting the last one's thread (a run id already used, or a pause that
 * waits for its answer). A run that pauses prints how to answer it: the
 * answer's template (`permission-allow.json`, say) with `--thread`, the
 * `{{thread}}` of the paused try, and `--interrupt`, the id it answers.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { HttpAgent, type BaseEvent } from "@ag-ui/client";
import { EventType, type AGUIEvent, type Interrupt } from "@ag-ui/core";
import { fillRequest, freshValues, placeholdersIn } from "./request-template.js";

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
  const template = readFileSync(file, "utf8");
  const thread = option("--thread") ?? freshValues().thread;
  const interrupt = option("--interrupt");
  if (placeholdersIn(template).has("interrupt") && (interrupt === undefined || option("--thread") === undefined)) {
    throw new Error(`${file} answers an interrupt: give the paused try's --thread and the --interrupt it answers`);
  }
  const request = fillRequest(template, { thread, run: randomUUID(), ...(interrupt === undefined ? {} : { interrupt }) });
  const token = option("--token");
  const agent = new HttpAgent({
    url: option("--url") ?? "http://127.0.0.1:8000/",
    threadId: request.threadId,
    initialMessages: request.messages,
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
  });
  let last: AGUIEvent | undefined;
  await agent.runAgent(
    {
      runId: request.runId,
      tools: [],
      context: request.context,
      forwardedProps: request.forwardedProps,
      ...(request.resume === undefined ? {} : { resume: request.resume }),
    },
    {
      onEvent: ({ event }) => {
        last = event as AGUIEvent;
        console.log(describe(event as BaseEvent & Record<string, unknown>));
      },
    },
  );
  const reply = agent.messages.at(-1);
  if (reply?.role === "assistant" && typeof reply.content === "string") console.log(`\nassistant: ${reply.content}`);
  if (last?.type === EventType.RUN_FINISHED && last.outcome?.type === "interrupt") {
    for (const { id, reason, message } of last.outcome.interrupts as Interrupt[]) {
      console.log(`\npaused at ${id} (${reason}): ${message ?? ""}`);
      console.log(`answer: node dist/examples/client.js <answer.json> --thread ${thread} --interrupt ${id}`);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
