/**
 * The v2 application on the devnode's chain: an Application whose outputs a consensus validates, with
 * epochs a fixed number of blocks long. The consensus is Cartesi's Authority (owned by the devnode's
 * claimer wallet: one key decides) or, with QUORUM_MEMBERS, Cartesi's Quorum (a claim is accepted once a
 * majority of its fixed members voted for the same root: docs/quorum.md). On a managed chain the devnode
 * deploys the consensus and the Application as the claimer's first two transactions, so a fresh hardhat
 * chain gets them at the same addresses (V2_DEFAULTS) whichever consensus it is; on an external chain
 * they must already exist.
 */
import {
  createTestClient,
  getAddress,
  getAbiItem,
  getContractAddress,
  http,
  type AbiEvent,
  type Address,
  type Chain,
  type Hex,
} from "viem";
import { messageOf } from "../../common/errors.ts";
import { ChainMismatchError, chainAt } from "../chain.ts";
import { ClaimerClients } from "../claimer.ts";
import type { DevnodeConfig } from "../config.ts";
import type { Log } from "../log.ts";
import { DEVNODE_TEMPLATE_HASH, inputBoxAvailability, v2Abi, v2Artifact } from "./contracts.ts";
import { placeV3InputBoxStandIn } from "./v3-inputbox.ts";

/** Which of Cartesi's v2 consensus contracts validates the application. */
export type ConsensusKind = "authority" | "quorum";

export interface V2ApplicationState {
  application: Address;
  /** The consensus contract (an Authority or a Quorum): what claims go to and validateOutput asks. */
  authority: Address;
  consensus: ConsensusKind;
  /** Who may claim: the Authority's owner, or the Quorum's members in id order (id = position + 1). */
  members: Address[];
  /** This devnode's wallet's Quorum id (1..n), 0 when it is not a member (and always 0 under an Authority). */
  memberId: number;
  inputBox: Address;
  epochLength: number;
  /** False when the claimer wallet neither owns the Authority nor is a member of the Quorum: nothing is claimed. */
  canClaim: boolean;
  /** The contracts were deployed just now (a fresh chain): no claim of the record is on it. */
  deployed: boolean;
}

type Settings = Pick<DevnodeConfig, "rpcUrl" | "chainMode" | "dappAddress" | "inputBoxAddress" | "claimerPrivateKey" | "epochLength" | "quorumMembers">;

/** A claim event of the consensus: a vote (ClaimSubmitted, with its submitter) or an acceptance (ClaimAccepted). */
export interface ClaimEvent {
  lastBlock: number;
  outputsRoot: Hex;
  /** The voter; null for ClaimAccepted, which names none. */
  submitter: Address | null;
  transactionHash: Hex;
  blockNumber: number;
}

export class V2Application extends ClaimerClients {

  private constructor(
    private readonly settings: Settings,
    readonly chain: Chain,
    private readonly log: Log,
  ) {
    super(settings.rpcUrl, chain, settings.claimerPrivateKey);
  }

  static async connect(settings: Settings, log: Log): Promise<V2Application> {
    return new V2Application(settings, await chainAt(settings.rpcUrl), log);
  }

  /** Makes sure the Application is there (deploying it on a managed chain) and reads how it is wired. */
  async ensure(): Promise<V2ApplicationState> {
    const application = this.settings.dappAddress;
    const code = await this.reader.getCode({ address: application });
    let deployed = false;
    if (code === undefined || code === "0x") {
      if (this.settings.chainMode === "external") {
        throw new ChainMismatchError(
          `no v2 Application at ${application} on ${this.settings.rpcUrl}: deploy it (with an Authority and the InputBox as its data availability) or set DAPP_ADDRESS`,
        );
      }
      await this.deploy(application);
      deployed = true;
    }
    // The newest @cartesi/viem sends inputs to the v3 InputBox, which a devnode cannot have: there a
    // transaction fails with the reason instead of succeeding with no input (v3-inputbox.ts).
    if (this.settings.chainMode === "managed") await placeV3InputBoxStandIn(this.settings.rpcUrl, this.reader, this.settings.inputBoxAddress, this.log);
    let authority: Address;
    let epochLength: number;
    try {
      authority = (await this.reader.readContract({ address: application, abi: v2Abi("Application"), functionName: "getOutputsMerkleRootValidator" })) as Address;
      epochLength = Number(await this.reader.readContract({ address: authority, abi: v2Abi("Authority"), functionName: "getEpochLength" }));
    } catch (error) {
      throw new ChainMismatchError(`the contract at ${application} is not a v2 Application validated by an Authority or a Quorum: ${messageOf(error)}`);
    }
    const me = this.account.address.toLowerCase();
    const members = await this.quorumMembers(authority);
    if (members !== undefined) {
      const memberId = members.findIndex((m) => m.toLowerCase() === me) + 1;
      return { application, authority: getAddress(authority), consensus: "quorum", members, memberId, inputBox: this.settings.inputBoxAddress, epochLength, canClaim: memberId > 0, deployed };
    }
    const owner = (await this.reader.readContract({ address: authority, abi: v2Abi("Authority"), functionName: "owner" })) as Address;
    const canClaim = owner.toLowerCase() === me;
    if (!canClaim) this.log(`the Authority ${authority} is owned by ${owner}, not ${this.account.address}: epochs will not be claimed`);
    return { application, authority: getAddress(authority), consensus: "authority", members: [getAddress(owner)], memberId: 0, inputBox: this.settings.inputBoxAddress, epochLength, canClaim, deployed };
  }

