/**
 * The nearest peer, served the way AG-UI's server examples serve an agent:
 * one Express POST route that checks the body with `@ag-ui/core`'s
 * `RunAgentInputSchema`, runs `@ag-ui/a2a`'s `A2AAgent` over `@a2a-js/sdk`'s
 * `A2AClient` (the peer's own dependency, 0.2.x, as the AG-UI dojo's
 * "a2a-basic" integration builds it), and writes each event with
 * `@ag-ui/encoder`'s `EventEncoder` as SSE; a client that leaves
 * unsubscribes its run. One agent serves every request, as the dojo has it.
 *
 * argv: <kernel base URL>. Run as a child (`fork`): announces
 * `{type: "ready", url}`; answers `{type: "stats", gc?}` like the service.
 */
import http from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type { BaseEvent, RunAgentInput } from "@ag-ui/core";
import { RunAgentInputSchema } from "@ag-ui/core/schemas";
import { EventEncoder } from "@ag-ui/encoder";
import { A2AAgent } from "@ag-ui/a2a";
import express from "express";
import { processStats } from "./support.js";

interface Subscribable {
  subscribe(observer: { next(event: BaseEvent): void; error(): void; complete(): void }): { unsubscribe(): void };
}

// The client the peer is built for is its own dependency, not this project's @a2a-js/sdk 1.x.
const peerRequire = createRequire(fileURLToPath(import.meta.resolve("@ag-ui/a2a")));
const { A2AClient } = peerRequire("@a2a-js/sdk/client") as { A2AClient: new (url: string) => unknown };

export async function startPeer(kernelUrl: string, port = 0): Promise<{ url: string; server: http.Server }> {
  const agent = new A2AAgent({ a2aClient: new A2AClient(kernelUrl) as never, description: "Direct A2A agent" });
  const app = express();
  app.use(express.json());
  app.post("/", (req, res) => {
    let input: RunAgentInput;
    try {
      input = RunAgentInputSchema.parse(req.body);
    } catch (error) {
      return void res.status(400).json({ error: "invalid RunAgentInput", detail: String(error).slice(0, 500) });
    }
    const encoder = new EventEncoder({ accept: req.headers.accept });
    res.writeHead(200, { "Content-Type": encoder.getContentType(), "Cache-Control": "no-cache", Connection: "keep-alive" });
    const subscription = (agent.run(input) as unknown as Subscribable).subscribe({
      next: (event) => void res.write(encoder.encode(event)),
      error: () => void res.end(),
      complete: () => void res.end(),
    });
    res.on("close", () => subscription.unsubscribe());
  });
  const server = http.createServer(app);
  server.maxConnections = 20_000;
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

if (process.send) {
  const peer = await startPeer(process.argv[2]!);
  process.on("SIGTERM", () => process.exit(0));
  process.on("message", (message: { type: string; gc?: boolean }) => {
    if (message.type === "stats") process.send!({ type: "stats", ...processStats(message.gc ?? false) });
  });
  process.send({ type: "ready", url: peer.url });
}
