/** The run's chain with in-memory ports; it lives in `lib/testing/`, which the bench shares. */
export * from "../../lib/testing/projection-chain.js";
