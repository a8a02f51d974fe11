// The demo kernel in its own process, so its task store (which keeps every task) is not in the heap the soak
// measures, and so a soak can SIGKILL it. Arguments: [port] [--long]. With --long it replays soak/fixtures
// (`long`: a run that works on for ten minutes; `again`: a short answer) in real time.
import { startReplayKernel } from "../dist/lib/kernel/replay-kernel.js";

const [portText = "0", mode] = process.argv.slice(2);
const long = mode === "--long";
const kernel = await startReplayKernel({
  port: Number(portText),
  timeScale: long ? 1 : 0,
  ...(long ? { fixturesDir: new URL("./fixtures", import.meta.url).pathname } : {}),
});
process.on("SIGTERM", () => process.exit(0));
process.send({ type: "ready", url: kernel.url });
