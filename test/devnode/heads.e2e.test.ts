/**
 * New blocks pushed by the chain (devnode/heads.ts): with the poll set to two minutes, an input is still
 * read and processed at once, because hardhat announces its block over the WebSocket subscription; and
 * with the subscription off, the same input waits for the poll.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.ts";

const LONG_POLL_MS = "120000";

describe("new blocks pushed by the chain", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ env: { POLL_INTERVAL_MS: LONG_POLL_MS } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("an input is processed long before the next poll", async () => {
    // The first poll runs at start; every input after it can only be seen through the subscription.
    for (let i = 0; i < 3; i++) {
      const verdict = await stack.send({ type: "health_probe", params: {} });
      expect(verdict.status).not.toBe("UNPROCESSED");
    }
    expect(stack.logs("devnode")).not.toContain("cannot be subscribed");
  });
});

describe("with the subscription off", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ env: { POLL_INTERVAL_MS: LONG_POLL_MS, WS_RPC_URL: "off" } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("an input waits for the poll", async () => {
    const sent = await stack.client.addInput({ type: "health_probe", params: {} });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const processed = (await stack.inspect({ type: "health", params: {} })).processed_input_count;
    expect(processed).toBeLessThanOrEqual(sent.index);
  });
});
