/**
 * Every spec's test environment: Node's (the package `testEnvironment:
 * "node"` names), with a guard so that a promise rejection nobody handles
 * cannot end the whole test run.
 *
 * While a spec file runs, Jest's own handler makes an unhandled rejection
 * a failure of the test or hook running at that moment. Between files
 * nobody listens, and Node's default is to exit: run in band (Jest's
 * choice on two cores) a rejection that came after its file had ended
 * took the Jest process down, with the files after it never run and no
 * summary printed. Here such a rejection (or an uncaught exception) is
 * kept and fails the next file this process runs, naming the file that
 * ran before it, where it most likely came from; one that comes after the
 * last file is printed.
 *
 * Each file also gets its own temporary directory: TMPDIR names it while the
 * file runs, so `os.tmpdir()` in the spec, in the service it starts in
 * process and in the children it starts with its environment (kernels,
 * services, Redis, Chromium) all make their directories there, and it is
 * removed when the file ends, after its last `afterAll` has closed what
 * used it. A spec may still read a state directory after its harness
 * closed; the next file cannot see what this one left, and a run leaves
 * nothing behind. What must outlive the run (the e2e screenshots) goes under
 * the system's own temporary directory, named by AGUI_SPEC_SYSTEM_TMPDIR.
 *
 * Plain JavaScript: Jest loads the environment outside the specs' module
 * system, and this is the one place that sees the real `process` (a spec
 * sees a copy whose listeners Node never calls).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { TestEnvironment } from "jest-environment-node";

/** Rejections and exceptions that came while no spec file was running, not yet reported. */
const escaped = [];
/** The spec file this process runs or ran last. */
let lastFile;
let guarding = false;

// Duck-typed: an error made in a spec's context is not an instance of this context's Error.
const describeError = (error) => (typeof error?.stack === "string" ? error.stack : String(error));

function guard() {
  if (guarding) return;
  guarding = true;
  const keep = (kind) => (error) => {
    escaped.push({ kind, error, after: lastFile });
    process.stderr.write(`${kind} after ${lastFile ?? "no spec file"} ran: ${describeError(error)}\n`);
  };
  // Jest replaces these listeners while a file runs and puts them back after it.
  process.on("unhandledRejection", keep("unhandled rejection"));
  process.on("uncaughtException", keep("uncaught exception"));
}

/** TMPDIR as it was before any spec file changed it, put back after each file. */
const systemTmpdirVariable = process.env.TMPDIR;
const systemTmpdir = os.tmpdir();

/** Points TMPDIR at a new directory of the file's own, named after it (should one ever be left behind), and gives it. */
function enterFileTmpdir(testPath) {
  const dir = mkdtempSync(path.join(systemTmpdir, `agui-spec-${path.basename(testPath, ".spec.ts")}-`));
  process.env.TMPDIR = dir;
  return dir;
}

function leaveFileTmpdir(dir) {
  if (systemTmpdirVariable === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = systemTmpdirVariable;
  try {
    // Retried: a write that lands as the directory goes (a child a spec failed to stop) makes it non-empty again.
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    // Told, not failed: the file's tests are over, and a leftover is not theirs to fail.
    process.stderr.write(`could not remove the spec file's temporary directory ${dir}: ${describeError(error)}\n`);
  }
}

export default class SpecEnvironment extends TestEnvironment {
  constructor(config, context) {
    // Before Node's environment copies the real environment into the spec's `process.env`.
    const tmpdir = enterFileTmpdir(context.testPath);
    super(config, context);
    this.tmpdir = tmpdir;
    this.global.process.env.AGUI_SPEC_SYSTEM_TMPDIR = systemTmpdir;
    this.testPath = context.testPath;
  }

  async setup() {
    guard();
    const reported = escaped.splice(0);
    lastFile = this.testPath;
    await super.setup();
    if (reported.length > 0) {
      const lines = reported.map(({ kind, error, after }) => `${kind} after ${after ?? "no spec file"} ran: ${describeError(error)}`);
      throw new Error(`A spec file run before this one left something that failed after its tests:\n${lines.join("\n")}`);
    }
  }

  async teardown() {
    try {
      await super.teardown();
    } finally {
      leaveFileTmpdir(this.tmpdir);
    }
  }
}
