// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {Attestation, AttestationNotice} from "./AttestationNotice.sol";

/// The proof of a Rollups v2 output (rollups-contracts 2.2.0, `OutputValidityProof`).
struct OutputValidityProof {
    uint64 outputIndex;
    bytes32[] outputHashesSiblings;
}

/// The part of a Rollups v2 Application (2.2.0) this gate calls: it reverts unless the output is in a
/// tree whose root the application's consensus accepted.
interface IApplicationOutputs {
    function validateOutput(bytes calldata output, OutputValidityProof calldata proof) external view;
}

/// @title AttestationGateV2: AttestationGate for an application on Cartesi Rollups v2.
/// @notice Anyone may bring an attestation's notice fields and the v2 proof the api serves (GET
/// /api/core/attestation/:id/proof on a v2 stack); the Application checks the output `Notice(notice)`
/// against the outputs Merkle roots its Authority accepted, and this contract keeps, per owner and schema,
/// the latest attested bucket so that other contracts can gate on it (`hasBucket`).
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
    }

    IApplicationOutputs public immutable application;

    mapping(address owner => mapping(bytes32 schemaId => Record)) private latest;

    event AttestationRecorded(address indexed owner, bytes32 indexed schemaId, bytes32 claimId, uint64 outputIndex, string field, string bucket);

    /// An attestation for this owner and schema from the same or a later output is already recorded.
    error NotNewer(uint64 recorded, uint64 offered);

    constructor(IApplicationOutputs _application) {
        application = _application;
    }

    /// @notice Verifies an attestation notice with its v2 proof and records its bucket for (owner, schemaId).
    /// Reverts with the application's error when the proof does not hold for these fields.
    function record(Attestation calldata a, OutputValidityProof calldata proof) external {
        application.validateOutput(attestationOutput(a), proof);
        Record storage current = latest[a.owner][a.schemaId];
        if (current.claimId != bytes32(0) && current.outputIndex >= proof.outputIndex) revert NotNewer(current.outputIndex, proof.outputIndex);
        latest[a.owner][a.schemaId] = Record(a.claimId, proof.outputIndex, a.field, a.bucket, a.attestor);
        emit AttestationRecorded(a.owner, a.schemaId, a.claimId, proof.outputIndex, a.field, a.bucket);
    }

    /// @notice The latest verified attestation of `owner` for `schemaId` (claimId zero when none).
    function attestationOf(address owner, bytes32 schemaId) external view returns (Record memory) {
        return latest[owner][schemaId];
    }

    /// @notice Whether the latest verified attestation of `owner` for `schemaId` puts `field` in `bucket`.
    function hasBucket(address owner, bytes32 schemaId, string calldata field, string calldata bucket) external view returns (bool) {
        Record storage current = latest[owner][schemaId];
        return current.claimId != bytes32(0) && keccak256(bytes(current.field)) == keccak256(bytes(field)) && keccak256(bytes(current.bucket)) == keccak256(bytes(bucket));
    }

    /// @notice The v2 output of such an attestation's notice: the call `Notice(notice)` (Outputs.Notice).
    function attestationOutput(Attestation calldata a) public pure returns (bytes memory) {
        return abi.encodeWithSelector(bytes4(keccak256("Notice(bytes)")), AttestationNotice.encode(a));
    }

    /// @notice The exact notice the dapp emits for such an attestation.
    function attestationNotice(Attestation calldata a) public pure returns (bytes memory) {
        return AttestationNotice.encode(a);
    }
}
