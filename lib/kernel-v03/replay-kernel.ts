/**
 * The A2A 0.3 demo and test kernel: a stock JSON-RPC server on
 * `@a2a-js/sdk` 0.3 (`DefaultRequestHandler`, in-memory task store) whose
 * agent replays recorded 0.3 streams (`examples/fixtures-v03/`) and sends
 * no iac-code metadata, so it stands for any A2A 0.3 agent deployed today.
 * It speaks `message/stream`, `message/send`, `tasks/get`, `tasks/cancel`
 * and `tasks/resubscribe` as the SDK does; the service must cope with that,
 * so nothing here bends the SDK towards the service. Beside A2A it serves
 * only the demo kernel's fixture list (`GET /iac-code/fixtures`,
 * `fixture-list.ts`), so the sandbox offers the 0.3 fixtures by name.
 */
import path from "node:path";
import { AGENT_CARD_PATH, type AgentCard } from "a2a-sdk-v03";
import { DefaultRequestHandler, InMemoryTaskStore } from "a2a-sdk-v03/server";
import { agentCardHandler, jsonRpcHandler } from "a2a-sdk-v03/server/express";
import express, { type ErrorRequestHandler } from "express";
import { FIXTURE_LIST_PATH } from "../fixtures/fixture-summary.js";
import { fixtureListRoute } from "../kernel/fixture-list.js";
import type { HoldLine } from "../kernel/replay-executor.js";
import { bearerAuth, closeKernel, httpUnauthorized, listenKernel, recordCalls, type ReceivedCall } from "../kernel/replay-kernel.js";
import { StreamDrops } from "../kernel/stream-drops.js";
import { PROJECT_ROOT } from "../paths.js";
import { SERVICE_VERSION } from "../version.js";
import { CallUser, DEFAULT_FIXTURE_V03, ReplayExecutorV03 } from "./replay-executor.js";

export type { ReceivedCall } from "../kernel/replay-kernel.js";
export { DEFAULT_FIXTURE_V03 } from "./replay-executor.js";

export const FIXTURES_V03_DIR = path.join(PROJECT_ROOT, "examples", "fixtures-v03");

/** Where agents before `agent-card.json` served their card; 0.3 clients still look there. */
export const LEGACY_AGENT_CARD_PATH = ".well-known/agent.json";

export interface ReplayKernelV03Options {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (ephemeral). */
  port?: number;
  /** Default `FIXTURES_V03_DIR` (`examples/fixtures-v03`). */
  fixturesDir?: string;
  /** Multiplies every delayMs (tests use 0 to replay instantly). Default 1. */
  timeScale?: number;
  /** Tests: hold a line of a turn until a promise settles (see `HoldLine`). */
  holdLine?: HoldLine;
  /** When set, every JSON-RPC call must carry `Authorization: Bearer <token>`, else HTTP 401. */
  requireToken?: string;
}

export interface ReplayKernelV03 {
  /** The JSON-RPC URL, also the card's `url`; ends with '/'. */
  url: string;
  /** Every JSON-RPC call, in arrival order, including refused ones. */
  received: ReceivedCall[];
  close(): Promise<void>;
}

// The SDK's own body parser stops at Express's 100 kB default; a message may carry an image.
const BODY_LIMIT = "16mb";

export async function startReplayKernelV03(options: ReplayKernelV03Options = {}): Promise<ReplayKernelV03> {
  const drops = new StreamDrops();
  const fixturesDir = options.fixturesDir ?? FIXTURES_V03_DIR;
  const executor = new ReplayExecutorV03({
    fixturesDir,
    holdLine: options.holdLine,
    timeScale: options.timeScale ?? 1,
    drops,
  });
  const card = agentCard();
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const received: ReceivedCall[] = [];

  const app = express();
  const cardRoute = agentCardHandler({ agentCardProvider: handler });
  app.use(`/${AGENT_CARD_PATH}`, cardRoute);
  app.use(`/${LEGACY_AGENT_CARD_PATH}`, cardRoute);
  app.get(FIXTURE_LIST_PATH, bearerAuth(options.requireToken, httpUnauthorized), fixtureListRoute(fixturesDir));
  app.post(
    "/",
    express.json({ limit: BODY_LIMIT }),
    recordCalls(received),
    bearerAuth(options.requireToken),
    drops.track("message/stream"),
  );
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: (req) => Promise.resolve(new CallUser(req.headers)) }));
  app.use(invalidJson);

  const { server, url } = await listenKernel(app, options);
  card.url = url;

  return {
    url,
    received,
    async close() {
      executor.stopAll();
      await closeKernel(server);
    },
  };
}

function agentCard(): AgentCard {
  return {
    name: "iac-code-agui A2A 0.3 replay kernel",
    description: "Demo A2A 0.3 agent that replays recorded streams of a plain chat agent, with no iac-code metadata.",
    version: SERVICE_VERSION,
    protocolVersion: "0.3.0",
    // The URL is known only once the port is bound; patched in after listen.
    url: "http://127.0.0.1/",
    preferredTransport: "JSONRPC",
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: [
      {
        id: "replay",
        name: "Replay a recorded conversation",
        description: `Type a fixture name (GET ${FIXTURE_LIST_PATH} lists them) to play it; anything else plays ${DEFAULT_FIXTURE_V03}.`,
        tags: ["demo"],
      },
    ],
  };
}

/** Malformed JSON is answered as the 0.3 SDK answers it when it parses the body itself. */
const invalidJson: ErrorRequestHandler = (err, _req, res, next) => {
  if (!(err instanceof SyntaxError && "body" in err)) return next(err);
  res.status(400).json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Invalid JSON payload." } });
};
