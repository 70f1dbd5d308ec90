/**
 * A Quorum of three on Rollups v2 (`npm start -- --rollups v2 --quorum 3`, docs/quorum.md): the application
 * deployed under Cartesi's own Quorum contract (from @cartesi/rollups 2.2.0) judges our members' votes.
 * Every member votes for the root its own dapp computed and the Quorum accepts it; the node follows the
 * acceptance (JSON-RPC epochs, GET /consensus), never one vote. A member killed by pid while its key votes a
 * wrong root from outside: nothing wrong is accepted, the honest two's root is, and the liar is named by
 * the honest members and the node (log, metric, status). Two members down: nothing is accepted, the node
 * says why; a member restarted while its votes wait does not vote again; once a second member is back
 * every missed epoch is accepted in order. A majority voting together is accepted (the trust assumption),
 * and the honest member that computed otherwise stops serving reads.
 */
import { createWalletClient, http, keccak256, parseEventLogs, toHex, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { hardhat } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V2_DEFAULTS } from "../../devnode/config.ts";
import { v2Abi } from "../../devnode/v2/contracts.ts";
import type { ConsensusStatus } from "../../devnode/v2/quorum-votes.ts";
import { quorumMemberKeys } from "../../scripts/lib/stack-config.ts";
import { seriesValue } from "../support/prometheus.ts";
import { startStack, type TestStack } from "../support/stack.ts";
import { until } from "../support/until.ts";
import { schemaInput } from "./fixtures.ts";

const QUORUM = V2_DEFAULTS.authorityAddress;
const keys = quorumMemberKeys(3) as Hex[];
const members = keys.map((key) => privateKeyToAccount(key).address);
let stack: TestStack;
let sent = 0;

interface ClaimLog {
  lastBlock: bigint;
  root: Hex;
  submitter: Address | null;
  tx: Hex;
}

async function claimLogs(eventName: "ClaimSubmitted" | "ClaimAccepted"): Promise<ClaimLog[]> {
  const logs = await stack.client.publicClient.getLogs({ address: QUORUM, fromBlock: 0n, toBlock: "latest" });
  return parseEventLogs({ abi: v2Abi("Quorum"), logs, eventName }).map((log) => {
    const args = log.args as unknown as { lastProcessedBlockNumber: bigint; outputsMerkleRoot: Hex; submitter?: Address };
    return { lastBlock: args.lastProcessedBlockNumber, root: args.outputsMerkleRoot, submitter: args.submitter ?? null, tx: log.transactionHash };
  });
}

/** An accepted input in an epoch of its own (one block per epoch): the epoch's last block. */
async function inputInOwnEpoch(): Promise<bigint> {
  const verdict = await stack.send(schemaInput(`quorum-${sent++}.example`));
  expect(verdict.status).toBe("ACCEPTED");
  return (await stack.client.publicClient.getTransactionReceipt({ hash: verdict.txHash })).blockNumber;
}

async function consensusOf(url: string): Promise<ConsensusStatus> {
  const response = await fetch(`${url}/consensus`);
  expect(response.status).toBe(200);
  return (await response.json()) as ConsensusStatus;
}

async function acceptedAt(lastBlock: bigint): Promise<ClaimLog> {
  const found = await until(async () => (await claimLogs("ClaimAccepted")).find((c) => c.lastBlock === lastBlock), (c) => c !== undefined, `a root accepted for the epoch ending at block ${lastBlock}`, 30_000);
  return found as ClaimLog;
}

