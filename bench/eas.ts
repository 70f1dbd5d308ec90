/**
 * EAS itself on the bench's chain, the yardstick of every gas row: its SchemaRegistry and EAS deployed
 * from EAS's published bytecode (@ethereum-attestation-service/eas-contracts), a schema registered, and
 * the gas per attestation of `attest` (1) and `multiAttest` (n) of requests the caller builds.
 */
import easArtifact from "@ethereum-attestation-service/eas-contracts/artifacts/contracts/EAS.sol/EAS.json" with { type: "json" };
import registryArtifact from "@ethereum-attestation-service/eas-contracts/artifacts/contracts/SchemaRegistry.sol/SchemaRegistry.json" with { type: "json" };
import { parseEventLogs, type Abi, type Address, type Chain, type Hex, type PublicClient, type Transport, type WalletClient, type Account } from "viem";

/** Hardhat's per-transaction gas cap (EIP-7825, 2^24): a larger multiAttest is sent in halves. */
export const TRANSACTION_GAS_CAP = 16_777_216n;
export const ZERO_UID = `0x${"0".repeat(64)}` as Hex;

/** One attestation request as EAS takes it. */
export interface EasRequest {
  recipient: Address;
  expirationTime: bigint;
  revocable: boolean;
  refUID: Hex;
  data: Hex;
  value: bigint;
}

export interface EasOnChain {
  eas: Address;
  schemaUid: Hex;
  /** Gas per attestation of `attest` (size 1) or `multiAttest` (n), in how many transactions it went, and the uids made. */
  gasPerAttestation(size: number, request: (i: number) => EasRequest, first: number): Promise<{ gas: number; transactions: number; uids: Hex[] }>;
  /** Gas per revocation of `revoke` (one uid) or `multiRevoke` (several), and in how many transactions it went. */
  gasPerRevocation(uids: readonly Hex[]): Promise<{ gas: number; transactions: number }>;
}

type Wallet = WalletClient<Transport, Chain, Account>;

/** Deploys EAS from `wallet` and registers `schema` (revocable, no resolver). */
export async function deployEas(reader: PublicClient<Transport, Chain>, wallet: Wallet, schema: string): Promise<EasOnChain> {
  const registryAbi = registryArtifact.abi as Abi;
  const easAbi = easArtifact.abi as Abi;
  const made: Hex[] = [];
  const gasOf = async (hash: Hex): Promise<bigint> => {
    const receipt = await reader.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`EAS: transaction ${hash} reverted`);
    for (const log of parseEventLogs({ abi: easAbi, logs: receipt.logs, eventName: "Attested" }) as unknown as { args: { uid: Hex } }[]) made.push(log.args.uid);
    return receipt.gasUsed;
  };
  const deploy = async (abi: Abi, bytecode: Hex, args: readonly unknown[]): Promise<Address> => {
    const receipt = await reader.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi, bytecode, args }) });
    if (receipt.contractAddress === null || receipt.contractAddress === undefined) throw new Error("EAS: deployment made no contract");
    return receipt.contractAddress;
  };
  const registry = await deploy(registryAbi, registryArtifact.bytecode as Hex, []);
  const eas = await deploy(easAbi, easArtifact.bytecode as Hex, [registry]);
  const registered = await reader.waitForTransactionReceipt({
    hash: await wallet.writeContract({ address: registry, abi: registryAbi, functionName: "register", args: [schema, "0x0000000000000000000000000000000000000000", true] }),
  });
  const [schemaEvent] = parseEventLogs({ abi: registryAbi, logs: registered.logs, eventName: "Registered" }) as unknown as { args: { uid: Hex } }[];
  if (schemaEvent === undefined) throw new Error("EAS registered no schema");
  const schemaUid = schemaEvent.args.uid;

  return {
    eas,
    schemaUid,
    async gasPerAttestation(size, request, first) {
      made.length = 0;
      if (size === 1) {
        const gas = await gasOf(await wallet.writeContract({ address: eas, abi: easAbi, functionName: "attest", args: [{ schema: schemaUid, data: request(first) }] }));
        return { gas: Number(gas), transactions: 1, uids: [...made] };
      }
      // One multiAttest when it fits a transaction; a chain with a per-transaction gas cap takes a large one
      // in halves, and the caller says in how many transactions.
      const call = (from: number, count: number) =>
        ({ address: eas, abi: easAbi, functionName: "multiAttest", args: [[{ schema: schemaUid, data: Array.from({ length: count }, (_, k) => request(from + k)) }]] }) as const;
      let chunk = size;
      while (chunk > 1) {
        const needed = await reader.estimateContractGas({ ...call(first, chunk), account: wallet.account }).catch(() => undefined);
        if (needed !== undefined && needed <= TRANSACTION_GAS_CAP) break;
        chunk = Math.ceil(chunk / 2);
      }
      let gas = 0n;
      for (let done = 0; done < size; done += chunk) gas += await gasOf(await wallet.writeContract(call(first + done, Math.min(chunk, size - done))));
      return { gas: Number(gas) / size, transactions: Math.ceil(size / chunk), uids: [...made] };
    },
    async gasPerRevocation(uids) {
      if (uids.length === 1) {
        const gas = await gasOf(await wallet.writeContract({ address: eas, abi: easAbi, functionName: "revoke", args: [{ schema: schemaUid, data: { uid: uids[0], value: 0n } }] }));
        return { gas: Number(gas), transactions: 1 };
      }
      const call = (part: readonly Hex[]) => ({ address: eas, abi: easAbi, functionName: "multiRevoke", args: [[{ schema: schemaUid, data: part.map((uid) => ({ uid, value: 0n })) }]] }) as const;
      let chunk = uids.length;
      while (chunk > 1) {
        const needed = await reader.estimateContractGas({ ...call(uids.slice(0, chunk)), account: wallet.account }).catch(() => undefined);
        if (needed !== undefined && needed <= TRANSACTION_GAS_CAP) break;
        chunk = Math.ceil(chunk / 2);
      }
      let gas = 0n;
      for (let done = 0; done < uids.length; done += chunk) gas += await gasOf(await wallet.writeContract(call(uids.slice(done, done + chunk))));
      return { gas: Number(gas) / uids.length, transactions: Math.ceil(uids.length / chunk) };
    },
  };
}
