/**
 * The embedded demo kernel: a real A2A 1.0 JSON-RPC server built on
 * `@a2a-js/sdk` that replays recorded kernel streams (`examples/fixtures/`).
 * The adapter reaches it over HTTP like any other kernel, so the demo and
 * the tests exercise the same client code a production kernel does. Next to
 * the JSON-RPC route it serves the pipeline recovery route
 * (`GET /iac-code/pipeline/state`, `pipeline-state.ts`) and the session
 * handoff routes from a fixture (`/iac-code/handoff/<op>`, `handoff-fixture.ts`),
 * and the list of its fixtures for the sandbox (`GET /iac-code/fixtures`, `fixture-list.ts`).
 */
import { timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AGENT_CARD_PATH, AgentCard } from "@a2a-js/sdk";
import { InMemoryTaskStore, ServerCallContext } from "@a2a-js/sdk/server";
import { UserBuilder, agentCardHandler, jsonRpcHandler } from "@a2a-js/sdk/server/express";
import express, { type ErrorRequestHandler, type Request, type RequestHandler } from "express";
import { FIXTURES_DIR } from "../paths.js";
import { FixtureErrors } from "./fixture-errors.js";
import { FIXTURE_LIST_PATH } from "../fixtures/fixture-summary.js";
import { fixtureListRoute } from "./fixture-list.js";
import { HANDOFF_PATH, handoffFixtureRoutes, type ReceivedHandoff } from "./handoff-fixture.js";
import { PendingInputs, WaitingTaskStore } from "./interrupts.js";
import { PipelineLog, pipelineStateRoute } from "./pipeline-state.js";
import { ENSURE_RESTORED_PATH, ensureRestoredRoute, type ReceivedRestore } from "./session-restore.js";
import { ReplayExecutor, type HoldLine, type ReplayScript } from "./replay-executor.js";
import { ReplayRequestHandler } from "./replay-request-handler.js";
import { StreamDrops } from "./stream-drops.js";
import { HistoryTaskStore, TaskHistory } from "./task-history.js";

export type { FixtureError, FixtureLine, FixtureSection } from "../fixtures/fixture-format.js";
export type { ReceivedHandoff } from "./handoff-fixture.js";
export type { HoldLine, ReplayScript, ReplayTurn } from "./replay-executor.js";
export type { ReceivedRestore } from "./session-restore.js";

