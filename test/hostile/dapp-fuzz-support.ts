/**
 * Fixtures of the dapp fuzz tests (dapp-fuzz.test.ts, dapp-fuzz-inspect.test.ts): the inputs that seed a
 * fresh dapp (`setup`: two schemas, the encryption key, the attestor and operator roles, one attestation
 * and ALICE's grant to BOB), a valid params object and its rightful sender per input kind, every field of
 * every kind with its JSON type, generators of wrong values and forged senders, and the full database
 * digest a rejected input must leave unchanged.
 */
import fc from "fast-check";
import type { Address, Hex } from "viem";
import { inputIdOf, schemaIdOf } from "../../common/ids.ts";
import { dealKey } from "../../common/nullifier-dealer.ts";
import { INPUT_KINDS } from "../../common/wire.ts";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { PUBLIC_KEY, SCHEMA, SCHEMA_2 } from "../dapp/fixtures.ts";
import { ADMIN, ALICE, ATTESTOR, BOB, OPERATOR, T0 } from "../dapp/harness.ts";
import { addressArb, type stateDigest } from "./support.ts";

export const s1 = schemaIdOf(SCHEMA);
export const s2 = schemaIdOf(SCHEMA_2);
export const FAR = T0 + 100_000_000;
/** A well-formed key set of 2 of 2, dealt from fixed bytes so every run sends the same one. */
const FUZZ_KEYS = dealKey({ threshold: 2, indices: [1, 2], secret: 7n, random: (n) => new Uint8Array(n).fill(3) }).keySet;

/** The role holders: a forged sender is anyone else. */
export const PRIVILEGED = new Set<string>([ADMIN, ATTESTOR, OPERATOR]);
export const forgedArb = addressArb.filter((a) => !PRIVILEGED.has(a));

/** A valid params object per kind, each acceptable from the sender `SENDER` names. */
export const VALID: { [K in (typeof INPUT_KINDS)[number]]: () => Record<string, unknown> } = {
  register_schema: () => ({ ...SCHEMA, domain: "fuzz.example" }),
  register_encryption_key: () => ({ publicKey: Buffer.alloc(32, 7).toString("base64"), algorithm: "nacl-box" }),
  create_attestation: () => ({ schema_id: s1, owner: ALICE, provider: "http", encrypted_data: "0xabcd", bucket_values: { balance: "low" } }),
  grant_access: () => ({ requester: OPERATOR, schema_id: s2, expires_at: FAR }),
  revoke_grant: () => ({ grant_id: aliceGrant }),
  set_role: () => ({ address: BOB, role: "attestor", enabled: true }),
  set_tls_attestor: () => ({ address: BOB, enabled: true, name: "fuzz attestor" }),
  // The attestation setup makes (input 5), revoked by its attester.
  revoke_attestation: () => ({ attestation_id: inputIdOf("create_attestation", 5), reason: "fuzz" }),
  register_owner_key: () => ({ public_key: Buffer.alloc(32, 9).toString("base64"), algorithm: "nacl-box" }),
  // Well-formed; its grant's schema seals to the admin, so the dapp refuses it for what it says, not its form.
  share_keys: () => ({ grant_id: aliceGrant, keys: [{ attestation_id: inputIdOf("create_attestation", 5), sealed_key: `0x${"ab".repeat(104)}` }] }),
  // Well-formed; its holders are no registered TLS attestors, so the dapp refuses it for what it says, not its form.
  set_nullifier_keys: () => ({ keySet: FUZZ_KEYS, attestors: [{ index: 1, address: ATTESTOR }, { index: 2, address: OPERATOR }] }),
};
export const SENDER: Record<(typeof INPUT_KINDS)[number], Address> = {
  register_schema: ADMIN,
  register_encryption_key: ADMIN,
  create_attestation: ATTESTOR,
  grant_access: ALICE,
  revoke_grant: ALICE,
  set_role: ADMIN,
  set_tls_attestor: ADMIN,
  revoke_attestation: ATTESTOR,
  register_owner_key: ALICE,
  share_keys: ALICE,
  set_nullifier_keys: ADMIN,
};

