/**
 * Epochs, claims and proofs on the real stack (chain, devnode, dapp): the devnode's CartesiDApp at the
 * application address, epochs closed on demand and on a schedule, claims in the History, and every
 * notice's GraphQL proof accepted by `validateNotice` on chain; a fresh chain gets contracts and claims back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesToHex, hexToBytes, type Address, type Hex } from "viem";
import { DEFAULTS } from "../../devnode/config.ts";
import { CARTESI_DAPP_ABI, HISTORY_ABI } from "../../devnode/v1/contracts.ts";
import { contractProof, encodeProofContext, type OutputValidityProof } from "../../devnode/v1/proofs.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { schemaInput } from "./fixtures.ts";

interface ProvedNotice {
  index: number;
  payload: Hex;
  input: { index: number };
  proof: { validity: OutputValidityProof; context: Hex } | null;
}

const NOTICES = `{ notices { edges { node { index payload input { index }
  proof { context validity { inputIndexWithinEpoch outputIndexWithinInput outputHashesRootHash vouchersEpochRootHash
    noticesEpochRootHash machineStateHash outputHashInOutputHashesSiblings outputHashesInEpochSiblings } } } } } }`;

interface EpochsAnswer {
  closed: { index: number; firstInput: number; lastInput: number; epochHash: Hex; claimTx: Hex | null } | null;
  epochs: number;
  claimed: number;
  dapp: Address;
  authority: Address;
  history: Address;
  canClaim: boolean;
}

async function closeEpoch(stack: TestStack): Promise<EpochsAnswer> {
  const response = await fetch(`${stack.urls.node}/epoch/close`, { method: "POST" });
  expect(response.status).toBe(200);
  return (await response.json()) as EpochsAnswer;
}

async function notices(stack: TestStack): Promise<ProvedNotice[]> {
  const data = await stack.graphql<{ notices: { edges: { node: ProvedNotice }[] } }>(NOTICES);
  return data.notices.edges.map((e) => e.node);
}

function validate(stack: TestStack, payload: Hex, proof: NonNullable<ProvedNotice["proof"]>): Promise<unknown> {
  return stack.client.publicClient.readContract({
    address: DEFAULTS.dappAddress,
    abi: CARTESI_DAPP_ABI(),
    functionName: "validateNotice",
    args: [payload, contractProof(proof.validity, proof.context)],
  });
}

describe("epochs closed on demand", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ env: { EPOCH_INTERVAL_MS: "0" } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("a v1 CartesiDApp governed by an Authority and History stands at the application address", async () => {
    const status = (await (await fetch(`${stack.urls.node}/epochs`)).json()) as EpochsAnswer;
    expect(status).toMatchObject({ epochs: 0, claimed: 0, canClaim: true, dapp: DEFAULTS.dappAddress });
    const consensus = await stack.client.publicClient.readContract({ address: DEFAULTS.dappAddress, abi: CARTESI_DAPP_ABI(), functionName: "getConsensus" });
    expect(consensus).toBe(status.authority);
    // Nothing processed: closing has nothing to close.
    expect((await closeEpoch(stack)).closed).toBeNull();
  });

  it("notices have no proof until their epoch is claimed, then validateNotice accepts each one", async () => {
    await stack.send(schemaInput("epoch-a.example"));
    const rejected = await stack.send("0xdeadbeef");
    expect(rejected.status).toBe("REJECTED");
    await stack.send(schemaInput("epoch-b.example"));
    expect((await notices(stack)).every((n) => n.proof === null)).toBe(true);

    const closed = await closeEpoch(stack);
    expect(closed.closed).toMatchObject({ index: 0, firstInput: 0, lastInput: 2 });
    expect(closed.closed?.claimTx).toMatch(/^0x[0-9a-f]{64}$/);
    const claim = await stack.client.publicClient.readContract({
      address: closed.history,
      abi: HISTORY_ABI(),
      functionName: "getClaim",
      args: [DEFAULTS.dappAddress, encodeProofContext(0)],
    });
    expect(claim).toEqual([closed.closed?.epochHash, 0n, 2n]);

    const proved = await notices(stack);
    expect(proved).toHaveLength(2);
    for (const notice of proved) {
      expect(notice.proof?.context).toBe(encodeProofContext(0));
      expect(notice.proof?.validity.machineStateHash).toBe(`0x${"00".repeat(32)}`);
      expect(await validate(stack, notice.payload, notice.proof as NonNullable<ProvedNotice["proof"]>)).toBe(true);
    }
    // The same proof through the single look-up and under its input.
    const [first] = proved as [ProvedNotice];
    const single = await stack.graphql<{ notice: { proof: ProvedNotice["proof"] } }>(
      `query($i: Int!) { notice(inputIndex: $i, noticeIndex: 0) { proof { context validity { outputHashesInEpochSiblings } } } }`,
      { i: first.input.index },
    );
    expect(single.notice.proof?.validity.outputHashesInEpochSiblings).toEqual(first.proof?.validity.outputHashesInEpochSiblings);

    const bytes = hexToBytes(first.payload);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
    await expect(validate(stack, bytesToHex(bytes), first.proof as NonNullable<ProvedNotice["proof"]>)).rejects.toThrow(/IncorrectOutputHashesRootHash/);
    const other = proved[1] as ProvedNotice;
    await expect(validate(stack, other.payload, first.proof as NonNullable<ProvedNotice["proof"]>)).rejects.toThrow(/reverted/);
    const unclaimed = { ...(first.proof as NonNullable<ProvedNotice["proof"]>), context: encodeProofContext(1) };
    await expect(validate(stack, first.payload, unclaimed)).rejects.toThrow(/InvalidClaimIndex/);
  });

  it("the next epoch starts after the last one and is claim 1", async () => {
    await stack.send(schemaInput("epoch-c.example"));
    const closed = await closeEpoch(stack);
    expect(closed.closed).toMatchObject({ index: 1, firstInput: 3, lastInput: 3 });
    const latest = (await notices(stack)).find((n) => n.input.index === 3) as ProvedNotice;
    expect(latest.proof?.context).toBe(encodeProofContext(1));
    expect(latest.proof?.validity.inputIndexWithinEpoch).toBe(0);
    expect(await validate(stack, latest.payload, latest.proof as NonNullable<ProvedNotice["proof"]>)).toBe(true);
  });

  it("a fresh chain gets the contracts and the same claims back", async () => {
    const before = await notices(stack);
    const { history } = (await (await fetch(`${stack.urls.node}/epochs`)).json()) as EpochsAnswer;
    await stack.restart("chain");
    // The devnode notices the chain went back, re-submits the inputs, places the contracts, re-claims.
    await expect
      .poll(
        async () =>
          stack.client.publicClient
            .readContract({ address: history, abi: HISTORY_ABI(), functionName: "getClaim", args: [DEFAULTS.dappAddress, encodeProofContext(1)] })
            .then(() => true, () => false),
        { timeout: 60_000, interval: 500 },
      )
      .toBe(true);
    for (const notice of before) {
      expect(await validate(stack, notice.payload, notice.proof as NonNullable<ProvedNotice["proof"]>)).toBe(true);
    }
  });
});

describe("epochs closed on a schedule", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ env: { EPOCH_INTERVAL_MS: "300" } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("closes and claims an epoch once inputs were processed, and none while idle", async () => {
    await stack.send(schemaInput("scheduled.example"));
    await expect
      .poll(async () => ((await (await fetch(`${stack.urls.node}/epochs`)).json()) as EpochsAnswer).claimed, { timeout: 20_000, interval: 200 })
      .toBe(1);
    const [notice] = await notices(stack);
    expect(await validate(stack, (notice as ProvedNotice).payload, (notice as ProvedNotice).proof as NonNullable<ProvedNotice["proof"]>)).toBe(true);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(((await (await fetch(`${stack.urls.node}/epochs`)).json()) as EpochsAnswer).epochs).toBe(1);
  });
});
