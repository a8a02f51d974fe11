/**
 * The real kernel, by name (`IAC_CODE_AGUI_KERNEL=iac-code`): `iac-code a2a`
 * from the `iac-code` package (github.com/aliyun/iac-code), started the way
 * the reference adapter starts it. On a loopback port the service chose,
 * with every thinking block exposed (`--thinking-exposure all`: the service
 * turns them into reasoning events), a random token the kernel requires
 * (`IACCODE_A2A_HTTP_TOKEN`) and the service sends as its bearer on every
 * call, and the workspaces a run may use (`IACCODE_A2A_ALLOWED_CWDS`), so
 * the kernel refuses the same directories the service does. Supervised
 * like any kernel command (see `supervisor.ts`): waited for, restarted with
 * backoff, stopped with the service; the token stays the same across
 * restarts.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { PORT_PLACEHOLDER } from "./command-line.js";

/** The executable, looked up on PATH. */
export const IAC_CODE_EXECUTABLE = "iac-code";

export interface IacCodeKernelLaunch {
  argv: string[];
  env: NodeJS.ProcessEnv;
  /** The kernel's token: what it requires, and what the service sends it. */
  token: string;
}

export function iacCodeKernelLaunch({ env, allowedCwds }: { env: NodeJS.ProcessEnv; allowedCwds: readonly string[] }): IacCodeKernelLaunch {
  // 32 random bytes, as the reference's token: nobody else on the machine can guess it.
  const token = randomBytes(32).toString("base64url");
  return {
    argv: [IAC_CODE_EXECUTABLE, "a2a", "--host", "127.0.0.1", "--port", PORT_PLACEHOLDER, "--thinking-exposure", "all"],
    env: { ...env, IACCODE_A2A_HTTP_TOKEN: token, IACCODE_A2A_ALLOWED_CWDS: allowedCwds.join(path.delimiter) },
    token,
  };
}
