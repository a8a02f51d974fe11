/**
 * The connection names `system-send-queue.ts` looks up are the ones Linux's
 * tables print, for IPv4, IPv6 and IPv4-mapped addresses: checked against
 * real loopback connections and the real tables.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import { describe, expect, it } from "@jest/globals";
import { connectionKey, establishedQueues } from "../../lib/http/system-send-queue.js";

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

describe("the queues read off a table", () => {
  const table = [
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
    "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3422821 1 0000000038da709a 100 0 0 10 0",
    "   1: 0100007F:1F90 0100007F:D4C2 01 00001A2B:00000000 01:00000014 00000000  1000        0 3422822 1 0000000038da709b 20 4 30 10 -1",
    "   2: 0100007F:D4C2 0100007F:1F90 06 00000000:00000000 03:00001771 00000000     0        0 0 3 0000000038da709c",
    "10000: 0100007F:1F91 0100007F:D4C3 01 00000000:00000000 00:00000000 00000000  1000        0 3422823 1 0000000038da709d 20 4 30 10 -1",
    "   0: 00000000000000000000000001000000:1F90 00000000000000000000000001000000:D4C4 01 00010000:00000000 01:00000014 00000000  1000 0 1",
    "",
  ].join("\n");

  it("names each established connection as `connectionKey` does, with its tx_queue; other states are left out", () => {
    expect(establishedQueues(table)).toEqual(
      new Map([
        ["0100007F:1F90>0100007F:D4C2", 0x1a2b],
        ["0100007F:1F91>0100007F:D4C3", 0],
        ["00000000000000000000000001000000:1F90>00000000000000000000000001000000:D4C4", 0x10000],
      ]),
    );
    expect(establishedQueues("")).toEqual(new Map());
    expect(establishedQueues(table.split("\n")[0]!)).toEqual(new Map());
  });

  (process.platform === "linux" ? it : it.skip)("reads the host's own tables as a split of every line does", () => {
    for (const path of ["/proc/net/tcp", "/proc/net/tcp6"]) {
      const text = readFileSync(path, "latin1");
      const bySplit = new Map<string, number>();
      for (const line of text.split("\n").slice(1)) {
        const fields = line.trim().split(/\s+/);
        if (fields.length >= 5 && fields[3] === "01") bySplit.set(`${fields[1]}>${fields[2]}`, parseInt(fields[4]!.split(":")[0]!, 16));
      }
      expect(establishedQueues(text)).toEqual(bySplit);
    }
  });
});
