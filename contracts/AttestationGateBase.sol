// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {Attestation, AttestationNotice, Revocation} from "./AttestationNotice.sol";
import {Freshness} from "./Freshness.sol";

/// @title AttestationGateBase: what the v1 and v2 gates share, given a proven notice and its place in the
/// rollup's history (v1: the input index; v2: the output index, which grows with the inputs).
/// @notice Keeps, per owner and schema, the latest attested bucket so that other contracts can gate on it:
/// `hasBucket`, `hasFreshBucket` for a minimum freshness, `hasBucketByAttestors` for a minimum number of
/// distinct TLS attestors that proved it. Revocation notices withdraw it.
/// @dev The notice is the dapp's UTF-8 JSON. Parsing JSON on chain is costly and error-prone, so the caller
/// passes the fields and the contract rebuilds the exact notice bytes from them: if the proof holds for those
/// bytes, every field is authentic. Only the bucket (a label) is ever public; the value stays sealed.
abstract contract AttestationGateBase {
    struct Record {
        bytes32 claimId;
        /// Where the attestation stands in the rollup's history (v1: its input index; v2: its output index):
        /// later attestations win, replays of older ones don't.
        uint256 order;
        string field;
        string bucket;
        /// The first TLS attestor that proved the value (zero when only the api vouched for it).
        address attestor;
        /// How many distinct TLS attestors proved it (0 for an unproven attestation).
        uint16 attestorCount;
        /// The attestation's time (its input's block time), from which its freshness decays.
        uint64 timestamp;
        /// When it expires (zero: never).
        uint64 expiresAt;
        /// Its schema's freshness half-life in seconds.
        uint64 halfLife;
    }

    mapping(address owner => mapping(bytes32 schemaId => Record)) private latest;

    /// @notice When the rollup revoked an attestation (zero while it stands), whether or not it is recorded here:
    /// a revocation may be brought before its attestation.
    mapping(bytes32 claimId => uint64) public revokedAt;

    event AttestationRecorded(address indexed owner, bytes32 indexed schemaId, bytes32 claimId, uint256 order, string field, string bucket);
    event AttestationRevoked(address indexed owner, bytes32 indexed schemaId, bytes32 claimId, uint64 revokedAt);

    /// An attestation for this owner and schema from the same or a later place in the history is already recorded.
    error NotNewer(uint256 recorded, uint256 offered);
    /// This attestation's revocation is already recorded.
    error AlreadyRevoked(bytes32 claimId);
    /// `recordMany` and `revokeMany` take one proof per notice.
    error LengthMismatch(uint256 notices, uint256 proofs);

    /// Whether an attestation at `order` would be news for its owner and schema (what `recordMany` skips).
    function _isNewer(Attestation calldata a, uint256 order) internal view returns (bool) {
        Record storage current = latest[a.owner][a.schemaId];
        return current.claimId == bytes32(0) || current.order < order;
    }

    /// Stores an attestation whose notice the caller has just proven; reverts NotNewer when it is not news.
    function _store(Attestation calldata a, uint256 order) internal {
        Record storage current = latest[a.owner][a.schemaId];
        if (current.claimId != bytes32(0) && current.order >= order) revert NotNewer(current.order, order);
        current.claimId = a.claimId;
        current.order = order;
        current.field = a.field;
        current.bucket = a.bucket;
        current.attestor = a.attestors.length == 0 ? address(0) : a.attestors[0];
        current.attestorCount = uint16(a.attestors.length);
        current.timestamp = a.timestamp;
        current.expiresAt = a.expiresAt;
        current.halfLife = a.halfLife;
        emit AttestationRecorded(a.owner, a.schemaId, a.claimId, order, a.field, a.bucket);
    }

    /// Stores a revocation whose notice the caller has just proven; reverts AlreadyRevoked the second time.
    function _storeRevocation(Revocation calldata r) internal {
        if (revokedAt[r.claimId] != 0) revert AlreadyRevoked(r.claimId);
        revokedAt[r.claimId] = r.revokedAt;
        emit AttestationRevoked(r.owner, r.schemaId, r.claimId, r.revokedAt);
    }

    /// @notice The latest verified attestation of `owner` for `schemaId` (claimId zero when none), revoked or
    /// expired ones included: `hasBucket` says whether it still stands.
    function attestationOf(address owner, bytes32 schemaId) external view returns (Record memory) {
        return latest[owner][schemaId];
    }

    /// @notice Whether the latest verified attestation of `owner` for `schemaId` stands (neither revoked nor
    /// expired) and puts `field` in `bucket`.
    function hasBucket(address owner, bytes32 schemaId, string calldata field, string calldata bucket) public view returns (bool) {
        Record storage current = latest[owner][schemaId];
        return _stands(current) && _same(current.field, field) && _same(current.bucket, bucket);
    }

    /// @notice `hasBucket`, and at least `minAttestors` distinct TLS attestors proved it (a quorum's notice
    /// lists them all; the dapp refuses a repeated one).
    function hasBucketByAttestors(address owner, bytes32 schemaId, string calldata field, string calldata bucket, uint256 minAttestors)
        external
        view
        returns (bool)
    {
        return hasBucket(owner, schemaId, field, bucket) && latest[owner][schemaId].attestorCount >= minAttestors;
    }

    /// @notice Whether the latest verified attestation of `owner` for `schemaId` stands and is at least
    /// `minFreshnessWad` fresh (1e18 = 1; freshness = 2^(-age / halfLife)). Reverts `InvalidMinFreshness`
    /// outside (0, 1e18].
    function isFresh(address owner, bytes32 schemaId, uint256 minFreshnessWad) public view returns (bool) {
        Freshness.check(minFreshnessWad);
        Record storage current = latest[owner][schemaId];
        return _stands(current) && Freshness.atLeast(current.timestamp, current.halfLife, minFreshnessWad);
    }

    /// @notice `hasBucket` and `isFresh` together.
    function hasFreshBucket(address owner, bytes32 schemaId, string calldata field, string calldata bucket, uint256 minFreshnessWad)
        external
        view
        returns (bool)
    {
        return isFresh(owner, schemaId, minFreshnessWad) && hasBucket(owner, schemaId, field, bucket);
    }

    /// @notice The exact notice the dapp emits for such an attestation.
    function attestationNotice(Attestation calldata a) public pure returns (bytes memory) {
        return AttestationNotice.encode(a);
    }

    /// @notice The exact notice the dapp emits for such a revocation.
    function revocationNotice(Revocation calldata r) public pure returns (bytes memory) {
        return AttestationNotice.encodeRevocation(r);
    }

    function _stands(Record storage r) private view returns (bool) {
        return r.claimId != bytes32(0) && revokedAt[r.claimId] == 0 && (r.expiresAt == 0 || block.timestamp < r.expiresAt);
    }

    function _same(string storage a, string calldata b) private pure returns (bool) {
        return keccak256(bytes(a)) == keccak256(bytes(b));
    }
}
