/**
 * What a Quorum costs (issue 40, docs/quorum.md): on Rollups v2 stacks of their own, one after the other in
 * the same run, each with the dapp bundle:
 * - the delay from an epoch's end (its one input sent: the block is mined at once, epochs of one block) to the ClaimAccepted
 *   that makes its root valid, with the devnode's Authority (its claimer on the same 200 ms rounds the
 *   members use) and with Quorums of 3 and 5 (members voting as soon as their own dapps computed the root);
 * - the gas of one member's vote: a vote that does not complete the majority, and the one that does (it
 *   also marks the root valid and emits ClaimAccepted), against the Authority's one claim.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { parseEventLogs, type Hex } from "viem";
import { V2_DEFAULTS } from "../../devnode/config.ts";
import { v2Abi } from "../../devnode/v2/contracts.ts";
import { schemaInput } from "../../test/devnode/fixtures.ts";
import { startStack, type TestStack } from "../../test/support/stack.ts";
import { figure } from "../report.ts";
import { percentile } from "../stats.ts";
import type { BenchContext, SectionRows } from "./context.ts";

/** Epochs measured per consensus (one input each). */
const EPOCHS = 12;
/** The Authority's claimer runs its rounds as often as the members run theirs, so that only the consensus differs. */
const ROUND_MS = 200;
const QUORUMS = [3, 5] as const;

export const ACCEPT_DELAY_FIGURE = (members: number): string => `epoch end to ClaimAccepted p50, Quorum of ${members}`;
export const VOTE_GAS_FIGURE = "gas of one member's vote (not completing the majority)";
export const FINAL_VOTE_GAS_FIGURE = "gas of the vote completing the majority";

export function quorumFigureNames(): string[] {
  return [...QUORUMS.map(ACCEPT_DELAY_FIGURE), VOTE_GAS_FIGURE, FINAL_VOTE_GAS_FIGURE];
}

interface Measured {
  /** ms from each epoch's input mined to its root accepted. */
  delays: number[];
  /** Gas of each vote that did not complete a majority, and of each that did. */
  votes: number[];
  finals: number[];
}

async function measure(ctx: BenchContext, quorum: number | undefined): Promise<Measured> {
  let stack: TestStack | undefined;
  try {
    stack = await startStack({
      rollups: "v2",
      ...(quorum === undefined ? {} : { quorum }),
      dataDir: mkdtempSync(join(ctx.work, `quorum-${quorum ?? "authority"}-`)),
      dappCommand: ctx.bundle.command,
      readyTimeoutMs: 120_000,
      env: { EPOCH_INTERVAL_MS: String(ROUND_MS) },
    });
    const chain = stack.client.publicClient;
    const delays: number[] = [];
    for (let k = 0; k < EPOCHS; k++) {
      // The input's block is mined as it is sent (automine), and with it its one-block epoch ends.
      const ended = performance.now();
      const verdict = await stack.send(schemaInput(`bench-quorum-${k}.example`));
      if (verdict.status !== "ACCEPTED") throw new Error(`quorum bench: input refused: ${verdict.status}`);
      const receipt = await chain.getTransactionReceipt({ hash: verdict.txHash });
      for (;;) {
        const logs = await chain.getLogs({ address: V2_DEFAULTS.authorityAddress, fromBlock: receipt.blockNumber, toBlock: "latest" });
        const accepted = parseEventLogs({ abi: v2Abi("Quorum"), logs, eventName: "ClaimAccepted" }).some((log) => (log.args as unknown as { lastProcessedBlockNumber: bigint }).lastProcessedBlockNumber === receipt.blockNumber);
        if (accepted) break;
        if (performance.now() - ended > 60_000) throw new Error(`quorum bench: no root accepted for block ${receipt.blockNumber} within 60 s`);
        await new Promise((r) => setTimeout(r, 10));
      }
      delays.push(performance.now() - ended);
    }
    // Every vote's gas, split by whether its transaction also accepted the root.
    const logs = await chain.getLogs({ address: V2_DEFAULTS.authorityAddress, fromBlock: 0n, toBlock: "latest" });
    const acceptedIn = new Set(parseEventLogs({ abi: v2Abi("Quorum"), logs, eventName: "ClaimAccepted" }).map((log) => log.transactionHash));
    const votes: number[] = [];
    const finals: number[] = [];
    for (const vote of parseEventLogs({ abi: v2Abi("Quorum"), logs, eventName: "ClaimSubmitted" })) {
      const gas = Number((await chain.getTransactionReceipt({ hash: vote.transactionHash as Hex })).gasUsed);
      (acceptedIn.has(vote.transactionHash) ? finals : votes).push(gas);
    }
    return { delays, votes, finals };
  } finally {
    await stack?.stop();
  }
}

export async function quorumRows(ctx: BenchContext): Promise<SectionRows> {
  ctx.log(`quorum: the Authority, ${EPOCHS} epochs`);
  const authority = await measure(ctx, undefined);
  const quorums = new Map<number, Measured>();
  for (const n of QUORUMS) {
    ctx.log(`quorum: a Quorum of ${n}, ${EPOCHS} epochs`);
    quorums.set(n, await measure(ctx, n));
  }
  const floor = { name: "the Authority (one key)", value: percentile(authority.delays, 50) };
  const claimGas = { name: "the Authority's submitClaim", value: percentile(authority.finals, 50) };
  const three = quorums.get(3) as Measured;
  const figures = [
    ...QUORUMS.map((n) => figure("onchain", ACCEPT_DELAY_FIGURE(n), "ms", percentile((quorums.get(n) as Measured).delays, 50), floor)),
    figure("onchain", VOTE_GAS_FIGURE, "gas", percentile(three.votes, 50), claimGas),
    figure("onchain", FINAL_VOTE_GAS_FIGURE, "gas", percentile(three.finals, 50), claimGas),
  ];
  const p99 = (m: Measured): string => `${percentile(m.delays, 99).toFixed(0)} ms`;
  const notes = [
    `epoch end to ClaimAccepted, p99 of ${EPOCHS}: Authority ${p99(authority)}, ${QUORUMS.map((n) => `Quorum of ${n} ${p99(quorums.get(n) as Measured)}`).join(", ")}; every node runs its rounds every ${ROUND_MS} ms, and an epoch is one block`,
    `a Quorum of 5: a vote ${percentile((quorums.get(5) as Measured).votes, 50)} gas, the completing vote ${percentile((quorums.get(5) as Measured).finals, 50)}; a Quorum's epoch costs (needed - 1) votes plus the completing one, and every member votes (n votes an epoch)`,
  ];
  return { figures, notes };
}
