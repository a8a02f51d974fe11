// The demo kernel in its own process, so its task store (which keeps every task) is not in the heap the soak
// measures, and so a soak can SIGKILL it. Arguments: [port] [--long]. With --long every turn but "again" is a
// run that opens a message, reasoning and a tool call, one frame every 25 ms, then works on for ten minutes.
import { startReplayKernel } from "../dist/lib/kernel/replay-kernel.js";

const [portText = "0", mode] = process.argv.slice(2);

const status = (state, iacCode, text) => ({
  delayMs: 25,
  frame: {
    statusUpdate: {
      taskId: "${taskId}",
      contextId: "${contextId}",
      status: {
        state: `TASK_STATE_${state}`,
        ...(text === undefined ? {} : { message: { messageId: "${taskId}-message", role: "ROLE_AGENT", parts: [{ text }] } }),
      },
      ...(iacCode ? { metadata: { iac_code: iacCode } } : {}),
    },
  },
});
const task = { delayMs: 0, frame: { task: { id: "${taskId}", contextId: "${contextId}", status: { state: "TASK_STATE_SUBMITTED" } } } };
const tool = (toolStatus) => status("WORKING", { tool: { status: toolStatus, toolUseId: "tool-1", name: "ros_deploy_stack", toolInput: { stack: "demo" } } });
const LONG_RUN = [
  task,
  status("WORKING", { iacCodeSessionId: "session-1" }),
  status("WORKING", { thinking: { type: "raw_thinking", text: "Let me think." } }),
  status("WORKING", undefined, "Deploying "),
  tool("started"),
  status("WORKING", undefined, "the stack"),
  tool("input_complete"),
  status("WORKING", { usage: { provider: "dashscope", model: "qwen-max", inputTokens: 10, outputTokens: 5 } }),
  { ...status("COMPLETED"), delayMs: 600_000 },
];
const AGAIN = [task, { ...status("WORKING", undefined, "Back."), delayMs: 0 }, { ...status("COMPLETED"), delayMs: 0 }];

const kernel = await startReplayKernel({
  port: Number(portText),
  timeScale: mode === "--long" ? 1 : 0,
  script: mode === "--long" ? (turn) => (turn.text === "again" ? AGAIN : LONG_RUN) : undefined,
});
process.on("SIGTERM", () => process.exit(0));
process.send({ type: "ready", url: kernel.url });