  /** The Quorum's members in id order, or undefined when the consensus is not a Quorum (it has no numOfValidators). */
  private async quorumMembers(consensus: Address): Promise<Address[] | undefined> {
    const abi = v2Abi("Quorum");
    let n: bigint;
    try {
      n = (await this.reader.readContract({ address: consensus, abi, functionName: "numOfValidators" })) as bigint;
    } catch {
      return undefined;
    }
    const members: Address[] = [];
    for (let id = 1n; id <= n; id++) members.push(getAddress((await this.reader.readContract({ address: consensus, abi, functionName: "validatorById", args: [id] })) as Address));
    return members;
  }

  /**
   * What this wallet's Quorum id has voted in the epoch ending at `lastBlock`: nothing, `outputsRoot`, or
   * another root (which it can only have done through someone else holding its key).
   */
  async voteOf(state: V2ApplicationState, lastBlock: number, outputsRoot: Hex): Promise<"none" | "this" | "other"> {
    const abi = v2Abi("Quorum");
    const args = [state.application, BigInt(lastBlock)] as const;
    const any = (await this.reader.readContract({ address: state.authority, abi, functionName: "isValidatorInFavorOfAnyClaimInEpoch", args: [...args, BigInt(state.memberId)] })) as boolean;
    if (!any) return "none";
    const forThis = (await this.reader.readContract({ address: state.authority, abi, functionName: "isValidatorInFavorOf", args: [...args, outputsRoot, BigInt(state.memberId)] })) as boolean;
    return forThis ? "this" : "other";
  }