export interface ReceivedCall {
  method: string;
  params: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** A request to the pipeline recovery route. */
export interface ReceivedRecovery {
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

export interface ReplayKernelOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (ephemeral). */
  port?: number;
  /** Default `FIXTURES_DIR` (`examples/fixtures`). */
  fixturesDir?: string;
  /** Tests: choose the lines for a turn instead of a fixture file. Return undefined to fall back to fixture selection. */
  script?: ReplayScript;
  /** Tests: hold a line of a turn until a promise settles (see `HoldLine`). */
  holdLine?: HoldLine;
  /** When set, every JSON-RPC call (and the pipeline recovery route) must carry `Authorization: Bearer <token>`, else HTTP 401. */
  requireToken?: string;
  /** Multiplies every delayMs (tests use 0 to replay instantly). Default 1. */
  timeScale?: number;
}

export interface ReplayKernel {
  /** The JSON-RPC URL; ends with '/'. */
  url: string;
  /** Every JSON-RPC call, in arrival order, including refused ones. */
  received: ReceivedCall[];
  /** Every request to the pipeline recovery route, in arrival order, including refused ones. */
  recoveries: ReceivedRecovery[];
  /** Every request to the cold-resume preflight (`session-restore.ts`), in arrival order, including refused ones. */
  restores: ReceivedRestore[];
  /** Every request to the session handoff routes (`handoff-fixture.ts`), in arrival order, including refused ones. */
  handoffs: ReceivedHandoff[];
  /**
   * Tests: a task learns of more to wait on while no turn runs, as a real
   * kernel's parked task does when a sub-agent asks meanwhile. `iacCode` is
   * taken as a status's `metadata.iac_code` would be (an `input` projection,
   * a `pendingPermissions` list; see `interrupts.ts`), with no status sent:
   * only GetTask (and a later turn's Task frame) shows it.
   */
  addWaiting(taskId: string, iacCode: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

/** The pipeline recovery route (wire contract §1, §6), relative to the kernel's base URL. */
export const PIPELINE_STATE_PATH = "/iac-code/pipeline/state";

// Requests carry images (12 MiB per request body, wire contract §1); the
// SDK's own parser stops at Express's 100 kB default, so parse first.
const BODY_LIMIT = "16mb";

export async function startReplayKernel(options: ReplayKernelOptions = {}): Promise<ReplayKernel> {
  const errors = new FixtureErrors();
  const pending = new PendingInputs();
  const drops = new StreamDrops();
  const pipeline = new PipelineLog();
  const history = new TaskHistory();
  const executor = new ReplayExecutor({
    fixturesDir: options.fixturesDir ?? FIXTURES_DIR,
    script: options.script,
    holdLine: options.holdLine,
    timeScale: options.timeScale ?? 1,
    errors,
    pending,
    drops,
    pipeline,
    history,
  });
  const card = agentCard();
  const store = new WaitingTaskStore(new HistoryTaskStore(new InMemoryTaskStore(), history), pending);
  const handler = new ReplayRequestHandler(card, store, executor, errors, pending, history);
  const received: ReceivedCall[] = [];
  const recoveries: ReceivedRecovery[] = [];
  const restores: ReceivedRestore[] = [];
  const handoffs: ReceivedHandoff[] = [];

  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.get(
    PIPELINE_STATE_PATH,
    (req, _res, next) => {
      recoveries.push({ query: { ...req.query }, headers: { ...req.headers } });
      next();
    },
    bearerAuth(options.requireToken, httpUnauthorized),
    pipelineStateRoute(pipeline, pending),
  );
  app.get(FIXTURE_LIST_PATH, bearerAuth(options.requireToken, httpUnauthorized), fixtureListRoute(options.fixturesDir ?? FIXTURES_DIR));
  app.post(ENSURE_RESTORED_PATH, ...ensureRestoredRoute(restores, bearerAuth(options.requireToken, httpUnauthorized)));
  app.use(HANDOFF_PATH, handoffFixtureRoutes(handoffs, bearerAuth(options.requireToken, httpUnauthorized), BODY_LIMIT));
  app.post(
    "/",
    express.json({ limit: BODY_LIMIT }),
    recordCalls(received),
    bearerAuth(options.requireToken),
    errors.restoreErrorData(),
    drops.track(),
  );
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  app.use(invalidJson);

  const { server, url } = await listenKernel(app, options);
  card.supportedInterfaces[0]!.url = url;

  return {
    url,
    received,
    recoveries,
    restores,
    handoffs,
    async addWaiting(taskId, iacCode) {
      const context = new ServerCallContext();
      const task = await store.load(taskId, context);
      if (!task) throw new Error(`addWaiting: no task ${taskId}`);
      pending.noteStatus(taskId, task.status?.state, { iac_code: iacCode });
      // Saved again so the stored task's metadata shows the new wait (`WaitingTaskStore`).
      await store.save(task, context);
    },
    async close() {
      executor.stopAll();
      await closeKernel(server);
    },
  };
}

/** Serves `app` on the kernel's host and port (default 127.0.0.1, ephemeral); `url` is its base URL, ending with '/' (the 0.3 kernel too). */
export async function listenKernel(
  app: express.Express,
  options: { host?: string; port?: number },
): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return { server, url: `http://${address.includes(":") ? `[${address}]` : address}:${port}/` };
}

export async function closeKernel(server: http.Server): Promise<void> {
  // Open streams (a subscription to a parked task stays silent forever)
  // would otherwise keep `close` and the process waiting.
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
}

function agentCard(): AgentCard {
  return AgentCard.fromJSON({
    name: "iac-code-agui replay kernel",
    description: "Demo A2A 1.0 kernel that replays recorded iac-code kernel streams.",
    version: "1.0.0",
    // The URL is known only once the port is bound; patched in after listen.
    supportedInterfaces: [{ url: "http://127.0.0.1/", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    capabilities: { streaming: true },
    defaultInputModes: ["text/plain", "application/json", "image/png", "image/jpeg", "image/gif", "image/webp"],
    defaultOutputModes: ["text/plain"],
    skills: [],
  });
}

/** Notes every JSON-RPC call in `received`, in arrival order, before anything can refuse it (the 0.3 kernel too). */
export function recordCalls(received: ReceivedCall[]): RequestHandler {
  return (req, _res, next) => {
    const body: unknown = req.body;
    if (typeof body === "object" && body !== null && "method" in body && typeof body.method === "string") {
      received.push({ method: body.method, params: "params" in body ? body.params : undefined, headers: { ...req.headers } });
    }
    next();
  };
}

const UNAUTHORIZED = "Unauthorized: a valid bearer token is required.";
type UnauthorizedBody = (req: Request) => unknown;
const jsonRpcUnauthorized: UnauthorizedBody = (req) => ({
  jsonrpc: "2.0",
  id: req.body?.id ?? null,
  error: { code: -32600, message: UNAUTHORIZED },
});
export const httpUnauthorized: UnauthorizedBody = () => ({ error: { code: "UNAUTHORIZED", message: UNAUTHORIZED } });

export function bearerAuth(token: string | undefined, body: UnauthorizedBody = jsonRpcUnauthorized): RequestHandler {
  if (token === undefined) return (_req, _res, next) => next();
  const expected = Buffer.from(`Bearer ${token}`);
  return (req, res, next) => {
    const given = Buffer.from(req.header("authorization") ?? "");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return next();
    res.status(401).set("WWW-Authenticate", "Bearer").json(body(req));
  };
}

/** Malformed JSON is answered as the SDK answers it when it parses the body itself. */
const invalidJson: ErrorRequestHandler = (err, _req, res, next) => {
  if (!(err instanceof SyntaxError && "body" in err)) return next(err);
  res.status(200).json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Invalid JSON payload." } });
};
