/** ESM + ts-jest: sources import each other with `.js` suffixes, as NodeNext requires. */
export default {
  preset: "ts-jest/presets/default-esm",
  // Node's, with a guard against a rejection that comes between spec files (see the file).
  testEnvironment: "<rootDir>/spec/support/jest-environment.mjs",
  roots: ["<rootDir>/spec"],
  testMatch: ["**/*.spec.ts"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  transform: {
    "^.+\\.ts$": ["ts-jest", { useESM: true, diagnostics: false }],
  },
  // When to call a test hung, not how long one may take: on a loaded two-core machine a test that starts
  // processes or a browser can take well over 20 s, and a passing test never waits for this.
  testTimeout: 60_000,
  // Two workers on two cores: most spec files wait on sockets, processes and timers, not on the CPU, so the
  // suite takes about half as long as in one process (Jest's choice for two cores); a worker that grew past
  // the limit is replaced between files, so one long run cannot gather every file's leftovers.
  maxWorkers: 2,
  workerIdleMemoryLimit: "1GB",
};
