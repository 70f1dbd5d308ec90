// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {IApplicationOutputs, OutputValidityProof, noticeOutput} from "./ApplicationOutputs.sol";
import {AttestationBatch} from "./AttestationBatch.sol";
import {AttestationStore} from "./AttestationStore.sol";

/// @title AttestationRegistryV2: the attestation store for an application on Cartesi Rollups v2.
/// @notice `record` takes an input's batch notice and its v2 proof (GET /api/core/attestation/:id/batch on a
/// v2 stack); the Application checks the output `Notice(notice)` against the outputs Merkle roots its
/// consensus accepted, and every attestation and revocation in it is recorded at once.
contract AttestationRegistryV2 is AttestationStore {
    IApplicationOutputs public immutable application;

    constructor(IApplicationOutputs _application) {
        application = _application;
    }

    /// @notice Verifies a batch notice (as a v2 output) with its proof and records what it holds. Reverts
    /// BatchAlreadyRecorded the second time, ProofRejected when the proof does not hold for these bytes.
    function record(bytes calldata notice, OutputValidityProof calldata proof) external returns (uint256 attestations, uint256 revocations) {
        _prove(notice, proof);
        return _record(notice);
    }

    /// @notice `record` for each, skipping (not reverting on) a batch already recorded here once its proof holds,
    /// with `BatchSkipped(inputIndex)`; a forged notice reverts ProofRejected as in `record`. Returns how many
    /// items it recorded.
    function recordMany(bytes[] calldata notices, OutputValidityProof[] calldata proofs) external returns (uint256 recorded) {
        if (notices.length != proofs.length) revert LengthMismatch(notices.length, proofs.length);
        for (uint256 i; i < notices.length; i++) {
            // Proven first: a notice that names a recorded input is a duplicate only if the rollup made it.
            _prove(notices[i], proofs[i]);
            uint64 inputIndex = AttestationBatch.inputIndexOf(notices[i]);
            if (isBatchRecorded(inputIndex)) {
                emit BatchSkipped(inputIndex);
                continue;
            }
            (uint256 attestations, uint256 revocations) = _record(notices[i]);
            recorded += attestations + revocations;
        }
    }

    /// @notice The stateless check: attestation `at` of a proven batch notice, its id and whether it is valid
    /// as `isAttestationValid` would say once recorded (not expired; not revoked, as far as the revocations
    /// recorded here tell: a revocation is news only a later notice brings). Stores nothing.
    function checkAttestation(bytes calldata notice, OutputValidityProof calldata proof, uint256 at) external view returns (bytes32 uid, bool valid) {
        _prove(notice, proof);
        return _check(notice, at);
    }

    function _prove(bytes calldata notice, OutputValidityProof calldata proof) private view {
        try application.validateOutput(noticeOutput(notice), proof) {} catch (bytes memory reason) {
            revert ProofRejected(AttestationBatch.inputIndexOf(notice), reason);
        }
    }
}
