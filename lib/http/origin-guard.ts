/**
 * Which requests may reach the service at all, checked before the token and
 * before every route, the sandbox included, but after the probes (`/health`,
 * `/ready`, see `probes.ts`), which answer any Host.
 *
 * Host: a page of another site can make a browser send requests here by
 * pointing its own DNS name at 127.0.0.1 (DNS rebinding); the browser then
 * treats the answers as that site's. The Host header still carries the
 * site's name, so only names of this service are served: loopback names,
 * the configured listening host, and `IAC_CODE_AGUI_ALLOWED_HOSTS`.
 *
 * Origin: a browser says which page sent a request. Pages of the service
 * itself (the sandbox) are same-origin; any other page must be listed in
 * `IAC_CODE_AGUI_ALLOWED_ORIGINS`, which also turns CORS on for it.
 * Requests without an Origin (curl, servers, SDKs) are not browser pages.
 */
import type { RequestHandler } from "express";
import { AguiError } from "../errors.js";
import { hostnameOf, originOf } from "../net/host-names.js";

export interface OriginPolicy {
  /** The address the service listens on. */
  host: string;
  /** More host names requests may name, as `hostnameOf` reads them. */
  allowedHosts: readonly string[];
  /** Origins of other sites' pages that may call the service, as `originOf` reads them. */
  allowedOrigins: readonly string[];
}

/** What an AG-UI client sends: a JSON body, an SSE accept, a bearer token and the language of its messages. */
const CORS_ALLOWED_HEADERS = "content-type, authorization, accept, accept-language";
const CORS_ALLOWED_METHODS = "GET, POST, OPTIONS";
const CORS_MAX_AGE_S = 600;

/** Addresses that name every interface rather than one: a Host header naming them names no service. */
const WILDCARDS = new Set(["0.0.0.0", "[::]"]);

export const isLoopbackHostname = (hostname: string) =>
  hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

/** `host:port` of a request's Host or of an origin, default ports left out, to tell a same-origin request. */
function authorityOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).host;
  } catch {
    return undefined;
  }
}

export function originGuard({ host, allowedHosts, allowedOrigins }: OriginPolicy): RequestHandler {
  const listening = hostnameOf(host.includes(":") && !host.startsWith("[") ? `[${host}]` : host);
  const hosts = new Set(
    [...allowedHosts.map(hostnameOf), listening].filter((name): name is string => name !== undefined && !WILDCARDS.has(name)),
  );
  const origins = new Set(allowedOrigins.map(originOf).filter((origin) => origin !== undefined));

  return (req, res, next) => {
    const hostHeader = req.headers.host ?? "";
    const hostname = hostnameOf(hostHeader);
    if (hostname === undefined || !(isLoopbackHostname(hostname) || hosts.has(hostname))) {
      return next(new AguiError("HOST_NOT_ALLOWED"));
    }
    const originHeader = req.headers.origin;
    if (originHeader === undefined) return next();
    res.vary("Origin");
    const origin = originOf(originHeader);
    const listed = origin !== undefined && origins.has(origin);
    // The Host was checked above, so a page whose origin names that same host and port is one of this service's own.
    const sameOrigin = origin !== undefined && new URL(origin).host === authorityOf(hostHeader);
    if (!listed && !sameOrigin) return next(new AguiError("ORIGIN_NOT_ALLOWED"));
    if (!listed) return next();
    res.set("Access-Control-Allow-Origin", origin);
    if (req.method === "OPTIONS" && req.get("access-control-request-method") !== undefined) {
      // A preflight carries no token: it is answered here, before authentication.
      res.set({
        "Access-Control-Allow-Methods": CORS_ALLOWED_METHODS,
        "Access-Control-Allow-Headers": CORS_ALLOWED_HEADERS,
        "Access-Control-Max-Age": String(CORS_MAX_AGE_S),
      });
      res.status(204).end();
      return;
    }
    next();
  };
}
