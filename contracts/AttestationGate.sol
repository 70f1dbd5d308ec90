// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {ICartesiDApp, Proof} from "@cartesi/rollups/contracts/dapp/ICartesiDApp.sol";
import {IConsensus} from "@cartesi/rollups/contracts/consensus/IConsensus.sol";
import {Attestation, Revocation} from "./AttestationNotice.sol";
import {AttestationGateBase} from "./AttestationGateBase.sol";

/// @title AttestationGate: an example consumer of the attestation rollup's notices, on Cartesi Rollups v1.
/// @notice Anyone may bring an attestation's notice and its v1 proof (GET /api/core/attestation/:id/proof);
/// the application contract checks the proof against the claimed epoch, and the gate keeps the latest
/// attested bucket per owner and schema (AttestationGateBase). `recordMany` and `revokeMany` take many at
/// once and skip what is already here (the publisher's batches), where `record` and `revoke` revert.
contract AttestationGate is AttestationGateBase {
    ICartesiDApp public immutable application;

    constructor(ICartesiDApp _application) {
        application = _application;
    }

    /// @notice Verifies an attestation notice with its proof and records its bucket for (owner, schemaId).
    /// Reverts with the application's error when the proof does not hold for these fields.
    function record(Attestation calldata a, Proof calldata proof) external {
        application.validateNotice(attestationNotice(a), proof);
        _store(a, _inputIndex(proof));
    }

    /// @notice Verifies a revocation notice with its proof and marks its attestation revoked, whether that
    /// attestation is recorded here already, later or never.
    function revoke(Revocation calldata r, Proof calldata proof) external {
        application.validateNotice(revocationNotice(r), proof);
        _storeRevocation(r);
    }

    /// @notice `record` for each, skipping (not reverting on) one that is not news here; returns how many it recorded.
    function recordMany(Attestation[] calldata list, Proof[] calldata proofs) external returns (uint256 recorded) {
        if (list.length != proofs.length) revert LengthMismatch(list.length, proofs.length);
        for (uint256 i; i < list.length; i++) {
            uint256 order = _inputIndex(proofs[i]);
            if (!_isNewer(list[i], order)) continue;
            application.validateNotice(attestationNotice(list[i]), proofs[i]);
            _store(list[i], order);
            recorded++;
        }
    }

    /// @notice `revoke` for each, skipping one already revoked here; returns how many it recorded.
    function revokeMany(Revocation[] calldata list, Proof[] calldata proofs) external returns (uint256 recorded) {
        if (list.length != proofs.length) revert LengthMismatch(list.length, proofs.length);
        for (uint256 i; i < list.length; i++) {
            if (revokedAt[list[i].claimId] != 0) continue;
            application.validateNotice(revocationNotice(list[i]), proofs[i]);
            _storeRevocation(list[i]);
            recorded++;
        }
    }

    /// The index of the proven notice's input: the claim's first input plus its place within the epoch.
    function _inputIndex(Proof calldata proof) private view returns (uint256) {
        (, uint256 firstInputIndex, ) = IConsensus(application.getConsensus()).getClaim(address(application), proof.context);
        return firstInputIndex + proof.validity.inputIndexWithinEpoch;
    }
}
