// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {Attestation, Revocation} from "./AttestationNotice.sol";
import {IApplicationOutputs, OutputValidityProof, noticeOutput} from "./ApplicationOutputs.sol";
import {AttestationGateBase} from "./AttestationGateBase.sol";

/// @title AttestationGateV2: AttestationGate for an application on Cartesi Rollups v2.
/// @notice Anyone may bring an attestation's notice fields and the v2 proof the api serves (GET
/// /api/core/attestation/:id/proof on a v2 stack); the Application checks the output `Notice(notice)`
/// against the outputs Merkle roots its Authority accepted, and the gate keeps the latest attested bucket per
/// owner and schema (AttestationGateBase). `recordMany` and `revokeMany` skip what is already here.
/// @dev A v2 output's index grows with the inputs that made it (outputs are numbered across the
/// application's history), so it orders attestations as the input index does for the v1 gate.
contract AttestationGateV2 is AttestationGateBase {
    IApplicationOutputs public immutable application;

    constructor(IApplicationOutputs _application) {
        application = _application;
    }

    /// @notice Verifies an attestation notice with its v2 proof and records its bucket for (owner, schemaId).
    /// Reverts with the application's error when the proof does not hold for these fields.
    function record(Attestation calldata a, OutputValidityProof calldata proof) external {
        application.validateOutput(attestationOutput(a), proof);
        _store(a, proof.outputIndex);
    }

    /// @notice Verifies a revocation notice with its v2 proof and marks its attestation revoked, whether that
    /// attestation is recorded here already, later or never.
    function revoke(Revocation calldata r, OutputValidityProof calldata proof) external {
        application.validateOutput(revocationOutput(r), proof);
        _storeRevocation(r);
    }

    /// @notice `record` for each, skipping (not reverting on) one that is not news here; returns how many it recorded.
    function recordMany(Attestation[] calldata list, OutputValidityProof[] calldata proofs) external returns (uint256 recorded) {
        if (list.length != proofs.length) revert LengthMismatch(list.length, proofs.length);
        for (uint256 i; i < list.length; i++) {
            if (!_isNewer(list[i], proofs[i].outputIndex)) continue;
            application.validateOutput(attestationOutput(list[i]), proofs[i]);
            _store(list[i], proofs[i].outputIndex);
            recorded++;
        }
    }

    /// @notice `revoke` for each, skipping one already revoked here; returns how many it recorded.
    function revokeMany(Revocation[] calldata list, OutputValidityProof[] calldata proofs) external returns (uint256 recorded) {
        if (list.length != proofs.length) revert LengthMismatch(list.length, proofs.length);
        for (uint256 i; i < list.length; i++) {
            if (revokedAt[list[i].claimId] != 0) continue;
            application.validateOutput(revocationOutput(list[i]), proofs[i]);
            _storeRevocation(list[i]);
            recorded++;
        }
    }

    /// @notice The v2 output of such an attestation's notice: the call `Notice(notice)` (Outputs.Notice).
    function attestationOutput(Attestation calldata a) public pure returns (bytes memory) {
        return noticeOutput(attestationNotice(a));
    }

    /// @notice The v2 output of such a revocation's notice.
    function revocationOutput(Revocation calldata r) public pure returns (bytes memory) {
        return noticeOutput(revocationNotice(r));
    }
}
