/**
 * The kernel a service talks to, in one of three ways: a URL it was given
 * (`IAC_CODE_AGUI_A2A_URL`), a command it runs and supervises
 * (`IAC_CODE_AGUI_KERNEL_COMMAND`, see `supervisor.ts`), or, with neither,
 * the embedded demo kernel in its own process: the A2A 0.3 one
 * (`lib/kernel-v03/`) when `IAC_CODE_AGUI_A2A_DIALECT` is `0.3`, so the
 * service can be tried in front of a stock 0.3 agent with no other process.
 *
 * The demo kernels are A2A servers (`@a2a-js/sdk/server`, and the 0.3 SDK's
 * for the 0.3 one): they are imported only when one is started, so a
 * service in front of a real kernel loads none of that code.
 */
import { DEFAULT_KERNEL_START_TIMEOUT_S, type Config } from "../config.js";
import type { ReplayKernel } from "../kernel/replay-kernel.js";
import type { ReplayKernelV03 } from "../kernel-v03/replay-kernel.js";
import { iacCodeKernelLaunch } from "./iac-code-kernel.js";
import { startKernelProcess, type KernelLog, type KernelProcess, type KernelProcessOptions } from "./supervisor.js";

export interface ServiceKernel {
  url: string;
  /** Set when the service started its own demo kernel. */
  embedded: ReplayKernel | ReplayKernelV03 | undefined;
  /** Set when the service runs `IAC_CODE_AGUI_KERNEL_COMMAND` or `IAC_CODE_AGUI_KERNEL`. */
  process: KernelProcess | undefined;
  /** The token the kernel the service runs by name requires; every call sends it instead of `IAC_CODE_AGUI_A2A_TOKEN`. */
  token?: string;
  /** Stops what the service started; a kernel at a given URL is not the service's to stop. */
  close(): Promise<void>;
}

export type ServiceKernelConfig = Pick<
  Config,
  "a2aUrl" | "a2aToken" | "authToken" | "kernelCommand" | "kernelStartTimeoutS" | "a2aDialect" | "kernel" | "allowedCwds"
>;

export async function startServiceKernel(
  config: ServiceKernelConfig,
  {
    log,
    env = process.env,
    supervision = {},
  }: {
    /** The service's logger (or one shaped like it). */
    log: KernelLog;
    env?: NodeJS.ProcessEnv;
    /** Tests: the restart policy, the stop grace, events. */
    supervision?: Pick<KernelProcessOptions, "restart" | "stopGraceMs" | "onEvent">;
  },
): Promise<ServiceKernel> {
  if (config.kernel === "iac-code") {
    const launch = iacCodeKernelLaunch({ env: kernelEnvironment(env), allowedCwds: config.allowedCwds });
    const kernel = await startKernelProcess({
      ...supervision,
      argv: launch.argv,
      env: launch.env,
      token: launch.token,
      log,
      secrets: [launch.token, config.a2aToken, config.authToken],
      startTimeoutMs: (config.kernelStartTimeoutS ?? DEFAULT_KERNEL_START_TIMEOUT_S) * 1000,
      name: "the iac-code kernel (IAC_CODE_AGUI_KERNEL=iac-code, `iac-code a2a` on PATH)",
    });
    return { url: kernel.url, embedded: undefined, process: kernel, token: launch.token, close: () => kernel.stop() };
  }
  if (config.kernelCommand !== undefined) {
    const kernel = await startKernelProcess({
      ...supervision,
      argv: config.kernelCommand,
      env: kernelEnvironment(env),
      token: config.a2aToken,
      log,
      secrets: [config.a2aToken, config.authToken],
      startTimeoutMs: (config.kernelStartTimeoutS ?? DEFAULT_KERNEL_START_TIMEOUT_S) * 1000,
    });
    return { url: kernel.url, embedded: undefined, process: kernel, close: () => kernel.stop() };
  }
  if (config.a2aUrl !== undefined) return { url: config.a2aUrl, embedded: undefined, process: undefined, close: async () => {} };
  const embedded = await startDemoKernel(config.a2aDialect);
  return { url: embedded.url, embedded, process: undefined, close: () => embedded.close() };
}

async function startDemoKernel(dialect: ServiceKernelConfig["a2aDialect"]): Promise<ReplayKernel | ReplayKernelV03> {
  if (dialect === "0.3") {
    const { startReplayKernelV03 } = await import("../kernel-v03/replay-kernel.js");
    return startReplayKernelV03();
  }
  const { startReplayKernel } = await import("../kernel/replay-kernel.js");
  return startReplayKernel();
}

/**
 * The service's environment, which holds what a kernel needs (PATH, HOME,
 * its LLM and cloud settings), without the token clients present to the
 * service: the kernel has no use for it. `IAC_CODE_AGUI_A2A_TOKEN` stays,
 * as the token this kernel is to expect.
 */
function kernelEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { IAC_CODE_AGUI_AUTH_TOKEN: _clientsToken, ...rest } = env;
  return rest;
}
