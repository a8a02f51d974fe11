/**
 * What `--help` says each setting defaults to is what the service gets when
 * nothing sets it. Every setting of the table is checked, so one added
 * later is checked too: its default, as `--help` prints it, typed back as
 * its flag gives the value `loadConfig` reads from an empty environment.
 */
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "@jest/globals";
import { DEFAULT_KERNEL_FIRST_BYTE_TIMEOUT_S, DEFAULT_KERNEL_REQUEST_TIMEOUT_S } from "../../lib/a2a/limits.js";
import { DEFAULT_SANDBOX_MAX_REPLAYS } from "../../lib/http/replay-slots.js";
import { DEFAULT_THREAD_RETENTION_S } from "../../lib/state/thread-retention.js";
import { DEFAULT_KERNEL_START_TIMEOUT_S, describedSettings, flagName, loadConfig, usage, type SettingKey } from "../../lib/config.js";

const load = (argv: string[] = [], env: NodeJS.ProcessEnv = {}) => loadConfig(argv, env, () => {});

/** The text after "Default:" in the `--help` entry of the setting read from `env`. */
function helpDefault(env: string): string {
  const lines = usage().split("\n");
  const at = lines.indexOf(`  ${flagName(env)} <value>, ${env}`);
  const told = lines[at + 1] ?? "";
  expect(at).toBeGreaterThan(0);
  expect(told).toMatch(/ Default: .*\.$/);
  return told.slice(told.lastIndexOf(" Default: ") + " Default: ".length, -1);
}

/** Defaults worked out from the machine, which `--help` tells in words: what those words mean with an empty environment. */
const TOLD_IN_WORDS: Partial<Record<SettingKey, { told: string; value: unknown }>> = {
  stateDir: { told: "$IAC_CODE_CONFIG_DIR/agui (~/.iac-code/agui)", value: path.join(os.homedir(), ".iac-code", "agui") },
  allowedCwds: {
    told: "$IACCODE_A2A_ALLOWED_CWDS (the kernel's own setting), else the working directory and the temp directory",
    value: [process.cwd(), os.tmpdir()].map((p) => path.resolve(p)),
  },
};

/**
 * Settings left undefined in `Config` whose reader applies the default
 * `--help` tells, with the value that reader applies: `validation.ts`
 * refuses tools unless "ignore", `service-kernel.ts` and `server.ts` apply
 * the two timeouts, `server.ts` reads the agent card unless a dialect is
 * fixed, `http/app.ts` serves the sandbox unless "off", and
 * `state/open-thread-store.ts` applies the thread retention.
 */
const APPLIED_BY_READER: Partial<Record<SettingKey, unknown>> = {
  clientTools: "refuse",
  // `load.ts` turns the log level to debug only when it is true; `main.ts` watches for idleness only when above 0.
  debug: false,
  idleShutdown: 0,
  kernelStartTimeoutS: DEFAULT_KERNEL_START_TIMEOUT_S,
  kernelRequestTimeoutS: DEFAULT_KERNEL_REQUEST_TIMEOUT_S,
  kernelFirstByteTimeoutS: DEFAULT_KERNEL_FIRST_BYTE_TIMEOUT_S,
  a2aDialect: "auto",
  sandbox: "on",
  threadRetentionS: DEFAULT_THREAD_RETENTION_S,
  // `http/sandbox-replay.ts` caps replays at this unless it is set.
  sandboxMaxReplays: DEFAULT_SANDBOX_MAX_REPLAYS,
};

describe("--help's defaults", () => {
  const empty = load();

  it.each(describedSettings().map((setting) => [setting.key, setting] as const))(
    "%s: --help tells what an empty environment gets",
    (key, setting) => {
      const told = helpDefault(setting.env);
      const words = TOLD_IN_WORDS[key];
      if (words) {
        expect(told).toBe(words.told);
        expect(empty[key]).toEqual(words.value);
        return;
      }
      // "16777216", "0: at once", "auto: from the agent card": the value comes first, a note may follow.
      const shown = told.split(": ")[0]!;
      if (shown === "unset") {
        expect(empty[key]).toBeUndefined();
        expect(APPLIED_BY_READER).not.toHaveProperty(key);
        return;
      }
      if (shown === "none") {
        expect(empty[key]).toEqual([]);
        return;
      }
      const typed = load([`${flagName(setting.env)}=${shown}`])[key];
      expect(load([], { [setting.env]: shown })[key]).toEqual(typed);
      if (empty[key] === undefined) {
        expect(APPLIED_BY_READER).toHaveProperty(key);
        expect(typed).toEqual(APPLIED_BY_READER[key]);
      } else {
        expect(typed).toEqual(empty[key]);
      }
    },
  );

  it("names, in the two lists above, only settings whose --help default is told that way", () => {
    const settings = new Map(describedSettings().map((setting) => [setting.key, setting]));
    for (const key of Object.keys(TOLD_IN_WORDS) as SettingKey[])
      expect(helpDefault(settings.get(key)!.env)).toBe(TOLD_IN_WORDS[key]!.told);
    for (const key of Object.keys(APPLIED_BY_READER) as SettingKey[]) expect(load()[key]).toBeUndefined();
  });

  it("gives each Config its own lists, so one changed does not change the next one's default", () => {
    load().allowedHosts.push("changed.example");
    expect(load().allowedHosts).toEqual([]);
  });
});
