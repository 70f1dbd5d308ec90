// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

/// The proof of a Rollups v2 output (rollups-contracts 2.2.0, `OutputValidityProof`).
struct OutputValidityProof {
    uint64 outputIndex;
    bytes32[] outputHashesSiblings;
}

/// The part of a Rollups v2 Application (2.2.0) the v2 gate and registry call: it reverts unless the output
/// is in a tree whose root the application's consensus accepted.
interface IApplicationOutputs {
    function validateOutput(bytes calldata output, OutputValidityProof calldata proof) external view;
}

/// The v2 output of a notice: the call `Notice(notice)` (Outputs.Notice), what validateOutput checks.
function noticeOutput(bytes memory notice) pure returns (bytes memory) {
    return abi.encodeWithSelector(bytes4(keccak256("Notice(bytes)")), notice);
}
