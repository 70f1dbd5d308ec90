/**
 * The outputs of a closed epoch as a Cartesi Rollups v1 node commits to them, and the proofs that let
 * `CartesiDApp.validateNotice` / `executeVoucher` check one output against the claimed epoch hash.
 *
 * The shapes are the v1 contracts' (`LibOutputValidation`, `CanonicalMachine`, `OutputEncoding`) and the
 * construction is what a host-mode v1 node does (rollups-node v1.5.1 host-runner):
 * - each output is hashed as keccak256 of its ABI encoding (a notice: `abi.encode(bytes)`; a voucher:
 *   `abi.encode(address, bytes)`);
 * - an input's output hashes sit side by side in a 2^21-byte memory range (2^16 hashes) whose Merkle tree
 *   has 8-byte words as leaves; its root is the input's "output hashes root";
 * - the epoch's notices (and vouchers) tree has one 32-byte leaf per input of the epoch, in order: that
 *   input's output hashes root when it was accepted, 32 zero bytes when it was not; unused leaves are
 *   keccak256 of 32 zero bytes; 2^32 leaves in all;
 * - the epoch hash is keccak256(vouchersEpochRoot ‖ noticesEpochRoot ‖ machineStateHash). The devnode runs no
 *   machine, so its machine state hash is zero.
 */
import { bytesToHex, encodeAbiParameters, hexToBytes, type Address, type Hex } from "viem";
import type { OutputValidityProof } from "../../common/wire.ts";
import { hashPair, keccak, MerkleIndexError, pristineHashes, SparseMerkleTree, type Hash } from "../merkle.ts";

export { MerkleIndexError };

/** The outputs one input of the epoch produced (a rejected input's lists are ignored: it has none on chain). */
export interface EpochInputOutputs {
  /** ACCEPTED: its outputs count. Anything else (rejected, exception): its leaf is 32 zero bytes. */
  accepted: boolean;
  notices: readonly Hex[];
  vouchers: readonly { destination: Address; payload: Hex }[];
}

export type { OutputValidityProof };

export interface EpochProofs {
  readonly epochHash: Hex;
  readonly vouchersEpochRootHash: Hex;
  readonly noticesEpochRootHash: Hex;
  readonly machineStateHash: Hex;
  readonly inputCount: number;
  noticeProof(inputIndexWithinEpoch: number, noticeIndex: number): OutputValidityProof;
  voucherProof(inputIndexWithinEpoch: number, voucherIndex: number): OutputValidityProof;
}

/** CanonicalMachine (v1.4): 8-byte words, 32-byte hashes, 2^21-byte output hashes ranges, 2^37-byte epoch trees. */
const LOG2_WORD = 3;
const LOG2_HASH = 5;
const LOG2_OUTPUT_HASHES = 21;
const LOG2_EPOCH = 37;
/** Levels between a 32-byte leaf and the root of each tree. */
const OUTPUT_HASHES_HEIGHT = LOG2_OUTPUT_HASHES - LOG2_HASH; // 16: 65,536 outputs per input
const EPOCH_HEIGHT = LOG2_EPOCH - LOG2_HASH; // 32: 2^32 inputs per epoch
const WORDS_PER_HASH_LOG2 = LOG2_HASH - LOG2_WORD; // a 32-byte hash spans a 2-level tree of 4 words

export const ZERO_HASH: Hex = `0x${"00".repeat(32)}`;

/** Pristine hashes of a word-leaved tree, indexed from the word level (pristine[0] = keccak of 8 zero bytes). */
const WORD_PRISTINE = pristineHashes(keccak(new Uint8Array(1 << LOG2_WORD)), LOG2_OUTPUT_HASHES - LOG2_WORD);
/** The same, indexed from the 32-byte level: the pristine hashes of an output hashes tree. */
const OUTPUT_HASHES_PRISTINE = WORD_PRISTINE.slice(WORDS_PER_HASH_LOG2);
/** The epoch tree's leaves are hashes themselves; an unused one is keccak256 of 32 zero bytes. */
const EPOCH_PRISTINE = pristineHashes(keccak(new Uint8Array(32)), EPOCH_HEIGHT);

/** The root of the word tree over a 32-byte value (MerkleV2.getMerkleRootFromBytes(value, 5)). */
export function wordTreeRoot(value: Hash): Hash {
  let level: Hash[] = [];
  for (let offset = 0; offset < value.length; offset += 1 << LOG2_WORD) {
    level.push(keccak(value.subarray(offset, offset + (1 << LOG2_WORD))));
  }
  while (level.length > 1) {
    const up: Hash[] = [];
    for (let i = 0; i < level.length; i += 2) up.push(hashPair(level[i] as Hash, level[i + 1] as Hash));
    level = up;
  }
  return level[0] as Hash;
}

/** keccak256 of a notice's v1 encoding, `abi.encode(bytes)`. */
export function noticeHash(payload: Hex): Hash {
  return keccak(hexToBytes(encodeAbiParameters([{ type: "bytes" }], [payload])));
}

/** keccak256 of a voucher's v1 encoding, `abi.encode(address, bytes)`. */
export function voucherHash(destination: Address, payload: Hex): Hash {
  return keccak(hexToBytes(encodeAbiParameters([{ type: "address" }, { type: "bytes" }], [destination, payload])));
}

/** The output hashes tree of one input: leaf j is the word-tree root of output j's hash. */
function outputHashesTree(hashes: readonly Hash[]): SparseMerkleTree {
  if (hashes.length > 2 ** OUTPUT_HASHES_HEIGHT) {
    throw new MerkleIndexError(`an input holds at most ${2 ** OUTPUT_HASHES_HEIGHT} outputs of a kind, not ${hashes.length}`);
  }
  return new SparseMerkleTree(hashes.map(wordTreeRoot), OUTPUT_HASHES_HEIGHT, OUTPUT_HASHES_PRISTINE);
}

