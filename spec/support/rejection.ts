import type { AguiError } from "../../lib/errors.js";

/** The error `promise` rejects with; a promise that fulfils fails the test. */
export async function rejectionOf(promise: Promise<unknown>): Promise<AguiError> {
  try {
    await promise;
  } catch (error) {
    return error as AguiError;
  }
  throw new Error("expected a rejection");
}
