/**
 * What the operating system still holds of a TCP connection's sent bytes
 * (written by the service, not yet acknowledged by the client's system):
 * Linux's `tx_queue` in `/proc/net/tcp` and `/proc/net/tcp6`. Node tells no
 * figure finer than its own write queue, and the system wakes a socket's
 * writer only once a third of its send buffer (up to about 1.4 MB) is
 * free; what a slow reader takes meanwhile shows only here, as this queue
 * shrinks each time the client's system opens its window again (after the
 * reader took one segment, 64 KiB on loopback, up to a sixteenth of its
 * receive buffer: a few hundred KiB once that buffer grew).
 *
 * Read for every connection at once and kept briefly, so many connections
 * watched at once cost one read of each table per `MAX_AGE_MS`. Elsewhere
 * than Linux (no such table) every answer is undefined.
 */
import { readFile } from "node:fs/promises";
import { isIPv4 } from "node:net";

const TABLES = ["/proc/net/tcp", "/proc/net/tcp6"];
/** How old a reading may be before the next look asks for a new one: half the shortest stall check. */
const MAX_AGE_MS = 250;
const ESTABLISHED = "01";

/** The address as the tables print it: each 32-bit word of the address in the host's (little-endian) byte order. */
function procAddress(address: string, port: number): string | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  if (isIPv4(address)) return `${wordHex(address.split(".").map(Number))}:${hexPort}`;
  const bytes = ipv6Bytes(address);
  if (bytes === undefined) return undefined;
  const words = [0, 4, 8, 12].map((at) => wordHex(bytes.slice(at, at + 4)));
  return `${words.join("")}:${hexPort}`;
}

const wordHex = (bytes: number[]) =>
  [...bytes]
    .reverse()
    .map((byte) => byte.toString(16).toUpperCase().padStart(2, "0"))
    .join("");

function ipv6Bytes(address: string): number[] | undefined {
  const bare = address.split("%")[0]!;
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(bare)?.[1];
  const head = v4Tail === undefined ? bare : bare.slice(0, -v4Tail.length) + "0:0";
  const [left = "", right] = head.split("::");
  const groups = (text: string) => (text === "" ? [] : text.split(":"));
  const lefts = groups(left);
  const rights = right === undefined ? [] : groups(right);
  const missing = 8 - lefts.length - rights.length;
  if (missing < 0 || (right === undefined && missing !== 0)) return undefined;
  const all = [...lefts, ...Array<string>(missing).fill("0"), ...rights].map((group) => parseInt(group, 16));
  if (all.some((group) => !Number.isInteger(group) || group < 0 || group > 0xffff)) return undefined;
  const bytes = all.flatMap((group) => [group >> 8, group & 0xff]);
  if (v4Tail !== undefined) bytes.splice(12, 4, ...v4Tail.split(".").map(Number));
  return bytes;
}

let reading: { at: number; queues: Promise<Map<string, number>> } | undefined;
let latest = new Map<string, number>();
let readings = 0;

/**
 * How many times the tables were read since the process started. One
 * reading costs the system milliseconds per thousand connections, so only a
 * client that leaves bytes waiting may ask for one; the specs check that.
 */
export const systemTableReadings = (): number => readings;

async function readQueues(): Promise<Map<string, number>> {
  readings++;
  const queues = new Map<string, number>();
  for (const table of TABLES) establishedQueues(await readFile(table, "latin1").catch(() => ""), queues);
  return queues;
}

/**
 * Each established connection's `tx_queue` in one table's text, into
 * `queues` by its name (`connectionKey`). A line is "sl: local remote st
 * tx_queue:rx_queue …", its fields one space apart after the first column:
 * they are read off by position, for a host's table may hold thousands of
 * connections (every socket of the network namespace, closed ones waiting
 * too), and splitting every line took milliseconds of the event loop and
 * a tenth of what a streaming service allocated.
 */
export function establishedQueues(text: string, queues = new Map<string, number>()): Map<string, number> {
  // The first line is the header.
  for (let start = text.indexOf("\n") + 1; start > 0 && start < text.length;) {
    const newline = text.indexOf("\n", start);
    const lineEnd = newline === -1 ? text.length : newline;
    const local = text.indexOf(": ", start) + 2;
    const remote = text.indexOf(" ", local) + 1;
    const state = text.indexOf(" ", remote) + 1;
    if (local > 1 && remote > local && state > remote && state + 3 < lineEnd && text.startsWith(`${ESTABLISHED} `, state)) {
      const txQueue = state + 3;
      const name = `${text.slice(local, remote - 1)}>${text.slice(remote, state - 1)}`;
      queues.set(name, parseInt(text.slice(txQueue, text.indexOf(":", txQueue)), 16));
    }
    start = lineEnd + 1;
  }
  return queues;
}

/** A connection as the tables name it (its local then remote address), or undefined when it cannot be named. */
export function connectionKey(socket: {
  localAddress?: string | undefined;
  localPort?: number | undefined;
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
}): string | undefined {
  const { localAddress, localPort, remoteAddress, remotePort } = socket;
  if (!localAddress || !remoteAddress || localPort === undefined || remotePort === undefined) return undefined;
  const local = procAddress(localAddress, localPort);
  const remote = procAddress(remoteAddress, remotePort);
  return local === undefined || remote === undefined ? undefined : `${local}>${remote}`;
}

/**
 * The connection's queue as last read (undefined before the first reading,
 * for a connection not in the tables, and off Linux); asks for a new reading
 * when the last is older than `MAX_AGE_MS`, so the next look sees a fresh one.
 */
export function systemSendQueue(key: string, now = Date.now()): number | undefined {
  if (process.platform !== "linux") return undefined;
  if (reading === undefined || now - reading.at >= MAX_AGE_MS) {
    const queues = readQueues();
    reading = { at: now, queues };
    void queues.then((read) => {
      latest = read;
    });
  }
  return latest.get(key);
}
