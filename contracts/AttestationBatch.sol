// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

/// @title AttestationBatch: the dapp's binary notice of one input's attestations and revocations.
/// @notice Beside its JSON notices, the dapp emits one such notice for every input that made or revoked an
/// attestation a contract can hold (common/attestation-batch.ts writes it; docs/eas.md has the layout). One
/// proof of this notice proves every item in it, and nothing in it is text to format or parse on chain:
/// packed big-endian fields, read here straight from calldata.
///
///     tag bytes4 | inputIndex uint64 | time uint64 | sender address | kindCount uint8 | kinds
///     | createdCount uint16 | created (item uint16, owner address, kind uint8)
///     | revokedCount uint16 | revoked (uid bytes32, owner address, schemaId bytes32)
///
/// A kind is what attestations of one input share: schemaId bytes32 | halfLife uint64 | validity uint64 |
/// flags uint8 | provider, field and bucket (each a uint16 length and its UTF-8 bytes) | attestorCount uint8 |
/// attestors. `flags` bit 0 (UNIQUE_PER_ACCOUNT): the schema is unique per account, so the rollup checked each
/// attestation's nullifier and bound its provider account to its owner; every other bit is zero.
/// `item` is the attestation's place in a batch input, LONE for an input that was the attestation alone:
/// with the input's index it gives the attestation's id, as the dapp computes it (common/ids.ts).
library AttestationBatch {
    /// The first four bytes of every such notice: no JSON notice starts with them. "/2" since kinds carry
    /// `flags` (issue 52): a notice of "/1" has no such byte, so it is refused whole rather than read askew.
    bytes4 internal constant TAG = bytes4(keccak256("AttestationBatch/2"));
    /// `flags` bit 0: the kind's schema is unique per account.
    uint8 internal constant UNIQUE_PER_ACCOUNT = 1;
    /// A kind's fixed part: schemaId, halfLife, validity, flags.
    uint256 private constant KIND_HEAD = 49;
    /// `item` of an attestation that was its input's only write (its id has no item).
    uint16 internal constant LONE = type(uint16).max;
    uint256 internal constant CREATED_SIZE = 23;
    uint256 internal constant REVOKED_SIZE = 84;

    /// The notice ends early, runs past its counts, or does not start with TAG.
    error MalformedBatch(uint256 at);

    /// Where the parts of a notice start, found once by walking its kinds.
    struct Layout {
        uint64 inputIndex;
        uint64 time;
        address sender;
        /// The offset of each kind.
        uint256[] kinds;
        uint256 created;
        uint256 createdCount;
        uint256 revoked;
        uint256 revokedCount;
    }

    /// A kind's fields; the strings and the attestors stay in calldata.
    struct Kind {
        bytes32 schemaId;
        uint64 halfLife;
        uint64 validity;
        bool uniquePerAccount;
        bytes provider;
        bytes field;
        bytes bucket;
        address[] attestors;
    }

    /// The input a notice speaks for (what a replay check needs, without walking the rest).
    function inputIndexOf(bytes calldata notice) internal pure returns (uint64) {
        _need(notice, 0, 12);
        return uint64(bytes8(notice[4:12]));
    }

    /// Checks the tag and every length, and finds where each part starts.
    function layout(bytes calldata notice) internal pure returns (Layout memory l) {
        _need(notice, 0, 41);
        if (bytes4(notice[0:4]) != TAG) revert MalformedBatch(0);
        l.inputIndex = uint64(bytes8(notice[4:12]));
        l.time = uint64(bytes8(notice[12:20]));
        l.sender = address(bytes20(notice[20:40]));
        uint256 kindCount = uint8(notice[40]);
        l.kinds = new uint256[](kindCount);
        uint256 at = 41;
        for (uint256 k; k < kindCount; k++) {
            l.kinds[k] = at;
            at = _kindEnd(notice, at);
        }
        _need(notice, at, 2);
        l.createdCount = uint16(bytes2(notice[at:at + 2]));
        l.created = at + 2;
        at = l.created + l.createdCount * CREATED_SIZE;
        _need(notice, at, 2);
        l.revokedCount = uint16(bytes2(notice[at:at + 2]));
        l.revoked = at + 2;
        at = l.revoked + l.revokedCount * REVOKED_SIZE;
        if (at != notice.length) revert MalformedBatch(at);
    }

    /// The bytes of kind `k` (what identifies it, with the notice's sender).
    function kindBytes(bytes calldata notice, Layout memory l, uint256 k) internal pure returns (bytes calldata) {
        uint256 start = l.kinds[k];
        return notice[start:_kindEnd(notice, start)];
    }

    function kindAt(bytes calldata notice, uint256 at) internal pure returns (Kind memory kind) {
        kind.schemaId = bytes32(notice[at:at + 32]);
        kind.halfLife = uint64(bytes8(notice[at + 32:at + 40]));
        kind.validity = uint64(bytes8(notice[at + 40:at + 48]));
        kind.uniquePerAccount = uint8(notice[at + 48]) & UNIQUE_PER_ACCOUNT != 0;
        at += KIND_HEAD;
        (kind.provider, at) = _text(notice, at);
        (kind.field, at) = _text(notice, at);
        (kind.bucket, at) = _text(notice, at);
        uint256 count = uint8(notice[at]);
        kind.attestors = new address[](count);
        for (uint256 i; i < count; i++) kind.attestors[i] = address(bytes20(notice[at + 1 + 20 * i:at + 21 + 20 * i]));
    }

    /// The `i`th attestation made (i < createdCount): its place in the input, its owner, and its kind's place
    /// in the notice. One calldata word holds all three (`layout` checked that the items lie in the notice).
    function createdAt(bytes calldata notice, Layout memory l, uint256 i) internal pure returns (uint16 item, address owner, uint8 kind) {
        uint256 at = l.created + i * CREATED_SIZE;
        uint256 word;
        assembly ("memory-safe") {
            word := calldataload(add(notice.offset, at))
        }
        item = uint16(word >> 240);
        owner = address(uint160(word >> 80));
        kind = uint8(word >> 72);
        if (kind >= l.kinds.length) revert MalformedBatch(at + 22);
    }

    /// The `i`th revocation: the revoked attestation's id, owner and schema.
    function revokedAt(bytes calldata notice, Layout memory l, uint256 i) internal pure returns (bytes32 uid, address owner, bytes32 schemaId) {
        uint256 at = l.revoked + i * REVOKED_SIZE;
        uid = bytes32(notice[at:at + 32]);
        owner = address(bytes20(notice[at + 32:at + 52]));
        schemaId = bytes32(notice[at + 52:at + 84]);
    }

    /// The attestation's id, as the dapp computes it: keccak256(abi.encode("create_attestation", input[, item])).
    function uidOf(uint64 inputIndex, uint16 item) internal pure returns (bytes32) {
        if (item == LONE) return keccak256(abi.encode("create_attestation", uint256(inputIndex)));
        return keccak256(abi.encode("create_attestation", uint256(inputIndex), uint256(item)));
    }

    /// What the ids of a batch input's items share: abi.encode("create_attestation", inputIndex, item) is
    /// built once, and `itemId` writes each item into it before hashing.
    function itemIds(uint64 inputIndex) internal pure returns (bytes memory preimage) {
        preimage = abi.encode("create_attestation", uint256(inputIndex), uint256(0));
    }

    /// uidOf(inputIndex, item) for an item of a batch input, from `itemIds(inputIndex)`.
    function itemId(bytes memory preimage, uint16 item) internal pure returns (bytes32 uid) {
        assembly ("memory-safe") {
            // The preimage's words: the string's offset, inputIndex, item, the string.
            mstore(add(preimage, 0x60), and(item, 0xffff))
            uid := keccak256(add(preimage, 0x20), mload(preimage))
        }
    }

    function _kindEnd(bytes calldata notice, uint256 at) private pure returns (uint256) {
        _need(notice, at, KIND_HEAD);
        // A flag this contract does not know would be a meaning it silently drops: such a notice is not of this format.
        if (uint8(notice[at + 48]) & ~UNIQUE_PER_ACCOUNT != 0) revert MalformedBatch(at + 48);
        at += KIND_HEAD;
        for (uint256 s; s < 3; s++) {
            _need(notice, at, 2);
            // Widened before the sum: 2 + a length of 0xfffe or more overflows 16 bits.
            at += 2 + uint256(uint16(bytes2(notice[at:at + 2])));
        }
        _need(notice, at, 1);
        at += 1 + 20 * uint256(uint8(notice[at]));
        _need(notice, at, 0);
        return at;
    }

    function _text(bytes calldata notice, uint256 at) private pure returns (bytes calldata text, uint256 next) {
        next = at + 2 + uint256(uint16(bytes2(notice[at:at + 2])));
        text = notice[at + 2:next];
    }

    function _need(bytes calldata notice, uint256 at, uint256 size) private pure {
        if (at + size > notice.length) revert MalformedBatch(at);
    }
}
