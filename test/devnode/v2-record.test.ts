/**
 * A v2 node's side of the dapp and its record, with no chain: the rollup HTTP server as v2 answers it
 * (201 with app-wide output indices, 202 for reports, a voucher's value required), the v2 advance
 * metadata, outputs of rejected inputs discarded, and the growing outputs tree checked against the
 * tree built whole for every size.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { hexToBytes, type Address, type Hex } from "viem";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jsonToHex } from "../../common/hex.ts";
import { nativeKeccak } from "../../common/native-keccak.ts";
import { RollupModel, type RollupRequest } from "../../devnode/model.ts";
import { createRollupServer } from "../../devnode/rollup-server.ts";
import { encodeNotice, encodeVoucher, GrowingOutputsTree, OutputsTree } from "../../devnode/v2/outputs.ts";
import { V2Store, type V2Input } from "../../devnode/v2/record.ts";

const SENDER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" as Address;
const APP = "0xB581C9264f59BF0289fA76D61B2D0746dCE3C30D" as Address;
const RANDAO = `0x${"ab".repeat(32)}` as Hex;

describe("GrowingOutputsTree", () => {
  it("gives every earlier size the root and proofs of the tree built whole", () => {
    const outputs = Array.from({ length: 37 }, (_, i) => encodeNotice(jsonToHex({ i })));
    const growing = new GrowingOutputsTree();
    for (const output of outputs) growing.append(nativeKeccak(hexToBytes(output)));
    for (let size = 0; size <= outputs.length; size++) {
      const whole = new OutputsTree(outputs.slice(0, size));
      expect(growing.rootAt(size)).toBe(whole.root);
      for (const index of [0, size >> 1, size - 1].filter((i) => i >= 0 && i < size)) {
        expect(growing.siblingsAt(index, size)).toEqual(whole.siblings(index));
      }
    }
    expect(() => growing.rootAt(38)).toThrow(RangeError);
    expect(() => growing.siblingsAt(5, 5)).toThrow(RangeError);
  });

  it("forgets appended outputs on truncate, as a failed record write needs", () => {
    const tree = new GrowingOutputsTree();
    const leaves = [1, 2, 3, 4, 5].map((n) => nativeKeccak(new Uint8Array([n])));
    for (const leaf of leaves.slice(0, 3)) tree.append(leaf);
    const rootOfThree = tree.rootAt(3);
    tree.append(leaves[3] as Uint8Array);
    tree.append(leaves[4] as Uint8Array);
    tree.truncate(3);
    expect(tree.size).toBe(3);
    expect(tree.rootAt(3)).toBe(rootOfThree);
    tree.append(leaves[4] as Uint8Array);
    const again = new GrowingOutputsTree();
    for (const leaf of [leaves[0], leaves[1], leaves[2], leaves[4]]) again.append(leaf as Uint8Array);
    expect(tree.rootAt(4)).toBe(again.rootAt(4));
  });
});

describe("the rollup HTTP server of a v2 node", () => {
  let store: V2Store;
  let model: RollupModel;
  let url: string;
  let server: ReturnType<typeof createRollupServer>;
  let next = 0;
  let dir: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "v2-record-"));
    store = new V2Store(join(dir, "devnode.sqlite"));
    model = new RollupModel(store, {
      finishTimeoutMs: 300,
      dappWaitMs: 300,
      inspectTimeoutMs: 5_000,
      processedInputCount: 0,
      v2: { chainId: 31337, appContract: APP, outputCount: 0 },
    });
    server = createRollupServer(model);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    next = 0;
  });
  afterEach(async () => {
    model.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function addInput(payload: unknown): void {
    const input: V2Input = {
      index: next++,
      status: "UNPROCESSED",
      msgSender: SENDER,
      payload: jsonToHex(payload),
      blockNumber: 40 + next,
      timestamp: 1_700_000_000 + next,
      prevRandao: RANDAO,
      txHash: `0x${"11".repeat(32)}`,
      logIndex: 0,
      outputsHash: null,
    };
    store.addInputs([input], BigInt(input.blockNumber + 1));
    model.enqueueAdvance(input);
  }

  async function post(path: string, body: unknown): Promise<{ status: number; text: string }> {
    const response = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: response.status, text: await response.text() };
  }

  async function finish(status: "accept" | "reject"): Promise<RollupRequest | null> {
    const answer = await post("/finish", { status });
    return answer.status === 202 ? null : (JSON.parse(answer.text) as RollupRequest);
  }

  it("hands the dapp v2 metadata: chain id, application, lower-case addresses, prev_randao, no epoch_index", async () => {
    addInput({ hello: 1 });
    const request = await finish("accept");
    expect(request).toEqual({
      request_type: "advance_state",
      data: {
        metadata: {
          chain_id: 31337,
          app_contract: APP.toLowerCase(),
          msg_sender: SENDER.toLowerCase(),
          block_number: 41,
          block_timestamp: 1_700_000_001,
          prev_randao: RANDAO,
          input_index: 0,
        },
        payload: jsonToHex({ hello: 1 }),
      },
    });
  });

  it("numbers outputs across inputs with 201, acknowledges reports with 202, and discards a rejected input's outputs", async () => {
    addInput({ n: 0 });
    addInput({ n: 1 });
    addInput({ n: 2 });
    await finish("accept");
    expect(await post("/notice", { payload: "0x01" })).toEqual({ status: 201, text: '{"index":0}' });
    expect(await post("/voucher", { destination: SENDER, value: "0x0", payload: "0x02" })).toEqual({ status: 201, text: '{"index":1}' });
    expect(await post("/report", { payload: "0x03" })).toEqual({ status: 202, text: "" });
    await finish("accept");
    expect(await post("/notice", { payload: "0x04" })).toEqual({ status: 201, text: '{"index":2}' });
    await finish("reject");
    // The rejected input's notice is gone: the next output takes its index.
    expect(await post("/delegate-call-voucher", { destination: SENDER, payload: "0x05" })).toEqual({ status: 201, text: '{"index":2}' });
    await finish("accept");
    const { items } = store.listOutputs({}, { limit: 10, offset: 0, descending: false });
    expect(items.map((o) => [o.index, o.inputIndex, o.raw.slice(0, 10)])).toEqual([
      [0, 0, encodeNotice("0x01").slice(0, 10)],
      [1, 0, encodeVoucher(SENDER, 0n, "0x02").slice(0, 10)],
      [2, 2, "0x10321e8b"],
    ]);
    expect(store.listReports({}, { limit: 10, offset: 0, descending: false }).items).toEqual([{ index: 0, inputIndex: 0, payload: "0x03" }]);
    // Each input records the outputs root after it: the rejected one leaves it as it was.
    expect(store.v2Input(1)?.outputsHash).toBe(store.v2Input(0)?.outputsHash);
    expect(store.v2Input(2)?.outputsHash).toBe(store.outputsRootAt(3));
  });

  it("refuses a v2 voucher without a hex value, and a delegate call voucher's bad destination", async () => {
    addInput({ n: 0 });
    await finish("accept");
    expect((await post("/voucher", { destination: SENDER, payload: "0x02" })).status).toBe(400);
    expect((await post("/voucher", { destination: SENDER, value: "10", payload: "0x02" })).status).toBe(400);
    expect((await post("/delegate-call-voucher", { destination: "0x12", payload: "0x02" })).status).toBe(400);
    // Nothing was taken: the first good output still gets index 0.
    expect(await post("/notice", { payload: "0x01" })).toEqual({ status: 201, text: '{"index":0}' });
  });

  it("builds its tree again from the record when it opens", async () => {
    addInput({ n: 0 });
    await finish("accept");
    await post("/notice", { payload: "0x01" });
    await post("/notice", { payload: "0x02" });
    await finish("accept");
    const whole = new OutputsTree([encodeNotice("0x01"), encodeNotice("0x02")]);
    const reopened = new V2Store(join(dir, "devnode.sqlite"));
    try {
      expect(reopened.outputCount).toBe(2);
      expect(reopened.outputsRootAt(2)).toBe(whole.root);
      expect(reopened.siblingsAt(1, 2)).toEqual(whole.siblings(1));
      expect(reopened.v2Input(0)?.outputsHash).toBe(whole.root);
    } finally {
      reopened.close();
    }
  });
});

describe("where a v2 record keeps an input on the chain", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "v2-record-log-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const input = (index: number, blockNumber: number, logIndex: number | null): V2Input => ({
    index,
    status: "UNPROCESSED",
    msgSender: SENDER,
    payload: jsonToHex({ index }),
    blockNumber,
    timestamp: 1_700_000_000 + blockNumber,
    prevRandao: RANDAO,
    txHash: `0x${String(index).padStart(2, "0").repeat(32)}`,
    logIndex,
    outputsHash: null,
  });

  it("keeps each input's log index, and follows an input a fresh chain took again elsewhere", () => {
    const store = new V2Store(join(dir, "devnode.sqlite"));
    try {
      store.addInputs([input(0, 7, 2), input(1, 9, 0)], 10n);
      expect([store.v2Input(0)?.logIndex, store.v2Input(1)?.logIndex]).toEqual([2, 0]);
      // Read again where it was: nothing changes.
      expect(store.relocateInput(0, { blockNumber: 7, txHash: input(0, 7, 2).txHash, logIndex: 2 })).toBe(false);
      const elsewhere = { blockNumber: 12, txHash: `0x${"ab".repeat(32)}` as Hex, logIndex: 1 };
      expect(store.relocateInput(0, elsewhere)).toBe(true);
      expect(store.v2Input(0)).toMatchObject(elsewhere);
    } finally {
      store.close();
    }
  });

  it("opens a record kept before log indices were: the column is added and the chain read again from the first input's block", () => {
    const path = join(dir, "devnode.sqlite");
    const first = new V2Store(path);
    first.addInputs([input(0, 7, 2), input(1, 9, 0)], 40n);
    first.close();
    // The record as the previous version of the devnode left it: no log_index column.
    const old = new Database(path);
    old.exec("ALTER TABLE v2_inputs DROP COLUMN log_index");
    old.close();
    const reopened = new V2Store(path);
    try {
      expect(reopened.nextBlock()).toBe(7n);
      expect(reopened.v2Input(1)?.logIndex).toBeNull();
      expect(reopened.relocateInput(1, { blockNumber: 9, txHash: input(1, 9, 0).txHash, logIndex: 3 })).toBe(true);
      expect(reopened.v2Input(1)?.logIndex).toBe(3);
    } finally {
      reopened.close();
    }
  });
});
