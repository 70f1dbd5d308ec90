// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {Attestation, AttestationNotice, Revocation} from "./AttestationNotice.sol";
import {IApplicationOutputs, OutputValidityProof, noticeOutput} from "./ApplicationOutputs.sol";
import {Freshness} from "./Freshness.sol";

/// @title AttestationGateV2: AttestationGate for an application on Cartesi Rollups v2.
/// @notice Anyone may bring an attestation's notice fields and the v2 proof the api serves (GET
/// /api/core/attestation/:id/proof on a v2 stack); the Application checks the output `Notice(notice)`
/// against the outputs Merkle roots its Authority accepted, and this contract keeps, per owner and schema,
/// the latest attested bucket so that other contracts can gate on it (`hasBucket`, and `hasFreshBucket` for
/// a minimum freshness). Revocation notices, brought the same way, withdraw it.
/// @dev A v2 output's index grows with the inputs that made it (outputs are numbered across the
/// application's history), so it orders attestations as the input index does for the v1 gate.
contract AttestationGateV2 {
    struct Record {
        bytes32 claimId;
        /// The notice's output index: later attestations win, replays of older ones don't.
        uint64 outputIndex;
        string field;
        string bucket;
        /// The TLS attestor that proved the value (zero when only the api vouched for it).
        address attestor;
        /// The attestation's time (its input's block time), from which its freshness decays.
        uint64 timestamp;
        /// When it expires (zero: never).
        uint64 expiresAt;
        /// Its schema's freshness half-life in seconds.
        uint64 halfLife;
    }

    IApplicationOutputs public immutable application;

    mapping(address owner => mapping(bytes32 schemaId => Record)) private latest;

    /// @notice When the rollup revoked an attestation (zero while it stands), whether or not it is recorded here:
    /// a revocation may be brought before its attestation.
    mapping(bytes32 claimId => uint64) public revokedAt;

    event AttestationRecorded(address indexed owner, bytes32 indexed schemaId, bytes32 claimId, uint64 outputIndex, string field, string bucket);
    event AttestationRevoked(address indexed owner, bytes32 indexed schemaId, bytes32 claimId, uint64 revokedAt);

    /// An attestation for this owner and schema from the same or a later output is already recorded.
    error NotNewer(uint64 recorded, uint64 offered);
    /// This attestation's revocation is already recorded.
    error AlreadyRevoked(bytes32 claimId);

    constructor(IApplicationOutputs _application) {
        application = _application;
    }

    /// @notice Verifies an attestation notice with its v2 proof and records its bucket for (owner, schemaId).
    /// Reverts with the application's error when the proof does not hold for these fields.
    function record(Attestation calldata a, OutputValidityProof calldata proof) external {
        application.validateOutput(attestationOutput(a), proof);
        Record storage current = latest[a.owner][a.schemaId];
        if (current.claimId != bytes32(0) && current.outputIndex >= proof.outputIndex) revert NotNewer(current.outputIndex, proof.outputIndex);
        current.claimId = a.claimId;
        current.outputIndex = proof.outputIndex;
        current.field = a.field;
        current.bucket = a.bucket;
        current.attestor = a.attestor;
        current.timestamp = a.timestamp;
        current.expiresAt = a.expiresAt;
        current.halfLife = a.halfLife;
        emit AttestationRecorded(a.owner, a.schemaId, a.claimId, proof.outputIndex, a.field, a.bucket);
    }

    /// @notice Verifies a revocation notice with its v2 proof and marks its attestation revoked, whether that
    /// attestation is recorded here already, later or never.
    function revoke(Revocation calldata r, OutputValidityProof calldata proof) external {
        application.validateOutput(revocationOutput(r), proof);
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
        return _stands(current) && keccak256(bytes(current.field)) == keccak256(bytes(field)) && keccak256(bytes(current.bucket)) == keccak256(bytes(bucket));
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

    /// @notice The v2 output of such an attestation's notice: the call `Notice(notice)` (Outputs.Notice).
    function attestationOutput(Attestation calldata a) public pure returns (bytes memory) {
        return noticeOutput(AttestationNotice.encode(a));
    }

    /// @notice The v2 output of such a revocation's notice.
    function revocationOutput(Revocation calldata r) public pure returns (bytes memory) {
        return noticeOutput(AttestationNotice.encodeRevocation(r));
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
}
