/**
 * The cold-resume preflight in the demo kernel (wire contract §1, §5):
 *
 *   POST <base>/iac-code/session/ensure-restored  {cwd, sessionId, taskId?}
 *   → 200 {status: "current"}   the session is live (every other session id)
 *   → 200 {status: "restored"}  brought back from its backup
 *   → 404                       no session to bring back
 *   → 409 {error: {code: "SESSION_BACKUP_NOT_READY", retryable: true, message}}
 *
 * The demo kernel never loses a session, so which answer a session gets is
 * chosen by its id (a fixture or a test script names it): an id containing
 * `not-ready-once` is not ready on its first preflight and restored on the
 * next ones; an id containing `restore-lost` is gone (404).
 */
import express, { type RequestHandler } from "express";
import { isJsonObject } from "../model/json.js";

export const ENSURE_RESTORED_PATH = "/iac-code/session/ensure-restored";

/** A request to the preflight route, as it arrived (refused ones too). */
export interface ReceivedRestore {
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

export const NOT_READY_ONCE = "not-ready-once";
export const RESTORE_LOST = "restore-lost";

/** The route's handlers: records each request, checks `auth`, then answers as the file comment says. */
export function ensureRestoredRoute(received: ReceivedRestore[], auth: RequestHandler): RequestHandler[] {
  const refusedOnce = new Set<string>();
  const answer: RequestHandler = (req, res) => {
    const body: unknown = req.body;
    const sessionId = isJsonObject(body) && typeof body.sessionId === "string" ? body.sessionId : undefined;
    const cwd = isJsonObject(body) && typeof body.cwd === "string" ? body.cwd : undefined;
    if (!sessionId || !cwd) {
      res.status(400).json({ error: { code: "INVALID_INPUT", message: "cwd and sessionId are required." } });
      return;
    }
    if (sessionId.includes(RESTORE_LOST)) {
      res.status(404).json({ error: { code: "SESSION_NOT_FOUND", message: "No backup of this session exists." } });
      return;
    }
    if (sessionId.includes(NOT_READY_ONCE)) {
      if (!refusedOnce.has(sessionId)) {
        refusedOnce.add(sessionId);
        res.status(409).json({
          error: { code: "SESSION_BACKUP_NOT_READY", retryable: true, message: "The session backup is still synchronizing." },
        });
        return;
      }
      res.json({ status: "restored" });
      return;
    }
    res.json({ status: "current" });
  };
  return [
    express.json({ limit: "1mb" }),
    (req, _res, next) => {
      received.push({ body: req.body as unknown, headers: { ...req.headers } });
      next();
    },
    auth,
    answer,
  ];
}
