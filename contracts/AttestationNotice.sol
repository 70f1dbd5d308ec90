// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

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

/// @title AttestationNotice: the exact bytes of the dapp's `attestation:created` notice, rebuilt from its fields.
/// @dev The notice is the dapp's UTF-8 JSON. Parsing JSON on chain is costly and error-prone, so a consumer
/// takes the fields and rebuilds the notice: if the rollup's proof holds for those bytes, every field is
/// authentic. Shared by the Rollups v1 and v2 gates.
library AttestationNotice {
    /// A text that JSON would escape cannot be rebuilt byte for byte (and no such label is expected).
    error UnsupportedText(string text);

    /// The notice the dapp emits for such an attestation (one bucketed field, as the api makes them).
    function encode(Attestation calldata a) internal pure returns (bytes memory) {
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
}
