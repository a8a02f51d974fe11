// Preloaded with `node --import ./spec/support/import-trace.mjs …`: writes
// the URL of every module the process resolves, one a line, to the file
// named by IMPORT_TRACE_FILE, so a test can tell which code a command
// loaded. The hooks run on Node's loader thread (`import-trace-hooks.mjs`).
import { register } from "node:module";

const file = process.env.IMPORT_TRACE_FILE;
if (!file) throw new Error("import-trace.mjs: set IMPORT_TRACE_FILE to the file the resolved URLs go to");
register("./import-trace-hooks.mjs", import.meta.url, { data: { file } });
