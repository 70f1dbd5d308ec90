// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.19;

import {Attestation as EasAttestation} from "@ethereum-attestation-service/eas-contracts/contracts/Common.sol";
import {ISchemaRegistry, SchemaRecord} from "@ethereum-attestation-service/eas-contracts/contracts/ISchemaRegistry.sol";
import {ISchemaResolver} from "@ethereum-attestation-service/eas-contracts/contracts/resolver/ISchemaResolver.sol";
import {AttestationBatch} from "./AttestationBatch.sol";
import {Freshness} from "./Freshness.sol";
import {IAttestationGate} from "./IAttestationGate.sol";

/// @title AttestationStore: the rollup's attestations, stored once, read through two faces.
/// @notice The registry's face is EAS's IEAS read surface (`getAttestation`, `isAttestationValid`,
/// `getSchemaRegistry`, ISchemaRegistry's `getSchema`): a contract written against IEAS reads attestations
/// here as it would from EAS. The gate's face (IAttestationGate) answers, per owner and schema, from the same
/// records. Nobody writes freely: a batch appears once someone brings the dapp's binary notice of an input
/// (contracts/AttestationBatch.sol) with the rollup's proof of it, checked by the version's own contract
/// (AttestationRegistryV1: CartesiDApp.validateNotice; AttestationRegistryV2: Application.validateOutput).
/// @dev What costs is storage, so an attestation is one word: its recipient, its time, its revocation's
/// time and the index of its kind, which holds what attestations share (schema, field, bucket, attestor set,
/// attester), each stored once when first seen. The gate's newest per owner and schema is a second word (the
/// newest's place in the rollup's history, from which its id follows). Everything EAS returns is rebuilt in
/// the views. Where it differs from EAS: `isAttestationValid` is also false for a revoked or expired
/// attestation (EAS's only says the uid exists); `refUID` is always zero; IEAS's writes are not offered.
abstract contract AttestationStore is IAttestationGate {
    /// @notice What `data` holds (EAS's schema syntax): abi.encode of these, in this order. `attestor` is the
    /// first of `attestors` (zero for an unproven attestation); `attestors` lists every TLS attestor that proved
    /// it, distinct, and came last so that a consumer decoding the first five fields reads them as before.
    string public constant DATA_SCHEMA = "string provider,string field,string bucket,address attestor,uint64 halfLife,address[] attestors";

    /// EAS's events, with the same signatures and indexed fields, so EAS indexers read these too.
    event Attested(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID);
    event Revoked(address indexed recipient, address indexed attester, bytes32 uid, bytes32 indexed schemaUID);
    /// `recordMany` proved this input's notice and skipped it: its batch was already recorded.
    event BatchSkipped(uint64 inputIndex);

    /// This attestation is already recorded (an attestation is recorded once; its notice cannot change).
    error AlreadyRecorded(bytes32 uid);
    /// This attestation's revocation is already recorded.
    error AlreadyRevoked(bytes32 uid);
    /// The batch of this input is already recorded (`record`; `recordMany` skips it, once proven).
    error BatchAlreadyRecorded(uint64 inputIndex);
    /// The notice makes and revokes nothing: recording it would only close its input to its real notice.
    error EmptyBatch(uint64 inputIndex);
    /// A kind's provider, half-life, validity or unique-per-account flag is not its schema's as first recorded
    /// here (a schema id names all four): one of the two notices is not the dapp's.
    error SchemaMismatch(bytes32 schemaId);
    /// A revocation that cannot be of an attestation the rollup made: of uid zero, at time zero (which reads as
    /// none), of another owner than the attestation's, or older than the attestation.
    error InvalidRevocation(bytes32 uid);
    /// A value does not fit the width it is stored in (`max` does): nothing of the batch is recorded.
    error OutOfRange(string what, uint256 value, uint256 max);
    /// `recordMany` takes one proof per notice.
    error LengthMismatch(uint256 notices, uint256 proofs);
    /// The application did not accept the proof for this notice (forged, of another application, of another
    /// epoch, or of bytes other than the notice's): its own error is `reason`.
    error ProofRejected(uint64 inputIndex, bytes reason);
    /// The stateless check was asked for attestation `at` of a notice that has `count`.
    error NoSuchAttestation(uint256 at, uint256 count);

    /// What attestations of one schema share.
    struct Schema {
        bytes32 id;
        uint32 provider;
        uint64 halfLife;
        /// Seconds from an attestation's time to its expiry; zero: never expires.
        uint64 validity;
        /// The schema is unique per account (its kinds' flag, issue 52). Packed into the word the three above
        /// share, so it costs no storage word of its own.
        bool uniquePerAccount;
    }

    /// What an attestation shares with others of its kind, as indexes into the tables below: one word.
    struct Kind {
        uint32 schema;
        uint32 field;
        uint32 bucket;
        uint32 attestors;
        uint32 attester;
        /// Its schema's flag, repeated here (bits 160-167 of the kind's one word) so that
        /// `isUniquePerAccount` reads the attestation's word and its kind's, not the schema's too.
        bool uniquePerAccount;
    }

    // An attestation's word: recipient (bits 0-159), time (160-191), kind (192-222; zero: not recorded, which
    // a revocation brought first leaves, with the owner it names as recipient), whether its kind expires (223),
    // and its revocation's time (224-255; zero: standing). So the bits above 192 of a standing attestation that
    // never expires are its kind alone, and `isAttestationValid` is one read and one comparison.
    uint256 private constant TIME_SHIFT = 160;
    uint256 private constant KIND_SHIFT = 192;
    uint256 private constant REVOKED_SHIFT = 224;
    uint256 private constant TIME_MASK = type(uint32).max;
    uint256 private constant KIND_MASK = (1 << 31) - 1;
    uint256 private constant EXPIRES = 1 << 223;
    /// Times are whole seconds in 32 bits: until 2106-02-07. A later one reverts OutOfRange.
    uint256 private constant MAX_TIME = type(uint32).max;
    uint256 private constant MAX_INDEX = type(uint32).max;
    /// An expiry must stay within EAS's uint64 however late the attestation.
    uint256 private constant MAX_VALIDITY = type(uint64).max - MAX_TIME;

    mapping(bytes32 uid => uint256) private records;
    /// The newest attestation per owner and schema: its place (input index << 16 | item) plus one; zero: none.
    mapping(address owner => mapping(bytes32 schemaId => uint256)) private newest;
    /// The inputs whose batch is recorded, one bit each.
    mapping(uint256 word => uint256) private batches;

    // The tables, each entry stored once when first seen; index 0 stands for none.
    Kind[] private kinds;
    mapping(bytes32 kindKey => uint256) private kindIndex;
    Schema[] private schemas;
    mapping(bytes32 schemaId => uint256) private schemaIndex;
    string[] private labels;
    mapping(bytes32 labelHash => uint256) private labelIndex;
    address[][] private attestorSets;
    mapping(bytes32 setHash => uint256) private attestorSetIndex;
    address[] private attesters;
    mapping(address attester => uint256) private attesterIndex;

    constructor() {
        kinds.push();
        schemas.push();
        labels.push();
        attestorSets.push();
        attesters.push();
    }

    // ---- writing: a proven batch ----

    /// Whether the batch of `inputIndex` is recorded here.
    function isBatchRecorded(uint64 inputIndex) public view returns (bool) {
        return batches[inputIndex >> 8] & (1 << (inputIndex & 0xff)) != 0;
    }

    /// Records every attestation and revocation of a batch notice the caller has just proven.
    function _record(bytes calldata notice) internal returns (uint256, uint256) {
        AttestationBatch.Layout memory l = AttestationBatch.layout(notice);
        if (isBatchRecorded(l.inputIndex)) revert BatchAlreadyRecorded(l.inputIndex);
        if (l.createdCount == 0 && l.revokedCount == 0) revert EmptyBatch(l.inputIndex);
        batches[l.inputIndex >> 8] |= 1 << (l.inputIndex & 0xff);
        if (l.time > MAX_TIME) revert OutOfRange("time", l.time, MAX_TIME);
        // A revocation's time zero would read as no revocation.
        if (l.time == 0 && l.revokedCount != 0) {
            (bytes32 first, , ) = AttestationBatch.revokedAt(notice, l, 0);
            revert InvalidRevocation(first);
        }

        // Per kind of the notice: its word (kind index, expiry flag) with the batch's time, and its schema.
        uint256[] memory kindWords = new uint256[](l.kinds.length);
        bytes32[] memory schemaIds = new bytes32[](l.kinds.length);
        for (uint256 k; k < l.kinds.length; k++) {
            (kindWords[k], schemaIds[k]) = _kindOf(notice, l, k);
            kindWords[k] |= uint256(l.time) << TIME_SHIFT;
        }

        bytes memory ids = AttestationBatch.itemIds(l.inputIndex);
        for (uint256 i; i < l.createdCount; ) {
            (uint16 item, address owner, uint8 k) = AttestationBatch.createdAt(notice, l, i);
            unchecked {
                _recordOne(
                    item == AttestationBatch.LONE ? AttestationBatch.uidOf(l.inputIndex, item) : AttestationBatch.itemId(ids, item),
                    owner,
                    kindWords[k],
                    schemaIds[k],
                    // Its place in the rollup's history, plus one (zero stands for none): input index, then item.
                    ((uint256(l.inputIndex) << 16) | item) + 1,
                    l.sender
                );
                i++;
            }
        }
        for (uint256 i; i < l.revokedCount; ) {
            (bytes32 uid, address owner, bytes32 schemaId) = AttestationBatch.revokedAt(notice, l, i);
            // No input's id hashes to zero.
            if (uid == bytes32(0)) revert InvalidRevocation(uid);
            uint256 slot = _recordSlot(uid);
            uint256 held = _load(slot);
            if (held >> REVOKED_SHIFT != 0) revert AlreadyRevoked(uid);
            // Of an attestation recorded here: of its owner, and not older than it. Of one not recorded (yet): kept
            // with the owner it names, which `_recordOne` holds the attestation to when it comes.
            if (held != 0 && (address(uint160(held)) != owner || (held >> TIME_SHIFT) & TIME_MASK > l.time)) revert InvalidRevocation(uid);
            _save(slot, held | uint256(uint160(owner)) | (uint256(l.time) << REVOKED_SHIFT));
            // As EAS: the second indexed address of Revoked is the revoker.
            emit Revoked(owner, l.sender, uid, schemaId);
            unchecked {
                i++;
            }
        }
        return (l.createdCount, l.revokedCount);
    }

    /// Stores one attestation's word (`word`: its kind, expiry flag and time) and, when it is the newest of its
    /// owner and schema, its place; EAS's event.
    function _recordOne(bytes32 uid, address owner, uint256 word, bytes32 schemaId, uint256 place, address attester) private {
        uint256 slot = _recordSlot(uid);
        uint256 held = _load(slot);
        if (held != 0) {
            if ((held >> KIND_SHIFT) & KIND_MASK != 0) revert AlreadyRecorded(uid);
            // A revocation brought before its attestation is kept when it can be of it: the same owner, not older.
            if (address(uint160(held)) != owner || held >> REVOKED_SHIFT < (word >> TIME_SHIFT) & TIME_MASK) revert InvalidRevocation(uid);
        }
        // `held` is zero, or that revocation: its owner's bits are `owner`'s.
        _save(slot, held | uint256(uint160(owner)) | word);
        uint256 newestSlot = _newestSlot(owner, schemaId);
        if (place > _load(newestSlot)) _save(newestSlot, place);
        emit Attested(owner, attester, uid, schemaId);
    }

    // Where `records[uid]` and `newest[owner][schemaId]` live (Solidity's layout of mappings), so that the read
    // and the write of an attestation's words hash their keys once.
    function _recordSlot(bytes32 uid) private pure returns (uint256 slot) {
        assembly ("memory-safe") {
            mstore(0x00, uid)
            mstore(0x20, records.slot)
            slot := keccak256(0x00, 0x40)
        }
    }

    function _newestSlot(address owner, bytes32 schemaId) private pure returns (uint256 slot) {
        assembly ("memory-safe") {
            // An address in assembly may carry dirty upper bits: the key is its 160 bits.
            mstore(0x00, and(owner, 0xffffffffffffffffffffffffffffffffffffffff))
            mstore(0x20, newest.slot)
            mstore(0x20, keccak256(0x00, 0x40))
            mstore(0x00, schemaId)
            slot := keccak256(0x00, 0x40)
        }
    }

    function _load(uint256 slot) private view returns (uint256 value) {
        assembly ("memory-safe") {
            value := sload(slot)
        }
    }

    function _save(uint256 slot, uint256 value) private {
        assembly ("memory-safe") {
            sstore(slot, value)
        }
    }

    /// The word of kind `k` of the notice (its index and whether it expires) and its schema, stored when new.
    function _kindOf(bytes calldata notice, AttestationBatch.Layout memory l, uint256 k) private returns (uint256 word, bytes32 schemaId) {
        bytes calldata raw = AttestationBatch.kindBytes(notice, l, k);
        schemaId = bytes32(raw[0:32]);
        bytes32 key = keccak256(abi.encodePacked(raw, l.sender));
        uint256 index = kindIndex[key];
        if (index == 0) index = _addKind(key, raw, l.sender);
        word = (index << KIND_SHIFT) | (bytes8(raw[40:48]) != 0 ? EXPIRES : 0);
    }

    function _addKind(bytes32 key, bytes calldata raw, address attester) private returns (uint256 index) {
        AttestationBatch.Kind memory kind = AttestationBatch.kindAt(raw, 0);
        if (kind.validity > MAX_VALIDITY) revert OutOfRange("validity", kind.validity, MAX_VALIDITY);
        kinds.push(
            Kind({
                schema: _schema(kind),
                field: _label(kind.field),
                bucket: _label(kind.bucket),
                attestors: _attestorSet(kind.attestors),
                attester: _attester(attester),
                uniquePerAccount: kind.uniquePerAccount
            })
        );
        index = _checked("kind", kinds.length - 1, KIND_MASK);
        kindIndex[key] = index;
    }

    function _schema(AttestationBatch.Kind memory kind) private returns (uint32) {
        uint256 index = schemaIndex[kind.schemaId];
        if (index == 0) {
            schemas.push(
                Schema({id: kind.schemaId, provider: _label(kind.provider), halfLife: kind.halfLife, validity: kind.validity, uniquePerAccount: kind.uniquePerAccount})
            );
            index = _checked("schema", schemas.length - 1, MAX_INDEX);
            schemaIndex[kind.schemaId] = index;
        } else {
            // The schema's fields have one source, its first kind: a new kind of it must repeat them, or the
            // reads (expirationTime, halfLife, provider, isUniquePerAccount) would say what its own notice did not.
            Schema storage schema = schemas[index];
            if (
                schema.validity != kind.validity ||
                schema.halfLife != kind.halfLife ||
                schema.uniquePerAccount != kind.uniquePerAccount ||
                labelIndex[keccak256(kind.provider)] != schema.provider
            ) {
                revert SchemaMismatch(kind.schemaId);
            }
        }
        return uint32(index);
    }

    function _label(bytes memory text) private returns (uint32) {
        bytes32 key = keccak256(text);
        uint256 index = labelIndex[key];
        if (index == 0) {
            labels.push(string(text));
            index = _checked("label", labels.length - 1, MAX_INDEX);
            labelIndex[key] = index;
        }
        return uint32(index);
    }

    function _attestorSet(address[] memory set) private returns (uint32) {
        bytes32 key = keccak256(abi.encodePacked(set));
        uint256 index = attestorSetIndex[key];
        if (index == 0) {
            attestorSets.push(set);
            index = _checked("attestor set", attestorSets.length - 1, MAX_INDEX);
            attestorSetIndex[key] = index;
        }
        return uint32(index);
    }

    function _attester(address attester) private returns (uint32) {
        uint256 index = attesterIndex[attester];
        if (index == 0) {
            attesters.push(attester);
            index = _checked("attester", attesters.length - 1, MAX_INDEX);
            attesterIndex[attester] = index;
        }
        return uint32(index);
    }

    function _checked(string memory what, uint256 value, uint256 max) private pure returns (uint256) {
        if (value > max) revert OutOfRange(what, value, max);
        return value;
    }

    /// What the stateless check answers for attestation `at` of a notice the caller has just proven: its id,
    /// and whether it is valid as `isAttestationValid` would say, its revocation as recorded here.
    function _check(bytes calldata notice, uint256 at) internal view returns (bytes32 uid, bool valid) {
        AttestationBatch.Layout memory l = AttestationBatch.layout(notice);
        if (at >= l.createdCount) revert NoSuchAttestation(at, l.createdCount);
        (uint16 item, , uint8 k) = AttestationBatch.createdAt(notice, l, at);
        uid = AttestationBatch.uidOf(l.inputIndex, item);
        uint256 validity = uint64(bytes8(notice[l.kinds[k] + 40:l.kinds[k] + 48]));
        valid = records[uid] >> REVOKED_SHIFT == 0 && (validity == 0 || block.timestamp < l.time + validity);
    }

    // ---- the registry's face: EAS's IEAS reads ----

    /// @notice IEAS.getAttestation: the attestation recorded under `uid`, all zero when none is.
    function getAttestation(bytes32 uid) external view returns (EasAttestation memory a) {
        uint256 word = records[uid];
        uint256 k = (word >> KIND_SHIFT) & KIND_MASK;
        if (k == 0) return a;
        Kind storage kind = kinds[k];
        Schema storage schema = schemas[kind.schema];
        address[] storage set = attestorSets[kind.attestors];
        a.uid = uid;
        a.schema = schema.id;
        a.time = uint64((word >> TIME_SHIFT) & TIME_MASK);
        a.expirationTime = schema.validity == 0 ? 0 : a.time + schema.validity;
        a.revocationTime = uint64(word >> REVOKED_SHIFT);
        a.recipient = address(uint160(word));
        a.attester = attesters[kind.attester];
        // The rollup lets the attestation's attester, attestor, owner or an admin revoke it.
        a.revocable = true;
        a.data = abi.encode(labels[schema.provider], labels[kind.field], labels[kind.bucket], set.length == 0 ? address(0) : set[0], schema.halfLife, set);
    }

    /// @notice IEAS.isAttestationValid, stricter than EAS's: recorded here, not revoked, and not expired at this
    /// block's time (EAS's says only that the uid exists). One storage read unless its schema expires.
    function isAttestationValid(bytes32 uid) external view returns (bool) {
        uint256 word = records[uid];
        unchecked {
            // Recorded (a kind), never expiring and standing: the bits above the time hold the kind alone. The
            // call consumers make most answers at once, so that it costs no more than EAS's.
            if ((word >> KIND_SHIFT) - 1 < KIND_MASK) {
                assembly ("memory-safe") {
                    mstore(0x00, 1)
                    return(0x00, 0x20)
                }
            }
        }
        return _stands(word);
    }

    /// @notice When the rollup revoked `uid`, as recorded here (zero: no revocation recorded), whether or not
    /// the attestation itself is.
    function revocationOf(bytes32 uid) public view returns (uint64) {
        return uint64(records[uid] >> REVOKED_SHIFT);
    }

    /// @notice How many distinct TLS attestors proved `uid` (0 for an unproven one or one not recorded here).
    function attestorCountOf(bytes32 uid) public view returns (uint256) {
        uint256 k = (records[uid] >> KIND_SHIFT) & KIND_MASK;
        return k == 0 ? 0 : attestorSets[kinds[k].attestors].length;
    }

    /// @notice `isAttestationValid`, and at least `minAttestors` distinct TLS attestors proved it.
    function isAttestationValidWith(bytes32 uid, uint256 minAttestors) external view returns (bool) {
        return _valid(records[uid]) && attestorCountOf(uid) >= minAttestors;
    }

    /// @notice Whether `uid` is recorded here and its schema is unique per account: the rollup accepted it only
    /// with a nullifier of its provider account, bound to its owner, so no other owner holds (or will hold) an
    /// attestation of that account under that schema. It says nothing of standing (revoked and expired ones
    /// answer true too: `isAttestationValidUnique` for both), nor that the owner holds no other attestation of
    /// the account (a refresh by the same owner is another one) or of another account. False for a uid not
    /// recorded here. Two storage reads: the attestation's word and its kind's.
    function isUniquePerAccount(bytes32 uid) external view returns (bool) {
        return _uniqueKind(records[uid]);
    }

    /// @notice `isAttestationValid` and `isUniquePerAccount` in one call: a consumer's gate for "a live
    /// attestation that its account backs for this owner alone".
    function isAttestationValidUnique(bytes32 uid) external view returns (bool) {
        uint256 word = records[uid];
        return _valid(word) && _uniqueKind(word);
    }

    /// Whether the kind of an attestation's word is of a schema unique per account (false for no kind: entry 0
    /// is the empty kind). The kind's slot is read directly: an index from a recorded word is always in the
    /// table, and `kinds[k]` would read the table's length (another cold slot) only to check it.
    function _uniqueKind(uint256 word) private view returns (bool unique) {
        uint256 k = (word >> KIND_SHIFT) & KIND_MASK;
        assembly ("memory-safe") {
            mstore(0x00, kinds.slot)
            // Kind is one word; its flag follows the five uint32 indexes, at bit 160.
            unique := and(shr(160, sload(add(keccak256(0x00, 0x20), k))), 0xff)
        }
    }

    /// @notice IEAS.getSchemaRegistry: this contract, which answers ISchemaRegistry.getSchema (not `register`).
    function getSchemaRegistry() external view returns (ISchemaRegistry) {
        return ISchemaRegistry(address(this));
    }

    /// @notice ISchemaRegistry.getSchema: for the schema of an attestation recorded here, its uid, no resolver,
    /// revocable, and DATA_SCHEMA; all zero for any other.
    function getSchema(bytes32 uid) external view returns (SchemaRecord memory record) {
        if (schemaIndex[uid] != 0) record = SchemaRecord(uid, ISchemaResolver(address(0)), true, DATA_SCHEMA);
    }

    /// @notice ISemver.version.
    function version() external pure returns (string memory) {
        return "1.0.0";
    }

    // ---- the gate's face ----

    /// @inheritdoc IAttestationGate
    function attestationOf(address owner, bytes32 schemaId) public view returns (Record memory out) {
        (bytes32 uid, uint256 inputIndex, uint256 word) = _newest(owner, schemaId);
        if (uid == bytes32(0)) return out;
        Kind storage kind = kinds[(word >> KIND_SHIFT) & KIND_MASK];
        Schema storage schema = schemas[kind.schema];
        address[] storage set = attestorSets[kind.attestors];
        uint64 time = uint64((word >> TIME_SHIFT) & TIME_MASK);
        out = Record({
            claimId: uid,
            order: inputIndex,
            field: labels[kind.field],
            bucket: labels[kind.bucket],
            attestor: set.length == 0 ? address(0) : set[0],
            attestorCount: uint16(set.length),
            timestamp: time,
            expiresAt: schema.validity == 0 ? 0 : time + schema.validity,
            halfLife: schema.halfLife
        });
    }

    /// @inheritdoc IAttestationGate
    function hasBucket(address owner, bytes32 schemaId, string calldata field, string calldata bucket) public view returns (bool) {
        (, , uint256 word) = _newest(owner, schemaId);
        if (!_stands(word)) return false;
        Kind storage kind = kinds[(word >> KIND_SHIFT) & KIND_MASK];
        return labelIndex[keccak256(bytes(field))] == kind.field && labelIndex[keccak256(bytes(bucket))] == kind.bucket;
    }

    /// @inheritdoc IAttestationGate
    function hasBucketByAttestors(address owner, bytes32 schemaId, string calldata field, string calldata bucket, uint256 minAttestors)
        external
        view
        returns (bool)
    {
        if (!hasBucket(owner, schemaId, field, bucket)) return false;
        (, , uint256 word) = _newest(owner, schemaId);
        return attestorSets[kinds[(word >> KIND_SHIFT) & KIND_MASK].attestors].length >= minAttestors;
    }

    /// @inheritdoc IAttestationGate
    function isFresh(address owner, bytes32 schemaId, uint256 minFreshnessWad) public view returns (bool) {
        Freshness.check(minFreshnessWad);
        (, , uint256 word) = _newest(owner, schemaId);
        if (!_stands(word)) return false;
        uint64 halfLife = schemas[kinds[(word >> KIND_SHIFT) & KIND_MASK].schema].halfLife;
        return Freshness.atLeast(uint64((word >> TIME_SHIFT) & TIME_MASK), halfLife, minFreshnessWad);
    }

    /// @inheritdoc IAttestationGate
    function hasFreshBucket(address owner, bytes32 schemaId, string calldata field, string calldata bucket, uint256 minFreshnessWad)
        external
        view
        returns (bool)
    {
        return isFresh(owner, schemaId, minFreshnessWad) && hasBucket(owner, schemaId, field, bucket);
    }

    /// @inheritdoc IAttestationGate
    function revokedAt(bytes32 claimId) external view returns (uint64) {
        return revocationOf(claimId);
    }

    /// The newest attestation of an owner and schema: its id, its input and its word (all zero when none).
    function _newest(address owner, bytes32 schemaId) private view returns (bytes32 uid, uint256 inputIndex, uint256 word) {
        uint256 place = newest[owner][schemaId];
        if (place == 0) return (bytes32(0), 0, 0);
        inputIndex = (place - 1) >> 16;
        uid = AttestationBatch.uidOf(uint64(inputIndex), uint16(place - 1));
        word = records[uid];
    }

    /// Whether an attestation's word stands: recorded, not revoked, not expired.
    function _valid(uint256 word) private view returns (bool) {
        unchecked {
            // Recorded (a kind), never expiring and standing: the bits above the time hold the kind alone.
            return (word >> KIND_SHIFT) - 1 < KIND_MASK || _stands(word);
        }
    }

    function _stands(uint256 word) private view returns (bool) {
        return (word >> KIND_SHIFT) & KIND_MASK != 0 && word >> REVOKED_SHIFT == 0 && (word & EXPIRES == 0 || block.timestamp < _expiresAt(word));
    }

    function _expiresAt(uint256 word) private view returns (uint256) {
        return ((word >> TIME_SHIFT) & TIME_MASK) + schemas[kinds[(word >> KIND_SHIFT) & KIND_MASK].schema].validity;
    }
}
