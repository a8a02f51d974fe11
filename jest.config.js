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
  testTimeout: 20000,
};
