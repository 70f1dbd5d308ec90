// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

/// @title IAttestationGate: the gate's face of the attestation store, for contracts that gate on a bucket.
/// @notice Per owner and schema, the newest attestation the store holds (the latest in the rollup's
/// history, whatever order its batches were brought in), and whether it stands: neither revoked nor expired.
interface IAttestationGate {
    /// A minimum freshness is a fraction in (0, 1], written in wad: from 1 to 1e18 (Freshness's own error,
    /// declared here so that a caller of the gate's face can read it).
    error InvalidMinFreshness(uint256 minFreshnessWad);

    struct Record {
        bytes32 claimId;
        /// Where the attestation stands in the rollup's history: the index of its input.
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

    /// @notice The newest attestation of `owner` for `schemaId` (claimId zero when none), revoked or expired
    /// ones included: `hasBucket` says whether it still stands.
    function attestationOf(address owner, bytes32 schemaId) external view returns (Record memory);

    /// @notice Whether the newest attestation of `owner` for `schemaId` stands and puts `field` in `bucket`.
    function hasBucket(address owner, bytes32 schemaId, string calldata field, string calldata bucket) external view returns (bool);

    /// @notice `hasBucket`, and at least `minAttestors` distinct TLS attestors proved it.
    function hasBucketByAttestors(address owner, bytes32 schemaId, string calldata field, string calldata bucket, uint256 minAttestors)
        external
        view
        returns (bool);

    /// @notice Whether the newest attestation of `owner` for `schemaId` stands and is at least
    /// `minFreshnessWad` fresh (1e18 = 1; freshness = 2^(-age / halfLife)). Reverts `InvalidMinFreshness`
    /// outside (0, 1e18].
    function isFresh(address owner, bytes32 schemaId, uint256 minFreshnessWad) external view returns (bool);

    /// @notice `hasBucket` and `isFresh` together.
    function hasFreshBucket(address owner, bytes32 schemaId, string calldata field, string calldata bucket, uint256 minFreshnessWad)
        external
        view
        returns (bool);

    /// @notice When the rollup revoked `claimId` (zero while it stands), as brought here, whether or not the
    /// attestation itself is: a revocation may be brought before its attestation.
    function revokedAt(bytes32 claimId) external view returns (uint64);
}
