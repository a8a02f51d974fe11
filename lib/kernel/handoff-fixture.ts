/**
 * The demo kernel's session handoff routes (`/iac-code/handoff/<op>`, wire
 * contract §10), answered from a fixture rather than a real session store:
 * capabilities say handoff is supported, `prepare`, `restore`, `authorize`
 * and `discover` answer fixed documents, and `apply-input` answers
 * `NOT_READY agui_input_delivery_required` the first time it sees an input
 * (by its `inputDigest`), then `APPLIED` — the path on which the adapter
 * delivers the pending input as a run of its own before asking again.
 */
import express, { type RequestHandler } from "express";

export const HANDOFF_PATH = "/iac-code/handoff";
export const HANDOFF_VERSION = "session-handoff-v1";

/** A request to a handoff route. */
export interface ReceivedHandoff {
  op: string;
  method: string;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

export const HANDOFF_FIXTURE = {
  capabilities: {
    version: HANDOFF_VERSION,
    supported: true,
    protocols: ["agui"],
    operations: ["prepare", "restore", "authorize", "discover", "apply-input"],
  },
  prepare: { status: "PREPARED", version: HANDOFF_VERSION, checkpoint: "demo-checkpoint" },
  restore: { status: "RESTORED", version: HANDOFF_VERSION },
  authorize: { status: "AUTHORIZED", version: HANDOFF_VERSION },
  discover: { status: "FOUND", version: HANDOFF_VERSION, sessions: [] },
  applyInputNotReady: { status: "NOT_READY", reason: "agui_input_delivery_required" },
  applyInputApplied: { status: "APPLIED", version: HANDOFF_VERSION },
} as const;

const FIXED_ANSWERS: Record<string, unknown> = {
  prepare: HANDOFF_FIXTURE.prepare,
  restore: HANDOFF_FIXTURE.restore,
  authorize: HANDOFF_FIXTURE.authorize,
  discover: HANDOFF_FIXTURE.discover,
};

/** The routes, each request noted in `received` first; `guard` (the kernel's bearer check) runs before any answer. */
export function handoffFixtureRoutes(received: ReceivedHandoff[], guard: RequestHandler, bodyLimit: string): express.Router {
  const router = express.Router();
  const delivered = new Set<string>();
  const note: RequestHandler<{ op: string }> = (req, _res, next) => {
    received.push({ op: req.params.op, method: req.method, body: req.body as unknown, headers: { ...req.headers } });
    next();
  };
  router.get("/:op", note, guard, (req, res) => {
    if (req.params.op !== "capabilities") return void res.status(404).json({ error: "unknown handoff operation" });
    res.json(HANDOFF_FIXTURE.capabilities);
  });
  router.post("/:op", express.json({ limit: bodyLimit }), note, guard, (req, res) => {
    const op = req.params.op;
    if (op === "apply-input") {
      const digest = String((req.body as { inputDigest?: unknown } | undefined)?.inputDigest ?? "");
      if (delivered.has(digest)) return void res.json(HANDOFF_FIXTURE.applyInputApplied);
      delivered.add(digest);
      return void res.json(HANDOFF_FIXTURE.applyInputNotReady);
    }
    const answer = FIXED_ANSWERS[op];
    if (answer === undefined) return void res.status(404).json({ error: "unknown handoff operation" });
    res.json(answer);
  });
  return router;
}
