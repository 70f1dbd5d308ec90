/**
 * The rollup model holding advances back between two inputs, as a reader's snapshot needs
 * (devnode/snapshot.ts): the pause waits for the input at the dapp to be finished and recorded, no other
 * input is handed out until it is lifted, and inspects are answered meanwhile. Over HTTP with the fake
 * dapp of the rollup-server tests, no chain.
 */
import { describe, expect, it } from "vitest";
import { advanceOf, h, inspectGet, inspectOf, nextRequest, post, useHarness } from "./rollup-server-support.ts";

useHarness();

describe("advances held between two inputs", () => {
  it("waits for the input at the dapp, hands out no other until resumed, and answers inspects meanwhile", async () => {
    h.addInput({ type: "first", params: {} });
    h.addInput({ type: "second", params: {} });
    expect(advanceOf(await nextRequest()).metadata.input_index).toBe(0);
    let paused = false;
    const pausing = h.model.pauseAdvances().then(() => (paused = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(paused).toBe(false);

    // The dapp finishes input 0: the pause is over, input 0 is recorded, input 1 is not handed out.
    const finished = post("/finish", { status: "accept" });
    await pausing;
    expect(h.store.getInput(0)?.status).toBe("ACCEPTED");
    expect(h.model.status()).toMatchObject({ state: "idle", queuedInputs: 1, processedInputCount: 1 });
    expect((await finished).status).toBe(202);

    const answer = inspectGet(encodeURIComponent('{"type":"health"}'));
    expect(inspectOf(await nextRequest()).payload).toBe(`0x${Buffer.from('{"type":"health"}').toString("hex")}`);
    expect((await post("/finish", { status: "accept" })).status).toBe(202);
    expect((await answer).status).toBe(200);
    expect(h.store.getInput(1)?.status).toBe("UNPROCESSED");

    h.model.resumeAdvances();
    expect(advanceOf(await nextRequest()).metadata.input_index).toBe(1);
  });

  it("pauses at once when no input is at the dapp", async () => {
    await h.model.pauseAdvances();
    h.addInput({ type: "held", params: {} });
    expect((await post("/finish", { status: "accept" })).status).toBe(202);
    h.model.resumeAdvances();
    expect(advanceOf(await nextRequest()).metadata.input_index).toBe(0);
  });
});
