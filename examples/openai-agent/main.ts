#!/usr/bin/env node
/**
 * Runs the OpenAI-compatible chat agent (`agent.ts`) as an A2A 1.0 agent on
 * loopback, for the service to front:
 *
 *   OPENAI_API_KEY=… OPENAI_MODEL=gpt-4o-mini node dist/examples/openai-agent/main.js [--port 41242] [--host 127.0.0.1] [--token T]
 *   IAC_CODE_AGUI_A2A_URL=http://127.0.0.1:41242/ npm start
 *
 * The endpoint comes from the environment: `OPENAI_BASE_URL` (default
 * `https://api.openai.com/v1`; any OpenAI-compatible server, e.g.
 * `http://127.0.0.1:11434/v1` for Ollama), `OPENAI_API_KEY` (none sent when
 * unset) and `OPENAI_MODEL` (required), with an optional
 * `OPENAI_SYSTEM_PROMPT`. `--token`, or `AGENT_A2A_TOKEN`, makes the agent
 * require that bearer token: give the service the same one as
 * `IAC_CODE_AGUI_A2A_TOKEN`.
 */
import { startOpenAiAgent } from "./agent.js";

/** The port of the service's usual kernel URL, so `IAC_CODE_AGUI_A2A_URL=http://127.0.0.1:41242/` finds it. */
const DEFAULT_PORT = 41242;

const USAGE = `Usage: OPENAI_MODEL=<model> [OPENAI_BASE_URL=<url>] [OPENAI_API_KEY=<key>] node dist/examples/openai-agent/main.js [--port N] [--host H] [--token T]`;

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index > 0 ? process.argv[index + 1] : undefined;
}

async function main() {
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    console.log(USAGE);
    return;
  }
  const model = process.env.OPENAI_MODEL;
  if (!model) throw new Error(`OPENAI_MODEL is not set: name the model to call.\n${USAGE}`);
  const port = Number(flag("--port") ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0) throw new Error(`--port must be a port number.\n${USAGE}`);
  const baseUrl = process.env.OPENAI_BASE_URL || "https://api.openai.com/v1";
  const agent = await startOpenAiAgent({
    endpoint: { baseUrl, apiKey: process.env.OPENAI_API_KEY || undefined, model },
    systemPrompt: process.env.OPENAI_SYSTEM_PROMPT || undefined,
    token: flag("--token") ?? (process.env.AGENT_A2A_TOKEN || undefined),
    host: flag("--host") ?? "127.0.0.1",
    port,
  });
  // The base URL is shown, never the key.
  console.log(`A2A 1.0 agent on ${agent.url}, answering with ${model} at ${baseUrl}`);
  console.log(`Put the service in front of it: IAC_CODE_AGUI_A2A_URL=${agent.url} npm start`);
  const stop = () => void agent.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
