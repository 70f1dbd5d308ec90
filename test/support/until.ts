/**
 * Polls `read` until `done` holds for its value (every `stepMs`), and returns that value; fails with the
 * last value when `timeoutMs` passes first. For conditions another process brings about (a replica
 * back in the balancer, a validator's verdict), never for timing assertions (the bench times with a
 * short step).
 */
export async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, what: string, timeoutMs = 30_000, stepMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    // bigints (block numbers, balances) written as their digits: the message must say what was last seen.
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v))}`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}
