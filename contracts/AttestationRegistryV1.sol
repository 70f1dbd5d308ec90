// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {ICartesiDApp, Proof} from "@cartesi/rollups/contracts/dapp/ICartesiDApp.sol";
import {Attestation, AttestationNotice, Revocation} from "./AttestationNotice.sol";
import {AttestationRegistry} from "./AttestationRegistry.sol";

/// @title AttestationRegistryV1: AttestationRegistry for an application on Cartesi Rollups v1.
/// @notice `record` and `revoke` take a notice's fields and its v1 proof (GET /api/core/attestation/:id/proof
/// and /api/core/attestation/:id/revocation/proof); the CartesiDApp checks the rebuilt notice against the
/// claimed epoch, reverting with its own error when the proof does not hold.
contract AttestationRegistryV1 is AttestationRegistry {
    ICartesiDApp public immutable application;

    constructor(ICartesiDApp _application) {
        application = _application;
    }

    /// @notice Verifies an `attestation:created` notice with its proof and records the attestation.
    function record(Attestation calldata a, Proof calldata proof) external {
        application.validateNotice(AttestationNotice.encode(a), proof);
        _record(a);
    }

    /// @notice Verifies an `attestation:revoked` notice with its proof and records the revocation.
    function revoke(Revocation calldata r, Proof calldata proof) external {
        application.validateNotice(AttestationNotice.encodeRevocation(r), proof);
        _revoke(r);
    }

    /// @notice `record` for each, skipping (not reverting on) one already recorded here: a publisher's batch is
    /// never lost to one notice someone else brought first. Returns how many it recorded.
    function recordMany(Attestation[] calldata list, Proof[] calldata proofs) external returns (uint256 recorded) {
        if (list.length != proofs.length) revert LengthMismatch(list.length, proofs.length);
        for (uint256 i; i < list.length; i++) {
            if (_isRecorded(list[i].claimId)) continue;
            application.validateNotice(AttestationNotice.encode(list[i]), proofs[i]);
            _record(list[i]);
            recorded++;
        }
    }

    /// @notice `revoke` for each, skipping one already recorded here. Returns how many it recorded.
    function revokeMany(Revocation[] calldata list, Proof[] calldata proofs) external returns (uint256 recorded) {
        if (list.length != proofs.length) revert LengthMismatch(list.length, proofs.length);
        for (uint256 i; i < list.length; i++) {
            if (revocationOf(list[i].claimId) != 0) continue;
            application.validateNotice(AttestationNotice.encodeRevocation(list[i]), proofs[i]);
            _revoke(list[i]);
            recorded++;
        }
    }
}
