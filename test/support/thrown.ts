import { ApiError } from "../../api/errors.ts";

/** The ApiError a synchronous call throws; fails the test when it returns or throws anything else. */
export function thrownApiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected the call to throw an ApiError");
}

/** What a synchronous call throws; fails the test when it returns. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}
