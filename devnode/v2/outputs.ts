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
import { bytesToHex, decodeFunctionData, encodeFunctionData, hexToBytes, type Address, type Hex } from "viem";
import { nativeKeccak } from "../../common/native-keccak.ts";
import { v2Abi } from "./contracts.ts";

export const LOG2_MAX_OUTPUTS = 63;

export function encodeNotice(payload: Hex): Hex {
  return encodeFunctionData({ abi: v2Abi("Outputs"), functionName: "Notice", args: [payload] });
}

/** A notice's payload: `encodeNotice`'s inverse; undefined when `output` is not a `Notice(bytes)` call. */
export function decodeNotice(output: Hex): Hex | undefined {
  try {
    const decoded = decodeFunctionData({ abi: v2Abi("Outputs"), data: output });
    return decoded.functionName === "Notice" ? (decoded.args as readonly [Hex])[0] : undefined;
  } catch {
    return undefined;
  }
}

export function encodeVoucher(destination: Address, value: bigint, payload: Hex): Hex {
  return encodeFunctionData({ abi: v2Abi("Outputs"), functionName: "Voucher", args: [destination, value, payload] });
}

export function encodeDelegateCallVoucher(destination: Address, payload: Hex): Hex {
  return encodeFunctionData({ abi: v2Abi("Outputs"), functionName: "DelegateCallVoucher", args: [destination, payload] });
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

/**
 * The application's outputs tree as it grows, able to answer for any earlier size: the root after the
 * first `n` outputs (what the claim of the epoch that ended there carries) and an output's siblings in
 * that tree (its proof against that claim). Complete subtrees are kept as they fill, so appending costs
 * one hash on average; a node that straddles `n` is rebuilt from its complete and pristine parts, so a
 * root or a proof costs about one hash per level.
 */
export class GrowingOutputsTree {
  /** full[h][p]: the subtree of height h at position p, once all its 2^h leaves are written. */
  private readonly full: Uint8Array[][] = Array.from({ length: LOG2_MAX_OUTPUTS + 1 }, () => []);
  /** Straddling nodes of the last size asked for (roots and proofs of one epoch are asked together). */
  private straddling = new Map<string, Uint8Array>();
  private straddlingSize = -1;

  get size(): number {
    return this.full[0]?.length ?? 0;
  }

  /** Adds the next output's hash (keccak256 of the output's bytes). */
  append(hash: Uint8Array): void {
    let level = this.full[0] as Uint8Array[];
    level.push(hash);
    let position = level.length - 1;
    for (let height = 1; height <= LOG2_MAX_OUTPUTS && position % 2 === 1; height++) {
      const below = level;
      level = this.full[height] as Uint8Array[];
      level.push(nativeKeccak(below[position - 1] as Uint8Array, below[position] as Uint8Array));
      position = level.length - 1;
    }
  }

  /** Forgets the outputs from `size` on (a record write that failed). */
  truncate(size: number): void {
    for (let height = 0; height <= LOG2_MAX_OUTPUTS; height++) {
      const level = this.full[height] as Uint8Array[];
      level.length = Math.min(level.length, Math.floor(size / 2 ** height));
    }
    this.straddlingSize = -1;
  }

  /** The root over the first `size` outputs. */
  rootAt(size: number): Hex {
    return bytesToHex(this.node(LOG2_MAX_OUTPUTS, 0, this.checkSize(size)));
  }

  /** Output `index`'s 63 siblings, leaf level first, in the tree of the first `size` outputs. */
  siblingsAt(index: number, size: number): Hex[] {
    this.checkSize(size);
    if (!Number.isSafeInteger(index) || index < 0 || index >= size) {
      throw new RangeError(`output ${index} is not in a tree of ${size} outputs`);
    }
    const siblings: Hex[] = [];
    let position = index;
    for (let height = 0; height < LOG2_MAX_OUTPUTS; height++) {
      siblings.push(bytesToHex(this.node(height, position ^ 1, size)));
      position = Math.floor(position / 2);
    }
    return siblings;
  }

  private checkSize(size: number): number {
    if (!Number.isSafeInteger(size) || size < 0 || size > this.size) {
      throw new RangeError(`the tree holds ${this.size} outputs, not ${size}`);
    }
    return size;
  }

  /** The node at (height, position) of the tree whose leaves past `size` are pristine. */
  private node(height: number, position: number, size: number): Uint8Array {
    const span = 2 ** height;
    const start = position * span;
    if (start >= size) return PRISTINE[height] as Uint8Array;
    if (start + span <= size) return (this.full[height] as Uint8Array[])[position] as Uint8Array;
    if (size !== this.straddlingSize) {
      this.straddling = new Map();
      this.straddlingSize = size;
    }
    const key = `${height}/${position}`;
    let node = this.straddling.get(key);
    if (node === undefined) {
      node = nativeKeccak(this.node(height - 1, position * 2, size), this.node(height - 1, position * 2 + 1, size));
      this.straddling.set(key, node);
    }
    return node;
  }
}
