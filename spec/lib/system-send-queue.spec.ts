/**
 * The connection names `system-send-queue.ts` looks up are the ones Linux's
 * tables print, for IPv4, IPv6 and IPv4-mapped addresses: checked against
 * real loopback connections and the real tables.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import { describe, expect, it } from "@jest/globals";
import { connectionKey } from "../../lib/http/system-send-queue.js";

const tableKeys = () =>
  ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((table) =>
    readFileSync(table, "latin1")
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields.length > 4)
      .map((fields) => `${fields[1]}>${fields[2]}`),
  );

/** A server on `host`, a client to `connectTo`, and the server's side of the connection. */
async function connection(host: string, connectTo: string): Promise<{ accepted: net.Socket; close: () => void }> {
  const server = net.createServer();
  const accepted = new Promise<net.Socket>((resolve) => server.once("connection", resolve));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const client = net.connect((server.address() as net.AddressInfo).port, connectTo);
  const socket = await accepted;
  return {
    accepted: socket,
    close: () => {
      client.destroy();
      socket.destroy();
      server.close();
    },
  };
}

(process.platform === "linux" ? describe : describe.skip)("a connection's name in the system's tables", () => {
  it.each([
    ["IPv4", "127.0.0.1", "127.0.0.1"],
    ["IPv6", "::1", "::1"],
    ["IPv4-mapped, on a dual-stack server", "::", "127.0.0.1"],
  ])("%s", async (_kind, host, connectTo) => {
    const { accepted, close } = await connection(host, connectTo).catch(() => ({ accepted: undefined, close: () => {} }));
    try {
      // A machine without IPv6 loopback has nothing to check.
      if (accepted === undefined) return;
      const key = connectionKey(accepted);
      expect(key).toBeDefined();
      expect(tableKeys()).toContain(key);
    } finally {
      close();
    }
  });
});
