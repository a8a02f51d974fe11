/**
 * Room for probes and real requests under a connection flood. Node closes
 * every new connection past `server.maxConnections` as it arrives, so a
 * client that opened a thousand sockets and sent one header line every few
 * seconds (no token needed: nothing is read yet) made every request fail,
 * `/health` and `/ready` included, until Node's header timeout ended them.
 *
 * Two brakes, neither a bet on how fast honest clients are:
 * - a connection must send its whole request head within
 *   `HEADERS_TIMEOUT_MS` (Node answers 408 and closes it), checked every
 *   `CONNECTIONS_CHECK_MS`;
 * - past `maxConnections`, a new connection closes the longest-waiting one
 *   that has no request in progress (still sending its head, or idle
 *   between keep-alive requests), and is closed itself when there is none.
 *   A probe or any honest request sends its head at once, so it is served;
 *   what goes is what has waited longest and sent least. A request being
 *   answered (a run's stream, say) is never closed this way. Node's own cap
 *   is set a little higher, so a burst of new connections is still seen
 *   here before the closed ones are counted gone.
 *
 * No per-address limit: behind a proxy or a load balancer every client
 * shares its address, and such a limit would turn one flood into an outage
 * for all of them.
 */
import type { Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** How long a connection may take to send its request line and headers. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** How often Node looks for connections past the header timeout. */
export const CONNECTIONS_CHECK_MS = 1_000;
/** Connections Node accepts past the limit, for this guard to decide on. */
const BURST_ROOM = 64;

export function guardConnections(server: Server, maxConnections: number): void {
  server.maxConnections = maxConnections + BURST_ROOM;
  // Insertion order is waiting order: the first is the one that has waited longest.
  const waiting = new Set<Socket>();
  const open = new Set<Socket>();

  const closeLongestWaiting = (): boolean => {
    for (const socket of waiting) {
      waiting.delete(socket);
      open.delete(socket);
      if (socket.destroyed) continue;
      socket.destroy();
      return true;
    }
    return false;
  };

  // One listener of each kind for every connection and response (not a closure each): a run's stream keeps its
  // connection and its response, and what they hold, for as long as it lasts. `close` and `finish` come once.
  function forget(this: Socket): void {
    open.delete(this);
    waiting.delete(this);
  }
  // Idle again once answered, if the client keeps the connection: it waits for its next request at the back.
  function waitsAgain(this: ServerResponse): void {
    const { socket } = this.req;
    if (open.has(socket) && !socket.destroyed) waiting.add(socket);
  }

  server.on("connection", (socket: Socket) => {
    if (open.size >= maxConnections && !closeLongestWaiting()) {
      socket.destroy();
      return;
    }
    open.add(socket);
    waiting.add(socket);
    socket.on("close", forget);
  });
  server.on("request", (request, response) => {
    waiting.delete(request.socket);
    response.on("finish", waitsAgain);
  });
}