  /** Claims the epoch ending at `lastBlock` with `outputsRoot`; resolves with the transaction once mined. */
  async submitClaim(state: V2ApplicationState, lastBlock: number, outputsRoot: Hex): Promise<Hex> {
    const hash = await this.wallet.writeContract({
      address: state.authority,
      abi: v2Abi("Authority"),
      functionName: "submitClaim",
      args: [state.application, BigInt(lastBlock), outputsRoot],
    });
    const receipt = await this.reader.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 60_000 });
    if (receipt.status !== "success") throw new Error(`the claim transaction ${hash} reverted`);
    return hash;
  }

  /** Whether the Authority accepted `outputsRoot` for the application (what validateOutput asks it). */
  async isAccepted(state: V2ApplicationState, outputsRoot: Hex): Promise<boolean> {
    return (await this.reader.readContract({
      address: state.authority,
      abi: v2Abi("Authority"),
      functionName: "isOutputsMerkleRootValid",
      args: [state.application, outputsRoot],
    })) as boolean;
  }

  /** The chain's newest block number. */
  async latestBlock(): Promise<number> {
    return Number(await this.reader.getBlockNumber({ cacheTime: 0 }));
  }

  /**
   * The consensus's claim events for the application in blocks [fromBlock, toBlock], in chain order:
   * `ClaimSubmitted` (every vote, whoever sent it; under an Authority every claim) or `ClaimAccepted`.
   */
  async claimEvents(state: Pick<V2ApplicationState, "application" | "authority">, name: "ClaimSubmitted" | "ClaimAccepted", fromBlock: number, toBlock: number): Promise<ClaimEvent[]> {
    const event = getAbiItem({ abi: v2Abi("Authority"), name }) as AbiEvent;
    const logs = await this.reader.getLogs({ address: state.authority, event, args: { appContract: state.application }, fromBlock: BigInt(fromBlock), toBlock: BigInt(toBlock), strict: true });
    return logs.map((log) => {
      const args = log.args as { submitter?: Address; lastProcessedBlockNumber: bigint; outputsMerkleRoot: Hex };
      return {
        lastBlock: Number(args.lastProcessedBlockNumber),
        outputsRoot: args.outputsMerkleRoot,
        submitter: args.submitter === undefined ? null : getAddress(args.submitter),
        transactionHash: log.transactionHash as Hex,
        blockNumber: Number(log.blockNumber),
      };
    });
  }

  /** Mines empty blocks up to `block` (a managed chain only): what time does to a chain that has blocks of its own. */
  async mineTo(block: number): Promise<void> {
    const latest = Number(await this.reader.getBlockNumber({ cacheTime: 0 }));
    if (latest >= block) return;
    await createTestClient({ mode: "hardhat", transport: http(this.settings.rpcUrl) }).mine({ blocks: block - latest });
  }

  /** The consensus then the Application, as the claimer's first two transactions, so they land where V2_DEFAULTS says. */
  private async deploy(application: Address): Promise<void> {
    const claimer = this.account.address;
    const nonce = await this.reader.getTransactionCount({ address: claimer });
    const expected = getContractAddress({ from: claimer, nonce: BigInt(nonce) + 1n });
    if (expected.toLowerCase() !== application.toLowerCase()) {
      throw new ChainMismatchError(
        `the claimer ${claimer} would deploy the Application at ${expected}, not at DAPP_ADDRESS ${application} ` +
          `(it has sent ${nonce} transaction(s) on this chain): unset DAPP_ADDRESS, or start a fresh chain`,
      );
    }
    const epochLength = BigInt(this.settings.epochLength);
    const members = this.settings.quorumMembers;
    // Cartesi's QuorumFactory deploys the same contract with CREATE2; a direct deployment keeps the
    // Application at its default address whichever consensus validates it.
    const consensus = members === undefined ? await this.deployOne("Authority", [claimer, epochLength]) : await this.deployOne("Quorum", [members, epochLength]);
    const deployed = await this.deployOne("Application", [consensus, claimer, DEVNODE_TEMPLATE_HASH, inputBoxAvailability(this.settings.inputBoxAddress)]);
    const by = members === undefined ? `Authority ${consensus}` : `Quorum ${consensus} of ${members.length} member(s): ${members.join(", ")}`;
    this.log(`v2 application deployed: Application ${deployed}, ${by} (epochs of ${this.settings.epochLength} block(s))`);
  }

  private async deployOne(name: "Authority" | "Quorum" | "Application", args: readonly unknown[]): Promise<Address> {
    const artifact = v2Artifact(name);
    const hash = await this.wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode.object, args });
    const receipt = await this.reader.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== "success" || receipt.contractAddress == null) throw new Error(`deploying the v2 ${name} failed (transaction ${hash})`);
    return getAddress(receipt.contractAddress);
  }
}

/** Blocks per getLogs call: public endpoints refuse wide ranges. */
const LOG_RANGE = 10_000;

/**
 * One claim event of the consensus read forward from block 0, LOG_RANGE blocks a call. Each range's events
 * are handed over before the cursor moves past it, so a failed read is read again, never skipped.
 */
export class ClaimEventCursor {
  private readThrough = -1;

  constructor(
    private readonly app: Pick<V2Application, "claimEvents" | "latestBlock">,
    private readonly name: "ClaimSubmitted" | "ClaimAccepted",
    /** The application and consensus read from, asked at each read (contracts placed again change it). */
    private readonly where: () => Pick<V2ApplicationState, "application" | "authority">,
  ) {}

  /** Reads from block 0 again: the contracts were placed anew. */
  rewind(): void {
    this.readThrough = -1;
  }

  /** Hands `take` every event mined since the last read, in chain order. */
  async readNew(take: (events: ClaimEvent[]) => void): Promise<void> {
    const latest = await this.app.latestBlock();
    while (this.readThrough < latest) {
      const from = this.readThrough + 1;
      const to = Math.min(latest, from + LOG_RANGE - 1);
      take(await this.app.claimEvents(this.where(), this.name, from, to));
      this.readThrough = to;
    }
  }
}