export type FieldType = "string" | "number" | "integer" | "boolean" | "object" | "array";
/** Every field of every kind with its JSON type and whether the value must match a pattern. */
export const FIELDS: { kind: (typeof INPUT_KINDS)[number]; field: string; type: FieldType; pattern?: boolean; max?: number }[] = [
  { kind: "register_schema", field: "provider", type: "string", max: 256 },
  { kind: "register_schema", field: "flowType", type: "string", max: 256 },
  { kind: "register_schema", field: "domain", type: "string", max: 256 },
  { kind: "register_schema", field: "bucketDefinitions", type: "object" },
  { kind: "register_schema", field: "dataKeys", type: "array" },
  { kind: "register_schema", field: "freshnessHalfLife", type: "number" },
  { kind: "register_schema", field: "name", type: "string", max: 256 },
  { kind: "register_schema", field: "description", type: "string", max: 4096 },
  { kind: "register_encryption_key", field: "publicKey", type: "string", pattern: true },
  { kind: "register_encryption_key", field: "algorithm", type: "string", pattern: true },
  { kind: "create_attestation", field: "schema_id", type: "string", pattern: true },
  { kind: "create_attestation", field: "owner", type: "string", pattern: true },
  { kind: "create_attestation", field: "provider", type: "string", max: 256 },
  { kind: "create_attestation", field: "encrypted_data", type: "string", pattern: true, max: 2 + 32 * 1024 },
  { kind: "create_attestation", field: "bucket_values", type: "object" },
  { kind: "grant_access", field: "requester", type: "string", pattern: true },
  { kind: "grant_access", field: "schema_id", type: "string", pattern: true },
  { kind: "grant_access", field: "expires_at", type: "integer" },
  { kind: "grant_access", field: "owner", type: "string", pattern: true },
  { kind: "revoke_grant", field: "grant_id", type: "string", pattern: true },
  { kind: "revoke_grant", field: "owner", type: "string", pattern: true },
  { kind: "set_role", field: "address", type: "string", pattern: true },
  { kind: "set_role", field: "role", type: "string", pattern: true },
  { kind: "set_role", field: "enabled", type: "boolean" },
  { kind: "set_tls_attestor", field: "address", type: "string", pattern: true },
  { kind: "set_tls_attestor", field: "enabled", type: "boolean" },
  { kind: "set_tls_attestor", field: "name", type: "string", max: 256 },
  { kind: "create_attestation", field: "proofs", type: "array" },
  { kind: "register_schema", field: "proof", type: "string", pattern: true },
  { kind: "register_schema", field: "attestorQuorum", type: "integer" },
  { kind: "register_schema", field: "validityPeriod", type: "integer" },
  { kind: "register_schema", field: "requireSignedConsent", type: "boolean" },
  { kind: "grant_access", field: "consent", type: "object" },
  { kind: "revoke_grant", field: "consent", type: "object" },
  { kind: "revoke_attestation", field: "attestation_id", type: "string", pattern: true },
  { kind: "revoke_attestation", field: "reason", type: "string", max: 256 },
  { kind: "revoke_attestation", field: "superseded_by", type: "string", pattern: true },
  { kind: "register_schema", field: "sealing", type: "string", pattern: true },
  { kind: "register_owner_key", field: "public_key", type: "string", pattern: true },
  { kind: "register_owner_key", field: "algorithm", type: "string", pattern: true },
  { kind: "register_owner_key", field: "owner", type: "string", pattern: true },
  { kind: "register_owner_key", field: "consent", type: "object" },
  { kind: "grant_access", field: "keys", type: "array" },
  { kind: "share_keys", field: "grant_id", type: "string", pattern: true },
  { kind: "share_keys", field: "keys", type: "array" },
  { kind: "share_keys", field: "owner", type: "string", pattern: true },
  { kind: "set_nullifier_keys", field: "keySet", type: "object" },
  { kind: "set_nullifier_keys", field: "attestors", type: "array" },
  { kind: "register_schema", field: "accountIdField", type: "string", pattern: true },
  { kind: "create_attestation", field: "nullifier", type: "object" },
];

export const scalarOrContainer = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 20 }),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
);

/** A JSON value that is not of `type` (for pattern strings: also any free-form string). */
export function wrongValue(type: FieldType, pattern: boolean): fc.Arbitrary<unknown> {
  const notOf = scalarOrContainer.filter((v) => {
    switch (type) {
      case "string":
        return typeof v !== "string";
      case "number":
        return typeof v !== "number" || !(v > 0);
      case "integer":
        return typeof v !== "number" || !Number.isInteger(v) || v < 0;
      case "boolean":
        return typeof v !== "boolean";
      case "object":
        return typeof v !== "object" || v === null || Array.isArray(v) || Object.keys(v).length > 0;
      case "array":
        return !Array.isArray(v) || v.some((x) => typeof x !== "string" || x === "");
    }
  });
  return pattern ? fc.oneof(notOf, fc.string({ maxLength: 80 })) : notOf;
}

/** The whole database, bookkeeping included: in the Cartesi machine a rejected input is reverted entirely. */
export const fullDigest = (sqlite: Parameters<typeof stateDigest>[0]): string => databaseDigest(sqlite);

/** The inputs that seed every fuzzed dapp, in order: input i goes in at T0 + i. */
export const setup: [string, unknown, Address][] = [
  ["register_schema", SCHEMA, ADMIN],
  ["register_schema", SCHEMA_2, ADMIN],
  ["register_encryption_key", { publicKey: PUBLIC_KEY, algorithm: "nacl-box" }, ADMIN],
  ["set_role", { address: ATTESTOR, role: "attestor", enabled: true }, ADMIN],
  ["set_role", { address: OPERATOR, role: "operator", enabled: true }, ADMIN],
  ["create_attestation", VALID.create_attestation(), ATTESTOR],
  ["grant_access", { requester: BOB, schema_id: s1, expires_at: FAR }, ALICE],
];

/** ALICE's live grant to BOB, made by the last setup input. */
export const aliceGrant: Hex = inputIdOf("grant_access", setup.length - 1);
