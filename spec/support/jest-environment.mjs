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
 * Plain JavaScript: Jest loads the environment outside the specs' module
 * system, and this is the one place that sees the real `process` (a spec
 * sees a copy whose listeners Node never calls).
 */
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

export default class SpecEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
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
}
