// Module resolution hooks for `import-trace.mjs`. Appending synchronously
// keeps every URL resolved before the process answers a request in the file
// by the time the answer arrives.
import { appendFileSync } from "node:fs";

let traceFile;

export function initialize({ file }) {
  traceFile = file;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(traceFile, `${resolved.url}\n`);
  return resolved;
}
