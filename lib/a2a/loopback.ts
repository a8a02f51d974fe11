/**
 * R-CON-2, held for every request to the kernel and not only at start: the
 * service sends the kernel the user's LLM key and cloud credentials, so it
 * talks only to this machine. A URL must name a loopback host, and every
 * connection the client opens checks the addresses a name resolves to (a
 * `localhost` the resolver maps elsewhere is refused too). Redirects are
 * never followed (see `kernel-fetch.ts`).
 */
import dns, { type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import net, { type LookupFunction } from "node:net";

const LOOPBACK_NAMES = new Set(["localhost", "[::1]", "::1"]);

/** A loopback IP address: 127.0.0.0/8, ::1, or 127.0.0.0/8 mapped into IPv6. */
export function isLoopbackAddress(address: string): boolean {
  if (net.isIPv4(address)) return address.startsWith("127.");
  const lower = address.toLowerCase();
  return lower === "::1" || lower === "0:0:0:0:0:0:0:1" || (lower.startsWith("::ffff:") && isLoopbackAddress(lower.slice(7)));
}

/** A URL's hostname that names this machine: `localhost`, a loopback address (IPv6 in brackets or not). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (LOOPBACK_NAMES.has(host)) return true;
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return net.isIP(bare) !== 0 && isLoopbackAddress(bare);
}

/** Why a request is refused before it is sent; undefined when its URL may be used. */
export function refusalOf(url: string | URL): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${String(url)}" is not a URL`;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `${parsed.protocol} is not http(s)`;
  if (!isLoopbackHost(parsed.hostname)) return `${parsed.hostname} is not a loopback address`;
  return undefined;
}

type Resolve = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (error: Error | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for sockets that resolves as usual and keeps only loopback
 * addresses; a name with none fails the connection. (IP literals are not
 * looked up: `refusalOf` has checked those.)
 */
export function loopbackLookup(resolve: Resolve = dns.lookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "");
      const loopback = addresses.filter(({ address }) => isLoopbackAddress(address));
      if (loopback.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves to no loopback address`), { code: "ENOTLOOPBACK" });
        return callback(refused, "");
      }
      // The caller asked for one address or for all of them (Node's happy eyeballs asks for all).
      if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, loopback);
      callback(null, loopback[0]!.address, loopback[0]!.family);
    });
  };
}

// Set as Node 20's global agents are (keep-alive, an idle socket closed after 5 s), which the client used before.
const AGENT_OPTIONS = { keepAlive: true, timeout: 5_000, lookup: loopbackLookup() };
const httpAgent = new http.Agent(AGENT_OPTIONS);
const httpsAgent = new https.Agent(AGENT_OPTIONS);

/** The `agent` of every request to the kernel (node-fetch's option, and `node:http`'s): loopback-only connections. */
export const loopbackAgent = (url: URL): http.Agent => (url.protocol === "https:" ? httpsAgent : httpAgent);
