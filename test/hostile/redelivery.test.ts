/**
 * The narrowest crash window, made deterministic: the dapp has committed an input and sent its outputs,
 * and dies before its `/finish` reaches the node. The node (the devnode's real RollupModel and rollup
 * HTTP server, in-process) hands the input out again; the dapp, restarted on the same database, must
 * not apply it twice, and the node must end up with the same verdict and outputs a clean run gives.
 * The "death" is a TCP proxy between dapp and node that cuts both sockets when it sees that `/finish`.
 */
import { createServer as createNetServer, connect, type AddressInfo, type Server, type Socket } from "node:net";
import type { Address, Hex } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { jsonToHex } from "../../common/hex.ts";
import { createDapp } from "../../dapp/transports/http.ts";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { openDatabase, type DappDatabase } from "../../dapp/db/open.ts";
import { RollupModel, type AdvanceSink } from "../../devnode/model.ts";
import { createRollupServer } from "../../devnode/rollup-server.ts";
import type { AdvanceOutputs, CompletionStatus, InputRecord } from "../../devnode/store.ts";
import { PUBLIC_KEY, SCHEMA } from "../dapp/fixtures.ts";
import { ADMIN, T0 } from "../dapp/harness.ts";
import { directDapp, sleep } from "./support.ts";

interface Completed {
  status: CompletionStatus;
  notices: Hex[];
  reports: Hex[];
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A TCP proxy to `port` that, once armed, waits for the dapp to send an output (`/notice` or `/report`,
 * which it sends only after committing) and then cuts the connection that carries its next `/finish`.
 */
async function crashProxy(port: number): Promise<{ url: string; arm(): void; cuts(): number; close(): Promise<void> }> {
  let armed = false;
  let outputSeen = false;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createNetServer((client: Socket) => {
    const upstream = connect(port, "127.0.0.1");
    sockets.add(client).add(upstream);
    client.on("data", (chunk: Buffer) => {
      const head = chunk.toString("latin1", 0, 16);
      if (armed && (head.startsWith("POST /notice") || head.startsWith("POST /report"))) outputSeen = true;
      if (armed && outputSeen && head.startsWith("POST /finish")) {
        armed = false;
        outputSeen = false;
        cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arm: () => void (armed = true),
    cuts: () => cuts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function run(payloads: { payload: Hex; sender: Address }[], crashAt: number | undefined): Promise<{ completed: Map<number, Completed>; digest: string }> {
  const completed = new Map<number, Completed>();
  const sink: AdvanceSink = {
    completeInput(index: number, status: CompletionStatus, outputs: AdvanceOutputs) {
      completed.set(index, { status, notices: [...outputs.notices], reports: [...outputs.reports] });
    },
  };
  const model = new RollupModel(sink, { finishTimeoutMs: 200, dappWaitMs: 2_000, inspectTimeoutMs: 10_000, processedInputCount: 0 });
  const rollup = createRollupServer(model);
  await new Promise<void>((resolve) => rollup.listen(0, "127.0.0.1", resolve));
  const proxy = await crashProxy((rollup.address() as AddressInfo).port);
  const db: DappDatabase = openDatabase({ path: ":memory:" });
  const stop = new AbortController();
  const dapp = createDapp({ db, admins: [ADMIN], rollupUrl: proxy.url });
  const loop = dapp.run({ signal: stop.signal, retryDelayMs: 50 });
  cleanups.push(async () => {
    // The dapp's loop ends when its next request fails: stop the node under it first.
    stop.abort();
    model.close();
    rollup.closeAllConnections();
    await new Promise<void>((resolve) => rollup.close(() => resolve()));
    await proxy.close();
    await loop;
    db.$client.close();
  });

  for (const [index, input] of payloads.entries()) {
    // Arm the cut for this input: after its outputs, before its /finish.
    if (index === crashAt) proxy.arm();
    const record: InputRecord = { index, status: "UNPROCESSED", msgSender: input.sender, payload: input.payload, blockNumber: 100 + index, timestamp: T0 + index };
    model.enqueueAdvance(record);
    const deadline = Date.now() + 10_000;
    while (!completed.has(index)) {
      if (Date.now() > deadline) throw new Error(`input ${index} was not completed`);
      await sleep(5);
    }
  }
  if (crashAt !== undefined) expect(proxy.cuts()).toBe(1);
  return { completed, digest: databaseDigest(db.$client) };
}

describe("an input re-delivered after the dapp died between its commit and its /finish", () => {
  const inputs: { payload: Hex; sender: Address }[] = [
    { payload: jsonToHex({ type: "register_schema", params: SCHEMA }), sender: ADMIN },
    { payload: jsonToHex({ type: "register_encryption_key", params: { publicKey: PUBLIC_KEY, algorithm: "nacl-box" } }), sender: ADMIN },
    { payload: "0x7b" as Hex, sender: ADMIN },
    { payload: jsonToHex({ type: "set_role", params: { address: ADMIN, role: "attestor", enabled: true } }), sender: ADMIN },
  ];

  // Input 0 and 1 are accepted with a notice, input 2 is rejected with a report.
  for (const crashAt of [0, 1, 2]) {
    it(`is applied once and keeps the verdict and outputs of a clean run (cut at input ${crashAt})`, async () => {
      const clean = directDapp({ admins: [ADMIN] });
      const expected: Completed[] = [];
      for (const [index, input] of inputs.entries()) {
        const outcome = await clean.advance(input.payload, input.sender, T0 + index, index);
        expected.push({ status: outcome.status === "accept" ? "ACCEPTED" : "REJECTED", notices: outcome.notices, reports: outcome.reports });
      }
      const cleanDigest = databaseDigest(clean.db.$client);
      clean.close();

      const crashed = await run(inputs, crashAt);
      expect(crashed.digest).toBe(cleanDigest);
      expect(inputs.map((_, i) => crashed.completed.get(i))).toEqual(expected);
    });
  }
});
