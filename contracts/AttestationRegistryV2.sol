// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {Attestation, AttestationNotice, Revocation} from "./AttestationNotice.sol";
import {IApplicationOutputs, OutputValidityProof, noticeOutput} from "./ApplicationOutputs.sol";
import {AttestationRegistry} from "./AttestationRegistry.sol";

/// @title AttestationRegistryV2: AttestationRegistry for an application on Cartesi Rollups v2.
/// @notice `record` and `revoke` take a notice's fields and its v2 proof (GET /api/core/attestation/:id/proof
/// and /api/core/attestation/:id/revocation/proof on a v2 stack); the Application checks the output
/// `Notice(notice)` against the outputs Merkle roots its consensus accepted, reverting when it does not hold.
contract AttestationRegistryV2 is AttestationRegistry {
    IApplicationOutputs public immutable application;

    constructor(IApplicationOutputs _application) {
        application = _application;
    }

    /// @notice Verifies an `attestation:created` notice (as a v2 output) with its proof and records the attestation.
    function record(Attestation calldata a, OutputValidityProof calldata proof) external {
        application.validateOutput(noticeOutput(AttestationNotice.encode(a)), proof);
        _record(a);
    }

    /// @notice Verifies an `attestation:revoked` notice (as a v2 output) with its proof and records the revocation.
    function revoke(Revocation calldata r, OutputValidityProof calldata proof) external {
        application.validateOutput(noticeOutput(AttestationNotice.encodeRevocation(r)), proof);
        _revoke(r);
    }

    /// @notice `record` for each, skipping (not reverting on) one already recorded here: a publisher's batch is
    /// never lost to one notice someone else brought first. Returns how many it recorded.
    function recordMany(Attestation[] calldata list, OutputValidityProof[] calldata proofs) external returns (uint256 recorded) {
        if (list.length != proofs.length) revert LengthMismatch(list.length, proofs.length);
        for (uint256 i; i < list.length; i++) {
            if (_isRecorded(list[i].claimId)) continue;
            application.validateOutput(noticeOutput(AttestationNotice.encode(list[i])), proofs[i]);
            _record(list[i]);
            recorded++;
        }
    }

    /// @notice `revoke` for each, skipping one already recorded here. Returns how many it recorded.
    function revokeMany(Revocation[] calldata list, OutputValidityProof[] calldata proofs) external returns (uint256 recorded) {
        if (list.length != proofs.length) revert LengthMismatch(list.length, proofs.length);
        for (uint256 i; i < list.length; i++) {
            if (revocationOf(list[i].claimId) != 0) continue;
            application.validateOutput(noticeOutput(AttestationNotice.encodeRevocation(list[i])), proofs[i]);
            _revoke(list[i]);
            recorded++;
        }
    }
}
