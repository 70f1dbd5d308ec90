/**
 * Polls `read` until `done` holds for its value (every 100 ms), and returns that value; fails with the
 * last value when `timeoutMs` passes first. For conditions another process brings about (a replica
 * back in the balancer, a validator's verdict), never for timing.
 */
export async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
