/**
 * Bearer authentication (R-HTTP-4): when a token is configured, every
 * request must carry it, compared in constant time so the answer's timing
 * says nothing about how much of a guess was right.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { AguiError } from "../errors.js";

// Hashing first gives equal-length inputs, as timingSafeEqual requires, without leaking the length.
const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

export function bearerAuth(token: string | undefined): RequestHandler {
  if (token === undefined) return (_req, _res, next) => next();
  // `loadConfig` refuses it too; an embedder passing "" must not get a service without authentication either.
  if (token.trim() === "") throw new Error("an empty auth token would turn authentication off; leave it undefined for none");
  const expected = digest(token);
  return (req, _res, next) => {
    const match = /^Bearer\s+(.+)$/i.exec(req.get("authorization") ?? "");
    const presented = match?.[1]?.trim();
    next(presented !== undefined && timingSafeEqual(digest(presented), expected) ? undefined : new AguiError("UNAUTHORIZED"));
  };
}
