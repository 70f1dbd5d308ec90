// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {ICartesiDApp, Proof} from "@cartesi/rollups/contracts/dapp/ICartesiDApp.sol";
import {IConsensus} from "@cartesi/rollups/contracts/consensus/IConsensus.sol";
import {Attestation, AttestationNotice} from "./AttestationNotice.sol";

/// @title AttestationGate: an example consumer of the attestation rollup's notices.
/// @notice Anyone may bring an attestation's notice and its v1 proof (GET /api/core/attestation/:id/proof);
/// the application contract checks the proof against the claimed epoch, and this contract keeps, per owner
/// and schema, the latest attested bucket so that other contracts can gate on it (`hasBucket`).
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
    }

    ICartesiDApp public immutable application;

    mapping(address owner => mapping(bytes32 schemaId => Record)) private latest;

    event AttestationRecorded(address indexed owner, bytes32 indexed schemaId, bytes32 claimId, uint256 inputIndex, string field, string bucket);

    /// An attestation for this owner and schema from the same or a later input is already recorded.
    error NotNewer(uint256 recorded, uint256 offered);

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
        latest[a.owner][a.schemaId] = Record(a.claimId, inputIndex, a.field, a.bucket, a.attestor);
        emit AttestationRecorded(a.owner, a.schemaId, a.claimId, inputIndex, a.field, a.bucket);
    }

    /// @notice The latest verified attestation of `owner` for `schemaId` (claimId zero when none).
    function attestationOf(address owner, bytes32 schemaId) external view returns (Record memory) {
        return latest[owner][schemaId];
    }

    /// @notice Whether the latest verified attestation of `owner` for `schemaId` puts `field` in `bucket`.
    function hasBucket(address owner, bytes32 schemaId, string calldata field, string calldata bucket) external view returns (bool) {
        Record storage current = latest[owner][schemaId];
        return current.claimId != bytes32(0) && _same(current.field, field) && _same(current.bucket, bucket);
    }

    /// @notice The exact notice the dapp emits for such an attestation (one bucketed field, as the api makes them).
    function attestationNotice(Attestation calldata a) public pure returns (bytes memory) {
        return AttestationNotice.encode(a);
    }

    function _same(string storage a, string calldata b) private pure returns (bool) {
        return keccak256(bytes(a)) == keccak256(bytes(b));
    }
}
