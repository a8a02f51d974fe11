/**
 * Host names and origins as the service compares them: the configuration
 * normalizes `IAC_CODE_AGUI_ALLOWED_HOSTS` and `IAC_CODE_AGUI_ALLOWED_ORIGINS`
 * with these at start, and the origin guard (`http/origin-guard.ts`) reads
 * each request's Host and Origin with the same two, so a listed name and a
 * requested one are written alike.
 */

/** Host-header syntax: no user info, path, query or fragment, which a URL parser would step over to find another host. */
const HOST_SYNTAX = /^[^\s@/\\?#]+$/;

/**
 * The host name a Host header (or an allowed-hosts entry) names, the port
 * left out: lowercase, IPv4 in dotted decimal, IPv6 in brackets, without a
 * trailing dot. Undefined when the value is not a host.
 */
export function hostnameOf(value: string): string | undefined {
  if (!HOST_SYNTAX.test(value)) return undefined;
  try {
    return new URL(`http://${value}`).hostname.replace(/\.$/, "") || undefined;
  } catch {
    return undefined;
  }
}

/** `http(s)://host[:port]` as a browser serializes it; undefined for anything else, `null` included. */
export function originOf(value: string): string | undefined {
  try {
    const url = new URL(value);
    const bare = url.pathname === "/" && url.search === "" && url.hash === "" && url.username === "" && url.password === "";
    return bare && (url.protocol === "http:" || url.protocol === "https:") ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
