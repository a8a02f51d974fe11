/** `npm run soak`: the slow fault, fuzz and leak runs in `soak/`, one file at a time, with `gc` exposed. */
import base from "./jest.config.js";

export default {
  ...base,
  roots: ["<rootDir>/soak"],
  testMatch: ["<rootDir>/soak/**/*.spec.ts"],
  testTimeout: 600_000,
};
