// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

/// @title GasProbe: what a consumer contract pays to call another contract's view (the bench's yardstick).
/// @notice `cost` makes the call as a consumer would, from inside a contract, and answers the gas it took:
/// the cold account and storage reads included, the consumer's own calldata not.
contract GasProbe {
    function cost(address target, bytes calldata data) external view returns (uint256 used, bool ok) {
        uint256 before = gasleft();
        (ok, ) = target.staticcall(data);
        used = before - gasleft();
    }
}
