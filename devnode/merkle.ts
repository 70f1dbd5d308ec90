/**
 * Merkle trees over a Cartesi machine's memory, as the v1 contracts check them (`MerkleV2` in
 * @cartesi/util) and a host-mode v1 node builds them: a node's hash is keccak256(left ‖ right), and a
 * range nobody wrote holds a "pristine" subtree (the hash of zero bytes, doubled up level by level).
 * Only the written prefix of a tree is stored; everything past it is pristine, so a tree of 2^32 leaves
 * with a few thousand written costs a few thousand hashes.
 */
import { nativeKeccak } from "../common/native-keccak.ts";

export type Hash = Uint8Array;

/** Native keccak256 (common/native-keccak.ts): an epoch of 5,000 single-notice inputs costs ~125,000 hashes. */
export function keccak(data: Uint8Array): Hash {
  return nativeKeccak(data);
}

export function hashPair(left: Hash, right: Hash): Hash {
  return nativeKeccak(left, right);
}

/** pristine[k]: the hash of an all-zero subtree `k` levels above a zero leaf whose hash is `zeroLeaf`. */
export function pristineHashes(zeroLeaf: Hash, height: number): Hash[] {
  const hashes = [zeroLeaf];
  for (let k = 1; k <= height; k++) {
    const below = hashes[k - 1] as Hash;
    hashes.push(hashPair(below, below));
  }
  return hashes;
}

/** A position outside the tree, or a leaf the tree was not built with. */
export class MerkleIndexError extends RangeError {
  override readonly name = "MerkleIndexError";
}

/**
 * A complete binary tree of `2^height` leaves whose first `leaves.length` leaves are given and whose
 * others are pristine. Levels are kept, so every proof is a read.
 */
export class SparseMerkleTree {
  /** levels[0] = the written leaves; levels[k] = the written nodes k levels up. */
  private readonly levels: Hash[][];

  constructor(
    leaves: readonly Hash[],
    readonly height: number,
    private readonly pristine: readonly Hash[],
  ) {
    if (pristine.length <= height) throw new MerkleIndexError(`pristine hashes for ${height} levels are needed`);
    if (leaves.length > 2 ** height) throw new MerkleIndexError(`${leaves.length} leaves do not fit a tree of height ${height}`);
    this.levels = [leaves.slice()];
    for (let k = 1; k <= height; k++) {
      const below = this.levels[k - 1] as Hash[];
      const level: Hash[] = [];
      for (let i = 0; i < below.length; i += 2) {
        level.push(hashPair(below[i] as Hash, below[i + 1] ?? (pristine[k - 1] as Hash)));
      }
      this.levels.push(level);
    }
  }

  get root(): Hash {
    return this.node(this.height, 0);
  }

  get leafCount(): number {
    return (this.levels[0] as Hash[]).length;
  }

  /** Sibling hashes from the leaf's own level up to just below the root, as MerkleV2 consumes them. */
  siblings(leafIndex: number): Hash[] {
    if (!Number.isInteger(leafIndex) || leafIndex < 0 || leafIndex >= 2 ** this.height) {
      throw new MerkleIndexError(`leaf ${leafIndex} is outside a tree of height ${this.height}`);
    }
    const out: Hash[] = [];
    let index = leafIndex;
    for (let k = 0; k < this.height; k++) {
      out.push(this.node(k, index ^ 1));
      index = Math.floor(index / 2);
    }
    return out;
  }

  private node(level: number, index: number): Hash {
    return (this.levels[level] as Hash[])[index] ?? (this.pristine[level] as Hash);
  }
}
