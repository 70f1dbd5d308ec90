/**
 * The v1 application on the devnode's chain: the CartesiDApp at the application address, governed by an
 * Authority (owned by the devnode's claimer wallet) that keeps its claims in a History. On a managed
 * chain the devnode puts them there itself, so a fresh hardhat chain gets the same contracts at the same
 * addresses every time; on an external chain they must already exist.
 */
import {
  createTestClient,
  http,
  type Address,
  type Chain,
  type Hex,
} from "viem";
import { messageOf } from "../../common/errors.ts";
import { ChainMismatchError, chainAt } from "../chain.ts";
import { ClaimerClients } from "../claimer.ts";
import type { DevnodeConfig } from "../config.ts";
import type { Log } from "../log.ts";
import { AUTHORITY_ABI, CARTESI_DAPP_ABI, deployV1Application, HISTORY_ABI } from "./contracts.ts";
import { inputBoxAbi } from "./inputs.ts";
import { encodeProofContext } from "./proofs.ts";

export interface ApplicationAddresses {
  dapp: Address;
  authority: Address;
  history: Address;
}

export interface ApplicationState extends ApplicationAddresses {
  /** False when the claimer wallet does not own the Authority (an external chain): epochs close but are not claimed. */
  canClaim: boolean;
}

type Settings = Pick<DevnodeConfig, "rpcUrl" | "chainMode" | "dappAddress" | "inputBoxAddress" | "claimerPrivateKey">;

/**
 * CartesiDApp's storage slots worth copying (Ownable owner, ReentrancyGuard status, the consensus): its
 * voucher bitmask is a mapping, empty at deployment.
 */
const COPIED_SLOTS = 16;

export class V1Application extends ClaimerClients {

  private constructor(
    private readonly settings: Settings,
    chain: Chain,
    private readonly log: Log,
  ) {
    super(settings.rpcUrl, chain, settings.claimerPrivateKey);
  }

  static async connect(settings: Settings, log: Log): Promise<V1Application> {
    return new V1Application(settings, await chainAt(settings.rpcUrl), log);
  }

  /** Makes sure the contracts are there (placing them on a managed chain) and reads how they are wired. */
  async ensure(): Promise<ApplicationState> {
    const dapp = this.settings.dappAddress;
    const code = await this.reader.getCode({ address: dapp });
    if (code === undefined || code === "0x") {
      if (this.settings.chainMode === "external") {
        throw new ChainMismatchError(
          `no CartesiDApp at ${dapp} on ${this.settings.rpcUrl}: deploy the v1 application (CartesiDAppFactory) there or set DAPP_ADDRESS`,
        );
      }
      await this.place(dapp);
    }
    let authority: Address;
    let history: Address;
    try {
      authority = (await this.reader.readContract({ address: dapp, abi: CARTESI_DAPP_ABI(), functionName: "getConsensus" })) as Address;
      history = (await this.reader.readContract({ address: authority, abi: AUTHORITY_ABI(), functionName: "getHistory" })) as Address;
    } catch (error) {
      throw new ChainMismatchError(`the contract at ${dapp} is not a v1 CartesiDApp governed by an Authority: ${messageOf(error)}`);
    }
    const owner = (await this.reader.readContract({ address: authority, abi: AUTHORITY_ABI(), functionName: "owner" })) as Address;
    const canClaim = owner.toLowerCase() === this.account.address.toLowerCase();
    if (!canClaim) this.log(`the Authority ${authority} is owned by ${owner}, not ${this.account.address}: epochs will not be claimed`);
    return { dapp, authority, history, canClaim };
  }

  /** Claims inputs first..last with `epochHash` through the Authority; resolves with the transaction once mined. */
  async submitClaim(authority: Address, claimData: Hex): Promise<Hex> {
    const hash = await this.wallet.writeContract({
      address: authority,
      abi: AUTHORITY_ABI(),
      functionName: "submitClaim",
      args: [claimData],
    });
    const receipt = await this.reader.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 60_000 });
    if (receipt.status !== "success") throw new Error(`the claim transaction ${hash} reverted`);
    return hash;
  }

  /** The epoch hash the History holds as claim `claimIndex` of the application, or undefined when it has none. */
  async claimedEpochHash(state: ApplicationAddresses, claimIndex: number): Promise<Hex | undefined> {
    return (await this.claim(state, claimIndex))?.epochHash;
  }

  /** Claim `claimIndex` of the application as the History holds it, or undefined when it has none. */
  async claim(state: ApplicationAddresses, claimIndex: number): Promise<{ epochHash: Hex; firstInput: number; lastInput: number } | undefined> {
    try {
      const [epochHash, first, last] = (await this.reader.readContract({
        address: state.history,
        abi: HISTORY_ABI(),
        functionName: "getClaim",
        args: [state.dapp, encodeProofContext(claimIndex)],
      })) as readonly [Hex, bigint, bigint];
      return { epochHash, firstInput: Number(first), lastInput: Number(last) };
    } catch (error) {
      if (/InvalidClaimIndex/.test(messageOf(error))) return undefined;
      throw error;
    }
  }

  /** How many inputs the InputBox holds for the application now (a validator's check of a claim's range). */
  async inputsOnChain(state: ApplicationAddresses): Promise<number> {
    const count = await this.reader.readContract({
      address: this.settings.inputBoxAddress,
      abi: inputBoxAbi,
      functionName: "getNumberOfInputs",
      args: [state.dapp],
    });
    return Number(count);
  }

  /**
   * Deploys the application from the claimer wallet and moves the CartesiDApp to the fixed application
   * address: its code (the template hash, an immutable, travels with it) and its storage (owner, consensus).
   */
  private async place(dapp: Address): Promise<void> {
    const test = createTestClient({ mode: "hardhat", transport: http(this.settings.rpcUrl) });
    const deployed = await deployV1Application(this.wallet, this.reader);
    const runtime = await this.reader.getCode({ address: deployed.dapp });
    if (runtime === undefined) throw new Error("the deployed CartesiDApp has no code");
    await test.setCode({ address: dapp, bytecode: runtime });
    for (let slot = 0; slot < COPIED_SLOTS; slot++) {
      const index = `0x${slot.toString(16).padStart(64, "0")}` as Hex;
      const value = await this.reader.getStorageAt({ address: deployed.dapp, slot: index });
      if (value !== undefined && BigInt(value) !== 0n) await test.setStorageAt({ address: dapp, index: slot, value });
    }
    this.log(`v1 application placed: CartesiDApp ${dapp}, Authority ${deployed.authority}, History ${deployed.history}`);
  }
}