/** One kind of output (notices or vouchers) across the epoch: a tree per accepted input, and the epoch tree. */
class OutputsOfEpoch {
  readonly perInput: (SparseMerkleTree | undefined)[];
  readonly epoch: SparseMerkleTree;

  constructor(inputs: readonly EpochInputOutputs[], hashesOf: (input: EpochInputOutputs) => Hash[]) {
    this.perInput = inputs.map((input) => (input.accepted ? outputHashesTree(hashesOf(input)) : undefined));
    const leaves = this.perInput.map((tree) => tree?.root ?? new Uint8Array(32));
    this.epoch = new SparseMerkleTree(leaves, EPOCH_HEIGHT, EPOCH_PRISTINE);
  }
}

const hex = (hash: Hash): Hex => bytesToHex(hash);

/**
 * Builds the epoch's trees from its inputs' outputs, in input order. `machineStateHash` is zero on the
 * devnode (no machine runs on the host); a node that runs one passes the machine's root hash.
 */
export function buildEpochProofs(inputs: readonly EpochInputOutputs[], machineStateHash: Hex = ZERO_HASH): EpochProofs {
  if (inputs.length > 2 ** EPOCH_HEIGHT) throw new MerkleIndexError(`an epoch holds at most 2^${EPOCH_HEIGHT} inputs`);
  const machineState = hexToBytes(machineStateHash);
  if (machineState.length !== 32) throw new MerkleIndexError(`machineStateHash must be 32 bytes, not ${machineState.length}`);
  const notices = new OutputsOfEpoch(inputs, (input) => input.notices.map(noticeHash));
  const vouchers = new OutputsOfEpoch(inputs, (input) => input.vouchers.map((v) => voucherHash(v.destination, v.payload)));
  const noticesEpochRootHash = hex(notices.epoch.root);
  const vouchersEpochRootHash = hex(vouchers.epoch.root);
  const epochHash = hex(keccak(new Uint8Array([...vouchers.epoch.root, ...notices.epoch.root, ...machineState])));

  function proof(kind: "notice" | "voucher", outputs: OutputsOfEpoch, inputIndex: number, outputIndex: number) {
    if (!Number.isInteger(inputIndex) || inputIndex < 0 || inputIndex >= inputs.length) {
      throw new MerkleIndexError(`input ${inputIndex} is not in this epoch of ${inputs.length} input(s)`);
    }
    const tree = outputs.perInput[inputIndex];
    if (tree === undefined) throw new MerkleIndexError(`input ${inputIndex} of the epoch was not accepted: it has no ${kind}s`);
    if (!Number.isInteger(outputIndex) || outputIndex < 0 || outputIndex >= tree.leafCount) {
      throw new MerkleIndexError(`input ${inputIndex} of the epoch has no ${kind} ${outputIndex} (it has ${tree.leafCount})`);
    }
    return {
      inputIndexWithinEpoch: inputIndex,
      outputIndexWithinInput: outputIndex,
      outputHashesRootHash: hex(tree.root),
      vouchersEpochRootHash,
      noticesEpochRootHash,
      machineStateHash,
      outputHashInOutputHashesSiblings: tree.siblings(outputIndex).map(hex),
      outputHashesInEpochSiblings: outputs.epoch.siblings(inputIndex).map(hex),
    } satisfies OutputValidityProof;
  }

  return {
    epochHash,
    vouchersEpochRootHash,
    noticesEpochRootHash,
    machineStateHash,
    inputCount: inputs.length,
    noticeProof: (inputIndex, noticeIndex) => proof("notice", notices, inputIndex, noticeIndex),
    voucherProof: (inputIndex, voucherIndex) => proof("voucher", vouchers, inputIndex, voucherIndex),
  };
}

/**
 * The claim data `Authority.submitClaim` hands to `History.submitClaim`:
 * `abi.encode(address dapp, (bytes32 epochHash, uint128 firstIndex, uint128 lastIndex))`.
 */
export function encodeClaim(dapp: Address, epochHash: Hex, firstInputIndex: number, lastInputIndex: number): Hex {
  if (!Number.isSafeInteger(firstInputIndex) || !Number.isSafeInteger(lastInputIndex) || firstInputIndex < 0 || lastInputIndex < firstInputIndex) {
    throw new MerkleIndexError(`a claim covers inputs first..last with 0 <= first <= last, not ${firstInputIndex}..${lastInputIndex}`);
  }
  return encodeAbiParameters(
    [
      { type: "address" },
      {
        type: "tuple",
        components: [
          { name: "epochHash", type: "bytes32" },
          { name: "firstIndex", type: "uint128" },
          { name: "lastIndex", type: "uint128" },
        ],
      },
    ],
    [dapp, { epochHash, firstIndex: BigInt(firstInputIndex), lastIndex: BigInt(lastInputIndex) }],
  );
}

/**
 * The proof context `History.getClaim` decodes: `abi.encode(uint256 claimIndex)`. A v1 node claims only
 * epochs that hold inputs, so the n-th claimed epoch is claim n (the host-runner encodes its epoch index).
 */
export function encodeProofContext(claimIndex: number): Hex {
  if (!Number.isSafeInteger(claimIndex) || claimIndex < 0) throw new MerkleIndexError(`claim index ${claimIndex} is not a whole number >= 0`);
  return encodeAbiParameters([{ type: "uint256" }], [BigInt(claimIndex)]);
}

/** A proof as `CartesiDApp.validateNotice(notice, proof)` takes it through viem (common/notice-check.ts). */
export { v1ContractProof as contractProof } from "../../common/notice-check.ts";
