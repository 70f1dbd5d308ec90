// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {Attestation as EasAttestation} from "@ethereum-attestation-service/eas-contracts/contracts/Common.sol";
import {ISchemaRegistry, SchemaRecord} from "@ethereum-attestation-service/eas-contracts/contracts/ISchemaRegistry.sol";
import {ISchemaResolver} from "@ethereum-attestation-service/eas-contracts/contracts/resolver/ISchemaResolver.sol";
import {Attestation, Revocation} from "./AttestationNotice.sol";

/// @title AttestationRegistry: the rollup's attestations behind the read surface of EAS's IEAS.
/// @notice A contract written against IEAS (`getAttestation`, `isAttestationValid`, `getSchemaRegistry`) and
/// ISchemaRegistry (`getSchema`) reads attestations from here as it would from EAS. Nobody writes here freely:
/// an attestation appears once someone brings its `attestation:created` notice with the rollup's proof
/// (`record`), and a revocation once someone brings its `attestation:revoked` notice (`revoke`). The proof
/// check is the version's own: AttestationRegistryV1 (CartesiDApp.validateNotice) and AttestationRegistryV2
/// (Application.validateOutput).
/// @dev Where it differs from EAS: `isAttestationValid` is also false for a revoked or expired attestation
/// (EAS only says the uid exists); `refUID` is always zero; the write functions of IEAS are not offered.
abstract contract AttestationRegistry {
    /// @notice What `data` holds (EAS's schema syntax): abi.encode of these, in this order. `attestor` is the
    /// first of `attestors` (zero for an unproven attestation); `attestors` lists every TLS attestor that proved
    /// it, distinct, and came last so that a consumer decoding the first five fields reads them as before.
    string public constant DATA_SCHEMA = "string provider,string field,string bucket,address attestor,uint64 halfLife,address[] attestors";

    /// EAS's events, with the same signatures and indexed fields, so EAS indexers read these too.
    event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID);
    event Revoked(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID);

    /// This attestation is already recorded (an attestation is recorded once; its notice cannot change).
    error AlreadyRecorded(bytes32 uid);
    /// This attestation's revocation is already recorded.
    error AlreadyRevoked(bytes32 uid);
    /// `recordMany` and `revokeMany` take one proof per notice.
    error LengthMismatch(uint256 notices, uint256 proofs);

    mapping(bytes32 uid => EasAttestation) private attestations;
    /// Revocations seen, by uid: kept apart so that a revocation brought before its attestation still counts.
    mapping(bytes32 uid => uint64) private revocationTimes;
    /// Schemas of the attestations and revocations recorded here.
    mapping(bytes32 schema => bool) private schemasSeen;
    /// How many distinct TLS attestors proved each attestation recorded here.
    mapping(bytes32 uid => uint256) private attestorCounts;

    /// Stores an attestation whose notice the caller has just proven.
    function _record(Attestation calldata a) internal {
        EasAttestation storage stored = attestations[a.claimId];
        if (stored.uid != bytes32(0)) revert AlreadyRecorded(a.claimId);
        stored.uid = a.claimId;
        stored.schema = a.schemaId;
        stored.time = a.timestamp;
        stored.expirationTime = a.expiresAt;
        stored.revocationTime = revocationTimes[a.claimId];
        stored.recipient = a.owner;
        stored.attester = a.attester;
        // The rollup lets the attestation's attester, attestor, owner or an admin revoke it.
        stored.revocable = true;
        stored.data = abi.encode(a.provider, a.field, a.bucket, a.attestors.length == 0 ? address(0) : a.attestors[0], a.halfLife, a.attestors);
        attestorCounts[a.claimId] = a.attestors.length;
        schemasSeen[a.schemaId] = true;
        emit Attested(a.owner, a.attester, a.claimId, a.schemaId);
    }

    /// Stores a revocation whose notice the caller has just proven.
    function _revoke(Revocation calldata r) internal {
        if (revocationTimes[r.claimId] != 0) revert AlreadyRevoked(r.claimId);
        revocationTimes[r.claimId] = r.revokedAt;
        EasAttestation storage stored = attestations[r.claimId];
        if (stored.uid != bytes32(0)) stored.revocationTime = r.revokedAt;
        schemasSeen[r.schemaId] = true;
        // As EAS: the second indexed address of Revoked is the revoker.
        emit Revoked(r.owner, r.revoker, r.claimId, r.schemaId);
    }

    /// Whether the attestation `uid` is recorded here (what `recordMany` skips).
    function _isRecorded(bytes32 uid) internal view returns (bool) {
        return attestations[uid].uid != bytes32(0);
    }

    /// @notice When the rollup revoked `uid`, as recorded here (zero: no revocation recorded), whether or not
    /// the attestation itself is: what `revokeMany` skips, and what a publisher reads to know what is left to bring.
    function revocationOf(bytes32 uid) public view returns (uint64) {
        return revocationTimes[uid];
    }

    /// @notice How many distinct TLS attestors proved `uid` (0 for an unproven one or one not recorded here).
    function attestorCountOf(bytes32 uid) external view returns (uint256) {
        return attestorCounts[uid];
    }

    /// @notice `isAttestationValid`, and at least `minAttestors` distinct TLS attestors proved it.
    function isAttestationValidWith(bytes32 uid, uint256 minAttestors) external view returns (bool) {
        return isAttestationValid(uid) && attestorCounts[uid] >= minAttestors;
    }

    /// @notice IEAS.getAttestation: the attestation recorded under `uid`, all zero when none is.
    function getAttestation(bytes32 uid) external view returns (EasAttestation memory) {
        return attestations[uid];
    }

    /// @notice IEAS.isAttestationValid, stricter than EAS's: recorded here, not revoked, and not expired at this
    /// block's time (EAS's says only that the uid exists).
    function isAttestationValid(bytes32 uid) public view returns (bool) {
        EasAttestation storage stored = attestations[uid];
        return stored.uid != bytes32(0)
            && stored.revocationTime == 0
            && (stored.expirationTime == 0 || block.timestamp < stored.expirationTime);
    }

    /// @notice IEAS.getSchemaRegistry: this contract, which answers ISchemaRegistry.getSchema (not `register`).
    function getSchemaRegistry() external view returns (ISchemaRegistry) {
        return ISchemaRegistry(address(this));
    }

    /// @notice ISchemaRegistry.getSchema: for a schema of an attestation or revocation recorded here, its uid,
    /// no resolver, revocable, and DATA_SCHEMA; all zero for any other.
    function getSchema(bytes32 uid) external view returns (SchemaRecord memory record) {
        if (schemasSeen[uid]) record = SchemaRecord(uid, ISchemaResolver(address(0)), true, DATA_SCHEMA);
    }

    /// @notice ISemver.version.
    function version() external pure returns (string memory) {
        return "1.0.0";
    }
}
