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
const EPOCHS = 20;
/** The Authority's claimer runs its rounds as often as the members run theirs, so that only the consensus differs. */
const ROUND_MS = 200;
const QUORUMS = [3, 5] as const;

export const ACCEPT_DELAY_FIGURE = (members: number): string => `epoch end to ClaimAccepted p50, Quorum of ${members}`;
export const FIRST_VOTE_GAS_FIGURE = "gas of an epoch's first vote, Quorum of 3";
export const FINAL_VOTE_GAS_FIGURE = "gas of the vote completing the majority, Quorum of 3";
export const EPOCH_GAS_FIGURE = (members: number): string => `gas of an epoch's claim, all ${members} votes`;

export function quorumFigureNames(): string[] {
  return [...QUORUMS.map(ACCEPT_DELAY_FIGURE), FIRST_VOTE_GAS_FIGURE, FINAL_VOTE_GAS_FIGURE, ...QUORUMS.map(EPOCH_GAS_FIGURE)];
}

/** Each sorted, smallest first (what percentile takes). */
interface Measured {
  /** ms from each epoch's input mined to its root accepted. */
  delays: number[];
  /** Gas of each epoch's first vote, of the vote that completed its majority, of a vote after acceptance, and of all its votes. */
  first: number[];
  completing: number[];
  after: number[];
  perEpoch: number[];
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
    // Every vote's gas, by its place in its epoch: the first, the one that completed the majority (its
    // transaction also accepted the root), one after; and each epoch's votes together.
    const logs = await chain.getLogs({ address: V2_DEFAULTS.authorityAddress, fromBlock: 0n, toBlock: "latest" });
    const acceptedIn = new Set(parseEventLogs({ abi: v2Abi("Quorum"), logs, eventName: "ClaimAccepted" }).map((log) => log.transactionHash));
    const first: number[] = [];
    const completing: number[] = [];
    const after: number[] = [];
    const epochs = new Map<bigint, { gas: number; accepted: boolean }[]>();
    for (const vote of parseEventLogs({ abi: v2Abi("Quorum"), logs, eventName: "ClaimSubmitted" })) {
      const gas = Number((await chain.getTransactionReceipt({ hash: vote.transactionHash as Hex })).gasUsed);
      const lastBlock = (vote.args as unknown as { lastProcessedBlockNumber: bigint }).lastProcessedBlockNumber;
      const votes = epochs.get(lastBlock) ?? [];
      votes.push({ gas, accepted: acceptedIn.has(vote.transactionHash) });
      epochs.set(lastBlock, votes);
    }
    const perEpoch: number[] = [];
    for (const votes of epochs.values()) {
      // Only epochs every member voted in: a vote still on its way would make the epoch look cheap.
      if (votes.length < (quorum ?? 1)) continue;
      perEpoch.push(votes.reduce((sum, v) => sum + v.gas, 0));
      const done = votes.findIndex((v) => v.accepted);
      votes.forEach((v, i) => (i === done ? completing : i === 0 ? first : i > done ? after : first).push(v.gas));
    }
    const sorted = (values: number[]): number[] => values.sort((a, b) => a - b);
    return { delays: sorted(delays), first: sorted(first), completing: sorted(completing), after: sorted(after), perEpoch: sorted(perEpoch) };
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
  const claimGas = { name: "the Authority's submitClaim", value: percentile(authority.completing, 50) };
  const of = (n: number): Measured => quorums.get(n) as Measured;
  const figures = [
    ...QUORUMS.map((n) => figure("onchain", ACCEPT_DELAY_FIGURE(n), "ms", percentile(of(n).delays, 50), floor)),
    figure("onchain", FIRST_VOTE_GAS_FIGURE, "gas", percentile(of(3).first, 50), claimGas),
    figure("onchain", FINAL_VOTE_GAS_FIGURE, "gas", percentile(of(3).completing, 50), claimGas),
    ...QUORUMS.map((n) => figure("onchain", EPOCH_GAS_FIGURE(n), "gas", percentile(of(n).perEpoch, 50), claimGas)),
  ];
  const p99 = (m: Measured): string => `${percentile(m.delays, 99).toFixed(0)} ms`;
  const notes = [
    `epoch end to ClaimAccepted, p99 of ${EPOCHS}: Authority ${p99(authority)}, ${QUORUMS.map((n) => `Quorum of ${n} ${p99(of(n))}`).join(", ")}; every node runs its rounds every ${ROUND_MS} ms, and an epoch is one block`,
    `a vote after the root was accepted (each epoch's last members): ${percentile(of(3).after, 50)} gas (Quorum of 3), ${percentile(of(5).after, 50)} (Quorum of 5); a member pays its own votes, from its own key`,
  ];
  return { figures, notes };
}
