// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

/// @title Freshness: whether an attestation is still fresh enough, its freshness halving every half-life.
/// @dev freshness = 2^(-age / halfLife), in (0, 1]. Raising 2 to a fractional power on chain is costly, so the
/// comparison is made in the log domain: 2^(-age/h) >= m  <=>  age <= h * log2(1/m)  <=>
/// age * 1e18 <= h * log2Wad(1e36 / m), with m in wad (1e18 = 1). Every rounding (the division, each squaring
/// of log2Wad) is downward, so an attestation on the edge reads as not fresh, never the other way.
library Freshness {
    uint256 internal constant WAD = 1e18;

    /// A minimum freshness is a fraction in (0, 1], written in wad: from 1 to 1e18.
    error InvalidMinFreshness(uint256 minFreshnessWad);
    /// log2Wad takes numbers of at least 1 (1e18 in wad): below, the logarithm is negative.
    error Log2BelowOne(uint256 xWad);

    /// Reverts unless `minFreshnessWad` is in (0, 1e18].
    function check(uint256 minFreshnessWad) internal pure {
        if (minFreshnessWad == 0 || minFreshnessWad > WAD) revert InvalidMinFreshness(minFreshnessWad);
    }

    /// Whether an attestation made at `timestamp` is, at this block's time, at least `minFreshnessWad` fresh.
    /// Exactly one half-life old is 0.5e18 fresh: fresh at minimum 0.5e18, and one second later no longer.
    function atLeast(uint64 timestamp, uint64 halfLife, uint256 minFreshnessWad) internal view returns (bool) {
        check(minFreshnessWad);
        // An attestation is never younger than zero (its time is a block time of the same or another chain).
        uint256 age = block.timestamp > timestamp ? block.timestamp - timestamp : 0;
        return age * WAD <= uint256(halfLife) * log2Wad((WAD * WAD) / minFreshnessWad);
    }

    /// log2(x / 1e18) * 1e18, rounded down, for x >= 1e18: the integer part from the most significant bit of
    /// x / 1e18, then one fractional bit per squaring of the remainder (which lies in [1, 2)).
    function log2Wad(uint256 xWad) internal pure returns (uint256 result) {
        if (xWad < WAD) revert Log2BelowOne(xWad);
        uint256 n = _mostSignificantBit(xWad / WAD);
        result = n * WAD;
        // y = x / 2^n, in [1, 2) in wad: log2(x) = n + log2(y).
        uint256 y = xWad >> n;
        // Squaring y doubles its logarithm: when the square reaches 2, that fractional bit (delta) is set.
        for (uint256 delta = WAD / 2; delta > 0 && y != WAD; delta >>= 1) {
            y = (y * y) / WAD;
            if (y >= 2 * WAD) {
                result += delta;
                y >>= 1;
            }
        }
    }

    /// The index of the highest set bit of `x` (x >= 1), by halving the search range.
    function _mostSignificantBit(uint256 x) private pure returns (uint256 n) {
        for (uint256 shift = 128; shift > 0; shift >>= 1) {
            if (x >= (uint256(1) << shift)) {
                x >>= shift;
                n += shift;
            }
        }
    }
}
