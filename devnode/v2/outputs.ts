/**
 * Outputs as Cartesi Rollups v2 proves them (CanonicalMachine, LibMerkle32, LibOutputValidityProof of
 * rollups-contracts 2.2.0): every output of the application — notices and vouchers alike, in the order
 * the machine emitted them, numbered from 0 across all inputs — is the ABI-encoded call
 * `Notice(bytes)` / `Voucher(address,uint256,bytes)` / `DelegateCallVoucher(address,bytes)`, its leaf is
 * keccak256 of those bytes, and the leaves fill a binary Merkle tree of height 63 (LOG2_MAX_OUTPUTS)
 * whose unwritten leaves are zero. A claim carries the tree's root after an epoch's last input; an
 * output's proof is its index and the 63 siblings from the leaf up, which `Application.validateOutput`
 * folds back into that root.
 */
import { bytesToHex, encodeFunctionData, hexToBytes, type Address, type Hex } from "viem";
import { nativeKeccak } from "../../common/native-keccak.ts";
import { v2Abi } from "./contracts.ts";

export const LOG2_MAX_OUTPUTS = 63;

export function encodeNotice(payload: Hex): Hex {
  return encodeFunctionData({ abi: v2Abi("Outputs"), functionName: "Notice", args: [payload] });
}

export function encodeVoucher(destination: Address, value: bigint, payload: Hex): Hex {
  return encodeFunctionData({ abi: v2Abi("Outputs"), functionName: "Voucher", args: [destination, value, payload] });
}

/** The hash of a subtree nobody wrote, `level` levels above the (zero) leaves. */
const PRISTINE: Uint8Array[] = (() => {
  const nodes: Uint8Array[] = [new Uint8Array(32)];
  for (let level = 1; level <= LOG2_MAX_OUTPUTS; level++) {
    const below = nodes[level - 1] as Uint8Array;
    nodes.push(nativeKeccak(below, below));
  }
  return nodes;
})();

export class OutputsTree {
  /** levels[0] holds the leaves written; each level above, their parents (a missing right child is pristine). */
  private readonly levels: Uint8Array[][];

  /** Outputs in emission order: the raw bytes of each (as `Notice(bytes)` etc. encode them). */
  constructor(outputs: readonly Hex[]) {
    let level: Uint8Array[] = outputs.map((output) => nativeKeccak(hexToBytes(output)));
    this.levels = [level];
    for (let height = 0; height < LOG2_MAX_OUTPUTS; height++) {
      const parents: Uint8Array[] = [];
      for (let i = 0; i < level.length; i += 2) {
        parents.push(nativeKeccak(level[i] as Uint8Array, level[i + 1] ?? (PRISTINE[height] as Uint8Array)));
      }
      level = parents;
      this.levels.push(level);
    }
  }

  get size(): number {
    return this.levels[0]?.length ?? 0;
  }

  /** The outputs Merkle root a claim carries. */
  get root(): Hex {
    return bytesToHex(this.levels[LOG2_MAX_OUTPUTS]?.[0] ?? (PRISTINE[LOG2_MAX_OUTPUTS] as Uint8Array));
  }

  /** The 63 siblings of output `index`, from the leaf level up (`outputHashesSiblings`). */
  siblings(index: number): Hex[] {
    if (!Number.isSafeInteger(index) || index < 0 || index >= this.size) {
      throw new RangeError(`output ${index} is not in a tree of ${this.size} outputs`);
    }
    const siblings: Hex[] = [];
    let position = index;
    for (let height = 0; height < LOG2_MAX_OUTPUTS; height++) {
      const sibling = this.levels[height]?.[position ^ 1] ?? (PRISTINE[height] as Uint8Array);
      siblings.push(bytesToHex(sibling));
      position >>= 1;
    }
    return siblings;
  }
}
