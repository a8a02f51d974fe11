// The demo kernel in its own process, so its task store (which keeps every task) is not in the heap the soak measures.
import { startReplayKernel } from "../dist/lib/kernel/replay-kernel.js";
const kernel = await startReplayKernel({ timeScale: 0 });
process.on("SIGTERM", () => process.exit(0));
process.send({ type: "ready", url: kernel.url });
