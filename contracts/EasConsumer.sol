// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

// Only EAS's own interface: this contract works the same against EAS itself or any IEAS, ours included.
import {IEAS} from "@ethereum-attestation-service/eas-contracts/contracts/IEAS.sol";
import {Attestation} from "@ethereum-attestation-service/eas-contracts/contracts/Common.sol";

/// @title EasConsumer: an allow-list over attestations of one schema, read through IEAS.
/// @notice `isAllowed(who, uid)` is true when `uid` is a live attestation of the schema for `who`;
/// `bucketOf(uid)` reads the bucket out of its data. Point it at the attestation rollup's registry
/// (AttestationRegistryV1 or V2) and the schema's uid (the rollup's schema_id).
contract EasConsumer {
    IEAS public immutable eas;
    bytes32 public immutable schema;

    /// `uid` names no attestation of this consumer's schema.
    error NotOfSchema(bytes32 uid, bytes32 schema);

    constructor(IEAS _eas, bytes32 _schema) {
        eas = _eas;
        schema = _schema;
    }

    /// @notice Whether `uid` is an attestation of the schema for `who`, neither revoked nor expired.
    function isAllowed(address who, bytes32 uid) public view returns (bool) {
        Attestation memory a = eas.getAttestation(uid);
        // EAS's own isAttestationValid only says that the uid exists: revocation and expiry are checked here.
        return uid != bytes32(0)
            && a.uid == uid
            && a.schema == schema
            && a.recipient == who
            && a.revocationTime == 0
            && (a.expirationTime == 0 || block.timestamp < a.expirationTime)
            && eas.isAttestationValid(uid);
    }

    /// @notice The bucketed field and its bucket, from the attestation's data
    /// (`string provider,string field,string bucket,address attestor,uint64 halfLife`), live or not.
    function bucketOf(bytes32 uid) public view returns (string memory field, string memory bucket) {
        Attestation memory a = eas.getAttestation(uid);
        if (uid == bytes32(0) || a.uid != uid || a.schema != schema) revert NotOfSchema(uid, schema);
        (, field, bucket, , ) = abi.decode(a.data, (string, string, string, address, uint64));
    }

    /// @notice Whether `uid` is allowed for `who` and puts `field` in `bucket`.
    function hasBucket(address who, bytes32 uid, string calldata field, string calldata bucket) external view returns (bool) {
        if (!isAllowed(who, uid)) return false;
        (string memory f, string memory b) = bucketOf(uid);
        return keccak256(bytes(f)) == keccak256(bytes(field)) && keccak256(bytes(b)) == keccak256(bytes(bucket));
    }
}
