// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {ICartesiDApp, Proof} from "@cartesi/rollups/contracts/dapp/ICartesiDApp.sol";
import {IConsensus} from "@cartesi/rollups/contracts/consensus/IConsensus.sol";
import {Attestation, AttestationNotice, Revocation} from "./AttestationNotice.sol";
import {Freshness} from "./Freshness.sol";

/// @title AttestationGate: an example consumer of the attestation rollup's notices.
/// @notice Anyone may bring an attestation's notice and its v1 proof (GET /api/core/attestation/:id/proof);
/// the application contract checks the proof against the claimed epoch, and this contract keeps, per owner
/// and schema, the latest attested bucket so that other contracts can gate on it (`hasBucket`, and
/// `hasFreshBucket` for a minimum freshness). Revocation notices, brought the same way, withdraw it.
/// @dev The notice is the dapp's UTF-8 JSON. Parsing JSON on chain is costly and error-prone, so the caller
/// passes the fields and the contract rebuilds the exact notice bytes from them: if the proof holds for those
/// bytes, every field is authentic. Only the bucket (a label) is ever public; the value stays sealed.
contract AttestationGate {
    struct Record {
        bytes32 claimId;
        /// Index of the input that created the attestation: later attestations win, replays of older ones don't.
        uint256 inputIndex;
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

    ICartesiDApp public immutable application;

    mapping(address owner => mapping(bytes32 schemaId => Record)) private latest;

    /// @notice When the rollup revoked an attestation (zero while it stands), whether or not it is recorded here:
    /// a revocation may be brought before its attestation.
    mapping(bytes32 claimId => uint64) public revokedAt;

    event AttestationRecorded(address indexed owner, bytes32 indexed schemaId, bytes32 claimId, uint256 inputIndex, string field, string bucket);
    event AttestationRevoked(address indexed owner, bytes32 indexed schemaId, bytes32 claimId, uint64 revokedAt);

    /// An attestation for this owner and schema from the same or a later input is already recorded.
    error NotNewer(uint256 recorded, uint256 offered);
    /// This attestation's revocation is already recorded.
    error AlreadyRevoked(bytes32 claimId);

    constructor(ICartesiDApp _application) {
        application = _application;
    }

    /// @notice Verifies an attestation notice with its proof and records its bucket for (owner, schemaId).
    /// Reverts with the application's error when the proof does not hold for these fields.
    function record(Attestation calldata a, Proof calldata proof) external {
        application.validateNotice(attestationNotice(a), proof);
        (, uint256 firstInputIndex, ) = IConsensus(application.getConsensus()).getClaim(address(application), proof.context);
        uint256 inputIndex = firstInputIndex + proof.validity.inputIndexWithinEpoch;
        Record storage current = latest[a.owner][a.schemaId];
        if (current.claimId != bytes32(0) && current.inputIndex >= inputIndex) revert NotNewer(current.inputIndex, inputIndex);
        current.claimId = a.claimId;
        current.inputIndex = inputIndex;
        current.field = a.field;
        current.bucket = a.bucket;
        current.attestor = a.attestor;
        current.timestamp = a.timestamp;
        current.expiresAt = a.expiresAt;
        current.halfLife = a.halfLife;
        emit AttestationRecorded(a.owner, a.schemaId, a.claimId, inputIndex, a.field, a.bucket);
    }

    /// @notice Verifies a revocation notice with its proof and marks its attestation revoked, whether that
    /// attestation is recorded here already, later or never.
    function revoke(Revocation calldata r, Proof calldata proof) external {
        application.validateNotice(revocationNotice(r), proof);
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

    /// @notice The exact notice the dapp emits for such an attestation (one bucketed field, as the api makes them).
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