/** Votes `root` for the epoch ending at `lastBlock` with member k's key, from outside the stack. */
async function voteAs(k: number, lastBlock: bigint, root: Hex): Promise<void> {
  const wallet = createWalletClient({ account: privateKeyToAccount(keys[k - 1] as Hex), chain: hardhat, transport: http(stack.urls.rpc) });
  const hash = await wallet.writeContract({ address: QUORUM, abi: v2Abi("Quorum"), functionName: "submitClaim", args: [V2_DEFAULTS.applicationAddress, lastBlock, root] });
  expect((await stack.client.publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
}

async function rpc<T>(method: string, params: Record<string, unknown>): Promise<T> {
  const response = await fetch(`${stack.urls.node}/rpc`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return ((await response.json()) as { result: T }).result;
}

const metrics = async (url: string): Promise<string> => (await fetch(`${url}/metrics`)).text();
const readerUrl = (k: number): string => stack.urls.readers[k - 1] as string;

beforeAll(async () => {
  stack = await startStack({ rollups: "v2", quorum: 3, env: { EPOCH_INTERVAL_MS: "0" } });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

describe("a Quorum of three members on Rollups v2", () => {
  it("deploys under Cartesi's Quorum; each member votes the root it computed; the node records the acceptance, not a vote", { timeout: 120_000 }, async () => {
    const onChain = stack.client.publicClient;
    expect(await onChain.readContract({ address: V2_DEFAULTS.applicationAddress, abi: v2Abi("Application"), functionName: "getOutputsMerkleRootValidator" })).toBe(QUORUM);
    expect(await onChain.readContract({ address: QUORUM, abi: v2Abi("Quorum"), functionName: "numOfValidators" })).toBe(3n);
    const lastBlock = await inputInOwnEpoch();
    const accepted = await acceptedAt(lastBlock);
    // Every member votes, though two suffice.
    // The third vote comes once that member has computed the epoch too: seconds on a loaded machine (20 s was missed in a full run).
    const votes = await until(async () => (await claimLogs("ClaimSubmitted")).filter((v) => v.lastBlock === lastBlock), (v) => v.length === 3, "three votes", 60_000);
    expect(new Set(votes.map((v) => v.submitter))).toEqual(new Set(members));
    expect(new Set(votes.map((v) => v.root))).toEqual(new Set([accepted.root]));
    const status = await until(() => consensusOf(stack.urls.node), (s) => s.epochs.some((e) => BigInt(e.lastBlock) === lastBlock && e.accepted !== null && Object.keys(e.votes).length === 3), "the node's consensus status", 10_000);
    expect(status).toMatchObject({ kind: "quorum", address: QUORUM, needed: 2, waiting: [], wrongVotes: [], reason: null });
    expect(status.members.map((m) => [m.id, m.address, m.self])).toEqual(members.map((m, i) => [i + 1, m, false]));
    const epoch = status.epochs.find((e) => BigInt(e.lastBlock) === lastBlock);
    expect(epoch).toMatchObject({ computed: accepted.root, accepted: accepted.root });
    // A member knows itself.
    expect((await consensusOf(readerUrl(2))).members.map((m) => m.self)).toEqual([false, true, false]);
    // The node's JSON-RPC epoch carries the transaction that made the root accepted, not any one vote's.
    const object = await rpc<{ data: { status: string; claim_transaction_hash: Hex; outputs_merkle_root: Hex } }>("cartesi_getEpoch", { application: "attestation", epoch_index: toHex(epoch?.index ?? 0) });
    expect(object.data).toMatchObject({ status: "CLAIM_ACCEPTED", claim_transaction_hash: accepted.tx, outputs_merkle_root: accepted.root });
    // The node says which consensus the application is under, as the node's schema names it.
    const application = await rpc<{ data: { consensus_type: string; iconsensus_address: Address } }>("cartesi_getApplication", { application: "attestation" });
    expect(application.data).toMatchObject({ consensus_type: "QUORUM", iconsensus_address: QUORUM });
  });

  it("a member killed while its key votes a wrong root from outside: the honest two's root is accepted and the liar is named", { timeout: 90_000 }, async () => {
    await stack.kill("reader-1", "SIGKILL");
    const lastBlock = await inputInOwnEpoch();
    const lie = keccak256(toHex("a root nobody computed"));
    await voteAs(1, lastBlock, lie);
    const accepted = await acceptedAt(lastBlock);
    expect(accepted.root).not.toBe(lie);
    expect((await claimLogs("ClaimAccepted")).some((c) => c.root === lie)).toBe(false);
    for (const url of [readerUrl(2), readerUrl(3), stack.urls.node]) {
      const status = await until(() => consensusOf(url), (s) => s.wrongVotes.length > 0, `${url} naming the liar`, 20_000);
      expect(status.wrongVotes).toEqual([expect.objectContaining({ member: members[0], voted: lie, computed: accepted.root, lastBlock: Number(lastBlock) })]);
      expect(status.members.find((m) => m.address === members[0])?.wrongVotes).toBe(1);
      expect(seriesValue(await metrics(url), `devnode_consensus_wrong_votes{member="${members[0]}"}`)).toBe(1);
    }
    // Each node's lines carry its own label: the stack's log says which node named the liar.
    expect(stack.logs("reader-2")).toMatch(new RegExp(`^\\[member-2\\] Quorum member ${members[0]} voted outputs root ${lie}`, "m"));
    expect(stack.logs("devnode")).toMatch(new RegExp(`^\\[devnode\\] Quorum member ${members[0]} voted outputs root ${lie}`, "m"));
    // A wrong vote decides nothing: the honest members keep serving reads.
    for (const k of [2, 3]) expect(((await (await fetch(`${readerUrl(k)}/reader`)).json()) as { serving: boolean }).serving).toBe(true);
  });

  it("two members down: nothing is accepted and the node says why; a member restarted meanwhile does not vote again; one back and every missed epoch is accepted in order", { timeout: 120_000 }, async () => {
    await stack.kill("reader-2", "SIGKILL");
    const first = await inputInOwnEpoch();
    const second = await inputInOwnEpoch();
    // Member 3 votes for both; one vote of the two needed.
    await until(async () => (await claimLogs("ClaimSubmitted")).filter((v) => v.lastBlock >= first), (v) => v.length === 2, "member 3's votes", 20_000);
    const waiting = await until(() => consensusOf(stack.urls.node), (s) => s.waiting.length === 2, "two epochs waiting", 10_000);
    expect(waiting.waiting.map((w) => [BigInt(w.lastBlock), w.votes, w.needed, w.notVoted])).toEqual([
      [first, 1, 2, [members[0], members[1]]],
      [second, 1, 2, [members[0], members[1]]],
    ]);
    expect(waiting.reason).toMatch(/waits for a quorum: 1 of 3 member\(s\) voted, 2 needed; not voted: .* \(2 epochs wait\)/);
    expect(seriesValue(await metrics(stack.urls.node), "devnode_consensus_epochs_waiting")).toBe(2);
    // Nothing accepted, so nothing is proven: the epochs are not claimed.
    const epochs = await rpc<{ data: { status: string; last_block: Hex }[] }>("cartesi_listEpochs", { application: "attestation" });
    const late = epochs.data.filter((e) => BigInt(e.last_block) >= first);
    expect(late.map((e) => e.status)).toEqual(["CLAIM_COMPUTED", "CLAIM_COMPUTED"]);
    // Member 3 killed and started again while its votes wait: it asks the Quorum, and does not vote again.
    await stack.kill("reader-3", "SIGKILL");
    await stack.start("reader-3");
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await claimLogs("ClaimSubmitted")).filter((v) => v.lastBlock >= first)).toHaveLength(2);
    // Member 2 comes back: it catches up, votes both, and both are accepted, the older first.
    await stack.start("reader-2");
    const a = await acceptedAt(first);
    const b = await acceptedAt(second);
    const accepted = await claimLogs("ClaimAccepted");
    expect(accepted.indexOf(accepted.find((c) => c.tx === a.tx) as ClaimLog)).toBeLessThan(accepted.indexOf(accepted.find((c) => c.tx === b.tx) as ClaimLog));
    expect((await until(() => consensusOf(stack.urls.node), (s) => s.waiting.length === 0, "nothing waiting", 10_000)).reason).toBeNull();
    // Member 1 returns too: it votes in none of the epochs its key voted in (and says so for the one it did not vote itself).
    await stack.start("reader-1");
    await until(async () => stack.logs("reader-1"), (text) => /someone else holds the key/.test(text), "member 1 noticing its key voted elsewhere", 20_000);
    // No member voted twice in an epoch, whatever was killed and restarted.
    const votes = await claimLogs("ClaimSubmitted");
    const seen = new Set<string>();
    for (const vote of votes) {
      const key = `${vote.submitter}:${vote.lastBlock}`;
      expect(seen.has(key), `${key} voted twice`).toBe(false);
      seen.add(key);
    }
  });

  it("a majority voting together gets its root accepted (the trust assumption); the honest member stops serving reads", { timeout: 90_000 }, async () => {
    await stack.kill("reader-1", "SIGKILL");
    await stack.kill("reader-2", "SIGKILL");
    const lastBlock = await inputInOwnEpoch();
    const lie = keccak256(toHex("a root two members agreed on"));
    await voteAs(1, lastBlock, lie);
    await voteAs(2, lastBlock, lie);
    expect((await acceptedAt(lastBlock)).root).toBe(lie);
    const refused = await until(async () => fetch(`${readerUrl(3)}/inspect/${encodeURIComponent(JSON.stringify({ type: "list_schemas" }))}`), (r) => r.status === 503, "member 3 refusing reads", 20_000);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("READER_MISMATCH");
    // The node follows acceptances in rounds of its own: member 3 may refuse reads before the node has logged it.
    await until(async () => stack.logs("devnode"), (text) => /accepted by the Quorum: outputs root 0x[0-9a-f]{64} .*this node computes/.test(text), "the node logging the contradiction", 20_000);
  });
});
