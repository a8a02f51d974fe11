/**
 * The language of a request's messages: its body's `preferredLanguage`
 * (as a run's request carries it), else `Accept-Language`. The body may not
 * have passed validation yet, so nothing in it is trusted but a string.
 */
import type { Request } from "express";
import { resolveLanguage } from "../i18n/index.js";

export function requestLanguage(req: Request): string {
  const body: unknown = req.body;
  const preferred = (body as { forwardedProps?: { iacCode?: { preferredLanguage?: unknown } } } | undefined)?.forwardedProps?.iacCode
    ?.preferredLanguage;
  return resolveLanguage(typeof preferred === "string" ? preferred : undefined, req.get("accept-language"));
}
