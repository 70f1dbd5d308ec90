// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {IAttestationGate} from "./IAttestationGate.sol";

/// @title AttestationGate: the gate's face of an attestation store, at an address of its own.
/// @notice Answers what the store (AttestationRegistryV1 or V2) answers through IAttestationGate: the store
/// keeps one record per attestation and the gate keeps nothing, so nothing is recorded twice and nothing is
/// brought here. A consumer that wants the cheapest read calls the store itself, which has the same face.
contract AttestationGate is IAttestationGate {
    IAttestationGate public immutable store;

    constructor(IAttestationGate _store) {
        store = _store;
    }

    function attestationOf(address owner, bytes32 schemaId) external view returns (Record memory) {
        return store.attestationOf(owner, schemaId);
    }

    function hasBucket(address owner, bytes32 schemaId, string calldata field, string calldata bucket) external view returns (bool) {
        return store.hasBucket(owner, schemaId, field, bucket);
    }

    function hasBucketByAttestors(address owner, bytes32 schemaId, string calldata field, string calldata bucket, uint256 minAttestors)
        external
        view
        returns (bool)
    {
        return store.hasBucketByAttestors(owner, schemaId, field, bucket, minAttestors);
    }

    function isFresh(address owner, bytes32 schemaId, uint256 minFreshnessWad) external view returns (bool) {
        return store.isFresh(owner, schemaId, minFreshnessWad);
    }

    function hasFreshBucket(address owner, bytes32 schemaId, string calldata field, string calldata bucket, uint256 minFreshnessWad)
        external
        view
        returns (bool)
    {
        return store.hasFreshBucket(owner, schemaId, field, bucket, minFreshnessWad);
    }

    function revokedAt(bytes32 claimId) external view returns (uint64) {
        return store.revokedAt(claimId);
    }
}
