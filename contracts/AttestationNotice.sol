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
    /// The TLS attestors that proved it, in the notice's order (the first is its `attestor`); empty for an
    /// unproven attestation. A quorum's notice lists them all, distinct (the dapp refuses a repeated one).
    address[] attestors;
    /// The account that sent the attestation's input (EAS's attester): the api's wallet, or the owner itself.
    address attester;
    /// The block time of the attestation's input (Unix seconds).
    uint64 timestamp;
    /// `timestamp` + the schema's validity period; zero when the schema has none (the notice's `null`).
    uint64 expiresAt;
    /// The schema's freshness half-life in seconds. Whole seconds only: a fractional one cannot be rebuilt.
    uint64 halfLife;
}

/// The fields of an `attestation:revoked` notice, as the dapp writes them.
struct Revocation {
    bytes32 claimId;
    address owner;
    bytes32 schemaId;
    /// The account that sent the revocation's input.
    address revoker;
    /// The block time of the revocation's input (Unix seconds).
    uint64 revokedAt;
    /// Plain text (the dapp refuses quotes, backslashes and control characters); may be empty.
    string reason;
    /// The attestation that replaces the revoked one; zero when none (the notice's `null`).
    bytes32 supersededBy;
}

/// @title AttestationNotice: the exact bytes of the dapp's attestation notices, rebuilt from their fields.
/// @dev The notices are the dapp's UTF-8 JSON. Parsing JSON on chain is costly and error-prone, so a consumer
/// takes the fields and rebuilds the notice: if the rollup's proof holds for those bytes, every field is
/// authentic. Shared by the gates and the registries of Rollups v1 and v2.
library AttestationNotice {
    /// A text that JSON would escape cannot be rebuilt byte for byte (and no such label is expected).
    error UnsupportedText(string text);

    /// The `attestation:created` notice the dapp emits for such an attestation (one bucketed field, as the api
    /// makes them): a proven one names its first attestor, and a quorum's lists them all after it.
    function encode(Attestation calldata a) internal pure returns (bytes memory) {
        _plain(a.provider);
        _plain(a.field);
        _plain(a.bucket);
        bytes memory head = abi.encodePacked(
            abi.encodePacked('{"event":"attestation:created","data":{"claimId":"', _hex(abi.encodePacked(a.claimId))),
            abi.encodePacked('","owner":"', _hex(abi.encodePacked(a.owner)), '","provider":"', a.provider),
            abi.encodePacked('","schema_id":"', _hex(abi.encodePacked(a.schemaId)), '","bucket_values":{"'),
            abi.encodePacked(a.field, '":"', a.bucket, '"}'),
            // A proven attestation's notice names its attestor after the buckets; an unproven one does not.
            a.attestors.length == 0 ? bytes("") : abi.encodePacked(',"attestor":"', _hex(abi.encodePacked(a.attestors[0])), '"'),
            _attestorList(a.attestors)
        );
        return abi.encodePacked(
            head,
            abi.encodePacked(',"attester":"', _hex(abi.encodePacked(a.attester)), '","timestamp":', _decimal(a.timestamp)),
            abi.encodePacked(',"expires_at":', a.expiresAt == 0 ? bytes("null") : _decimal(a.expiresAt)),
            abi.encodePacked(',"freshness_half_life":', _decimal(a.halfLife), "}}")
        );
    }

    /// The `attestation:revoked` notice the dapp emits for such a revocation.
    function encodeRevocation(Revocation calldata r) internal pure returns (bytes memory) {
        _plain(r.reason);
        bytes memory head = abi.encodePacked(
            abi.encodePacked('{"event":"attestation:revoked","data":{"claimId":"', _hex(abi.encodePacked(r.claimId))),
            abi.encodePacked('","owner":"', _hex(abi.encodePacked(r.owner)), '","schema_id":"', _hex(abi.encodePacked(r.schemaId))),
            abi.encodePacked('","revoker":"', _hex(abi.encodePacked(r.revoker)), '","revoked_at":', _decimal(r.revokedAt))
        );
        return abi.encodePacked(
            head,
            abi.encodePacked(',"reason":"', r.reason, '","superseded_by":'),
            r.supersededBy == bytes32(0) ? bytes("null") : abi.encodePacked('"', _hex(abi.encodePacked(r.supersededBy)), '"'),
            "}}"
        );
    }

    /// `,"attestors":["0x…","0x…"]` for a quorum (more than one attestor), nothing otherwise, as the dapp writes it.
    function _attestorList(address[] calldata attestors) private pure returns (bytes memory out) {
        if (attestors.length < 2) return out;
        out = abi.encodePacked(',"attestors":["', _hex(abi.encodePacked(attestors[0])), '"');
        for (uint256 i = 1; i < attestors.length; i++) out = abi.encodePacked(out, ',"', _hex(abi.encodePacked(attestors[i])), '"');
        out = abi.encodePacked(out, "]");
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

    /// Decimal digits without sign, leading zeros or exponent: how JSON.stringify writes a whole number below 2^64.
    function _decimal(uint256 value) private pure returns (bytes memory out) {
        uint256 length = 1;
        for (uint256 rest = value / 10; rest != 0; rest /= 10) length++;
        out = new bytes(length);
        for (uint256 i = length; i > 0; i--) {
            out[i - 1] = bytes1(uint8(48 + (value % 10)));
            value /= 10;
        }
    }
}
