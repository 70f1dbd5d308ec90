// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {ICartesiDApp, Proof} from "@cartesi/rollups/contracts/dapp/ICartesiDApp.sol";
import {IConsensus} from "@cartesi/rollups/contracts/consensus/IConsensus.sol";

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

    /// The fields of an `attestation:created` notice, as the dapp writes them.
    struct Attestation {
        bytes32 claimId;
        address owner;
        string provider;
        bytes32 schemaId;
        string field;
        string bucket;
        /// The TLS attestor named by the notice of a proven attestation; zero for an unproven one.
        address attestor;
    }

    ICartesiDApp public immutable application;

    mapping(address owner => mapping(bytes32 schemaId => Record)) private latest;

    event AttestationRecorded(address indexed owner, bytes32 indexed schemaId, bytes32 claimId, uint256 inputIndex, string field, string bucket);

    /// A text that JSON would escape cannot be rebuilt byte for byte (and no such label is expected).
    error UnsupportedText(string text);
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
        _plain(a.provider);
        _plain(a.field);
        _plain(a.bucket);
        return abi.encodePacked(
            abi.encodePacked('{"event":"attestation:created","data":{"claimId":"', _hex(abi.encodePacked(a.claimId))),
            abi.encodePacked('","owner":"', _hex(abi.encodePacked(a.owner)), '","provider":"', a.provider),
            abi.encodePacked('","schema_id":"', _hex(abi.encodePacked(a.schemaId)), '","bucket_values":{"'),
            abi.encodePacked(a.field, '":"', a.bucket, '"}'),
            // A proven attestation's notice names its attestor after the buckets; an unproven one does not.
            a.attestor == address(0) ? bytes("") : abi.encodePacked(',"attestor":"', _hex(abi.encodePacked(a.attestor)), '"'),
            "}}"
        );
    }

    function _plain(string calldata text) private pure {
        bytes calldata b = bytes(text);
        for (uint256 i; i < b.length; i++) {
            bytes1 c = b[i];
            if (c < 0x20 || c == '"' || c == "\\") revert UnsupportedText(text);
        }
    }

    /// Lower-case 0x hex, as the dapp writes ids and addresses.
    function _hex(bytes memory data) private pure returns (bytes memory out) {
        bytes16 digits = "0123456789abcdef";
        out = new bytes(2 + data.length * 2);
        out[0] = "0";
        out[1] = "x";
        for (uint256 i; i < data.length; i++) {
            out[2 + i * 2] = digits[uint8(data[i]) >> 4];
            out[3 + i * 2] = digits[uint8(data[i]) & 0x0f];
        }
    }

    function _same(string storage a, string calldata b) private pure returns (bool) {
        return keccak256(bytes(a)) == keccak256(bytes(b));
    }
}
