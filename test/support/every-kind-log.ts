/**
 * A log with every input kind, sent through a real stack: accepted inputs of each kind (a plain, a
 * proven and an owner-sealed attestation; a nullifier key set dealt t = 2 of 2 to two TLS attestors, a
 * schema unique per account and its owner's attestation, proven by both attestors with the account's
 * nullifier (docs/nullifiers.md); grants by the owner and by its EIP-712 signature relayed; keys shared;
 * revocations; a batch with a failing item; a compact batch of a plain and a proven attestation and a JSON
 * item), rejected ones (a stranger's schema and key set, a lying claim, the owner's account claimed by
 * another owner (ACCOUNT_ALREADY_BOUND), a nullifier of one share (NULLIFIER_REJECTED), an unsigned relay, a
 * batch of failures, a compact batch of an unknown version, payloads that are no input at all), and inspect
 * queries of every type, some of which raise exceptions. What `npm run replay -- --libcmt` replays and
 * libcmt judges. Blinds, proofs and the key set are random on each run: the replay reads the payloads the
 * node recorded, never sends these again.
 */
import nacl from "tweetnacl";
import type { Address, Hex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { NULLIFIER_PROVIDER } from "../../attestor/nullifier-desk.ts";
import { canonicalJson } from "../../common/canonical.ts";
import { consentDomain, grantTypedData } from "../../common/consent.ts";
import { resealContentKey, sealToOwner } from "../../common/content-seal.ts";
import { compactSchemaOfDetail, encodeCompactBatch } from "../../common/compact-batch.ts";
import { hexToUtf8, utf8ToHex } from "../../common/hex.ts";
import { dealKey } from "../../common/nullifier-dealer.ts";
import { blindNullifier, evaluateNullifierShare, finishNullifier } from "../../common/nullifier.ts";
import { inputIdOf, keyIdOf, schemaIdOf } from "../../common/ids.ts";
import { binRange } from "../../common/range-pattern.ts";
import { sealForKey } from "../../common/seal.ts";
import { claimContext, claimIdentifier, claimParameters, claimSignText, type NullifierBinding, type TlsClaim, type TlsProof } from "../../common/tls-claim.ts";
import type { SchemaDetail } from "../../common/wire.ts";
import { hardhatPrivateKey } from "../../devnode/hardhat-keys.ts";
import type { InputVerdict, TestStack } from "./stack.ts";

const DEFINITION = { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] };
const PLAIN = { provider: "http", flowType: "plain", domain: "bank.example", bucketDefinitions: { "data.balance": DEFINITION }, dataKeys: ["data.currency"], freshnessHalfLife: 3600 };
const PROVEN = { ...PLAIN, flowType: "proven", proof: "attestor" as const };
const SEALED = { ...PLAIN, flowType: "sealed", sealing: "owner" as const, requireSignedConsent: true, validityPeriod: 86_400 };
const sPlain = schemaIdOf(PLAIN);
const sProven = schemaIdOf(PROVEN);
const sSealed = schemaIdOf(SEALED);
/** Unique per account (issue 52): a quorum of the nullifier threshold, the account read at data.accountId. */
const UNIQUE = { ...PROVEN, flowType: "unique", attestorQuorum: 2, accountIdField: "data.accountId" };
const sUnique = schemaIdOf(UNIQUE);
const ACCOUNT = "acct-1618-0339";

/** Hardhat accounts: #0 admin, #1 attestor, #2 operator, #3 the owner, #5 a requester, #6 a stranger. */
const ATTESTOR = 1;
const OPERATOR = 2;
const owner = privateKeyToAccount(hardhatPrivateKey(3));
const OWNER = owner.address.toLowerCase() as Address;
const requester = privateKeyToAccount(hardhatPrivateKey(5));
const REQUESTER = requester.address.toLowerCase() as Address;
const STRANGER = 6;
const tlsAttestor = privateKeyToAccount("0x0123456789012345678901234567890123456789012345678901234567890123");
/** A second TLS attestor, so that a nullifier key set of two shares (t = 2) has two holders. */
const secondAttestor = privateKeyToAccount("0x0223456789012345678901234567890123456789012345678901234567890123");
/** The nullifier key set (issue 52): dealt t = 2 of 2, index 1 to the first attestor, 2 to the second. */
const NULLIFIER_KEYS = dealKey({ threshold: 2, indices: [1, 2] });
const NULLIFIER_HOLDERS = [
  { index: 1, address: tlsAttestor.address },
  { index: 2, address: secondAttestor.address },
];
const adminBox = nacl.box.keyPair.fromSecretKey(new Uint8Array(32).fill(3));
const ownerBox = nacl.box.keyPair.fromSecretKey(new Uint8Array(32).fill(4));
const requesterBox = nacl.box.keyPair.fromSecretKey(new Uint8Array(32).fill(5));
const b64 = (key: Uint8Array): string => Buffer.from(key).toString("base64");
const PLAINTEXT = new TextEncoder().encode(JSON.stringify({ "data.balance": 512.5, "data.currency": "EUR" }));

export interface EveryKindLog {
  verdicts: InputVerdict[];
  /** Inspect queries of every type, as JSON text, answered at the log's end; some raise exceptions. */
  queries: string[];
}

interface ClaimOptions {
  nonce?: Hex;
  /** The schema and owner the context binds: the proven schema and the owner unless told. */
  schemaId?: Hex;
  owner?: Address;
  /** The TLS attestor that signs: the first unless told. */
  signer?: PrivateKeyAccount;
  /** The nullifier's blind the context binds (claimContext's fifth argument), for a schema unique per account. */
  nullifier?: NullifierBinding;
}

/** A range claim as a TLS attestor signs it (common/tls-claim.ts), dated `at`. */
async function signedClaim(at: number, label: string, o: ClaimOptions = {}): Promise<TlsProof> {
  const range = binRange(DEFINITION, label);
  if (range === undefined) throw new Error(`no bin ${label}`);
  const signer = o.signer ?? tlsAttestor;
  const parameters = canonicalJson(claimParameters({ url: "https://bank.example/api/balance", method: "GET", field: "data.balance", range }));
  const context = canonicalJson({ ...claimContext(o.owner ?? OWNER, o.schemaId ?? sProven, o.nonce ?? "0x01", undefined, o.nullifier), providerHash: "0x00" });
  const base = { provider: "http", parameters, owner: signer.address.toLowerCase() as Address, timestampS: at, context, epoch: 1 };
  const identifier = claimIdentifier(base);
  const claim: TlsClaim = { ...base, identifier };
  return { claim, signature: await signer.signMessage({ message: claimSignText(claim, identifier) }) };
}

/**
 * The nullifier of `accountId` under the unique schema, as a prover makes it with both attestors'
 * evaluations (common/nullifier.ts), and the claims of both attestors for `owner` binding its blind; the
 * published parts keep `shares` of the two evaluations.
 */
async function uniqueProof(at: number, owner: Address, accountId: string, shares = 2): Promise<Record<string, unknown>> {
  const subject = { provider: NULLIFIER_PROVIDER, schemaId: sUnique, accountId };
  const blinding = blindNullifier(subject);
  const parts = finishNullifier(
    blinding,
    NULLIFIER_KEYS.shares.map((share) => evaluateNullifierShare(share, subject, blinding)),
    NULLIFIER_KEYS.keys,
  );
  const binding = { blinded: blinding.blinded, blindCommitment: blinding.blindCommitment, accountField: UNIQUE.accountIdField };
  const proofs = await Promise.all([tlsAttestor, secondAttestor].map((signer) => signedClaim(at, "mid", { schemaId: sUnique, owner, signer, nullifier: binding })));
  return { owner, proofs, nullifier: { ...parts, shares: parts.shares.slice(0, shares) } };
}

export async function sendEveryKind(stack: TestStack): Promise<EveryKindLog> {
  const verdicts: InputVerdict[] = [];
  const send = async (input: unknown, sender: number, expected: "ACCEPTED" | "REJECTED", code?: string): Promise<number> => {
    const verdict = await stack.send(input, sender);
    if (verdict.status !== expected) throw new Error(`every-kind log: ${JSON.stringify(input).slice(0, 120)} was ${verdict.status}, not ${expected}`);
    if (code !== undefined) {
      const reports = verdict.reports.map((r) => hexToUtf8(r));
      if (!reports.some((r) => r.includes(`"code":"${code}"`))) throw new Error(`every-kind log: ${JSON.stringify(input).slice(0, 120)} was rejected with ${reports.join(" ")}, not ${code}`);
    }
    verdicts.push(verdict);
    return verdict.index;
  };
  const chainId = await stack.client.publicClient.getChainId();
  const now = async (): Promise<number> => Number((await stack.client.publicClient.getBlock()).timestamp);
  const attestation = (schemaId: Hex, data: Hex, extra: Record<string, unknown> = {}) => ({
    type: "create_attestation",
    params: { schema_id: schemaId, owner: OWNER, provider: "http", encrypted_data: data, bucket_values: { "data.balance": "mid" }, ...extra },
  });

  await send({ type: "set_role", params: { address: privateKeyToAccount(hardhatPrivateKey(ATTESTOR)).address, role: "attestor", enabled: true } }, 0, "ACCEPTED");
  await send({ type: "set_role", params: { address: privateKeyToAccount(hardhatPrivateKey(OPERATOR)).address, role: "operator", enabled: true } }, 0, "ACCEPTED");
  for (const schema of [PLAIN, PROVEN, SEALED]) await send({ type: "register_schema", params: schema }, 0, "ACCEPTED");
  await send({ type: "register_schema", params: { ...PLAIN, flowType: "stranger" } }, STRANGER, "REJECTED");
  await send({ type: "register_encryption_key", params: { publicKey: b64(adminBox.publicKey), algorithm: "nacl-box" } }, 0, "ACCEPTED");
  await send({ type: "set_tls_attestor", params: { address: tlsAttestor.address, enabled: true, name: "replay attestor" } }, 0, "ACCEPTED");
  await send({ type: "set_tls_attestor", params: { address: secondAttestor.address, enabled: true, name: "second attestor" } }, 0, "ACCEPTED");
  await send({ type: "set_nullifier_keys", params: { keySet: NULLIFIER_KEYS.keySet, attestors: NULLIFIER_HOLDERS } }, STRANGER, "REJECTED");
  await send({ type: "set_nullifier_keys", params: { keySet: NULLIFIER_KEYS.keySet, attestors: NULLIFIER_HOLDERS } }, 0, "ACCEPTED");

  const plainId = inputIdOf("create_attestation", await send(attestation(sPlain, sealForKey(PLAINTEXT, b64(adminBox.publicKey))), ATTESTOR, "ACCEPTED"));
  const at = await now();
  await send(attestation(sProven, "0x0102", { proofs: [await signedClaim(at, "mid")] }), ATTESTOR, "ACCEPTED");
  // A claim of another bucket than the one stated: the attestor never said "mid".
  await send(attestation(sProven, "0x0102", { proofs: [await signedClaim(at, "high")] }), ATTESTOR, "REJECTED");

  // A schema unique per account (docs/nullifiers.md): the owner proves its account with both attestors and
  // the account's nullifier; the same account for another owner is refused, and so is a nullifier of one share.
  await send({ type: "register_schema", params: UNIQUE }, 0, "ACCEPTED");
  await send(attestation(sUnique, "0x0e0f", await uniqueProof(at, OWNER, ACCOUNT)), 3, "ACCEPTED");
  await send(attestation(sUnique, "0x0e0f", await uniqueProof(at, REQUESTER, ACCOUNT)), 5, "REJECTED", "ACCOUNT_ALREADY_BOUND");
  await send(attestation(sUnique, "0x0e0f", await uniqueProof(at, OWNER, "acct-2718-2818", 1)), 3, "REJECTED", "NULLIFIER_REJECTED");

  await send({ type: "register_owner_key", params: { public_key: b64(ownerBox.publicKey), algorithm: "nacl-box" } }, 3, "ACCEPTED");
  await send({ type: "register_owner_key", params: { public_key: b64(requesterBox.publicKey), algorithm: "nacl-box" } }, 5, "ACCEPTED");
  const sealed = sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey)]);
  const sealedId = inputIdOf("create_attestation", await send(attestation(sSealed, sealed), ATTESTOR, "ACCEPTED"));

  // The schema takes grants only on the owner's word: an operator's plain relay is refused, its signed one is not.
  const expiresAt = (await now()) + 86_400;
  await send({ type: "grant_access", params: { requester: REQUESTER, schema_id: sSealed, expires_at: expiresAt, owner: OWNER } }, OPERATOR, "REJECTED");
  const consent = { nonce: `0x${"07".repeat(32)}` as Hex, deadline: (await now()) + 3600 };
  const signature = await owner.signTypedData(grantTypedData(consentDomain(chainId, stack.addresses.dapp), { owner: OWNER, requester: REQUESTER, schemaId: sSealed, expiresAt, ...consent }));
  const sealedKey = resealContentKey(sealed, keyIdOf(ownerBox.publicKey), ownerBox.secretKey, b64(requesterBox.publicKey));
  const signedGrant = { requester: REQUESTER, schema_id: sSealed, expires_at: expiresAt, owner: OWNER, consent: { ...consent, signature }, keys: [{ attestation_id: sealedId, sealed_key: sealedKey }] };
  const grantId = inputIdOf("grant_access", await send({ type: "grant_access", params: signedGrant }, OPERATOR, "ACCEPTED"));
  const laterSealed = sealToOwner(PLAINTEXT, [b64(ownerBox.publicKey)]);
  const laterId = inputIdOf("create_attestation", await send(attestation(sSealed, laterSealed), ATTESTOR, "ACCEPTED"));
  const laterKey = resealContentKey(laterSealed, keyIdOf(ownerBox.publicKey), ownerBox.secretKey, b64(requesterBox.publicKey));
  await send({ type: "share_keys", params: { grant_id: grantId, keys: [{ attestation_id: laterId, sealed_key: laterKey }] } }, 3, "ACCEPTED");

  const plainGrant = inputIdOf("grant_access", await send({ type: "grant_access", params: { requester: REQUESTER, schema_id: sPlain, expires_at: expiresAt } }, 3, "ACCEPTED"));
  await send({ type: "revoke_grant", params: { grant_id: plainGrant } }, STRANGER, "REJECTED");
  await send({ type: "revoke_grant", params: { grant_id: plainGrant } }, 3, "ACCEPTED");
  await send({ type: "revoke_attestation", params: { attestation_id: plainId, reason: "closed" } }, 3, "ACCEPTED");

  // A batch applies what it can (one item fails and reports), or is rejected whole when nothing applies.
  const goodItem = attestation(sPlain, "0x0a0b");
  const badItem = { type: "register_schema", params: { ...PLAIN, flowType: "not-admin" } };
  await send({ type: "batch", params: { items: [goodItem, badItem] } }, ATTESTOR, "ACCEPTED");
  await send({ type: "batch", params: { items: [badItem, { type: "nope" }] } }, ATTESTOR, "REJECTED");
  // The same writes as a compact batch (issue 37): attestations by their schema's short index, a grant as a JSON item.
  const compactSchema = async (schemaId: Hex) => {
    const envelope = await stack.inspect({ type: "provider_schema", params: { schema_id: schemaId, include_index: true } });
    const s = JSON.parse(hexToUtf8(envelope.reports[0]?.payload ?? "0x")) as SchemaDetail;
    return compactSchemaOfDetail(s);
  };
  const compact = encodeCompactBatch([
    { item: goodItem, schema: await compactSchema(sPlain) },
    { item: attestation(sProven, "0x0c0d", { proofs: [await signedClaim(await now(), "mid", { nonce: "0x02" })] }), schema: await compactSchema(sProven) },
    { item: { type: "grant_access", params: { requester: REQUESTER, schema_id: sPlain, expires_at: expiresAt, owner: OWNER } } },
  ]);
  if (compact.compactItems !== 2) throw new Error("every-kind log: the compact batch's attestations did not travel compact");
  await send(compact.payload, ATTESTOR, "ACCEPTED");
  await send(`0xc102${compact.payload.slice(6)}` as Hex, ATTESTOR, "REJECTED");
  for (const payload of [utf8ToHex("not json"), "0xc0af", "0x", utf8ToHex(JSON.stringify({ type: "drop_table", params: {} }))] as Hex[]) {
    await send(payload, STRANGER, "REJECTED");
  }

  const queries = [
    { type: "all_provider_schemas", params: {} },
    { type: "provider_schema", params: { schema_id: sSealed } },
    { type: "provider_schema", params: { schema_id: sUnique } },
    { type: "attestations_by_owner", params: { owner: OWNER } },
    { type: "attestation", params: { attestation_id: plainId } },
    { type: "check_access", params: { owner: OWNER, requester: REQUESTER } },
    { type: "grants_by_owner", params: { owner: OWNER } },
    { type: "health", params: {} },
    { type: "tls_attestors", params: {} },
    { type: "encryption_key", params: {} },
    { type: "verify", params: { owner: OWNER, schema_id: sProven } },
    { type: "owner_key", params: { owner: OWNER } },
    { type: "content_key", params: { attestation_id: laterId, requester: REQUESTER } },
    // Exceptions: an unknown type, a bad parameter, a missing attestation.
    { type: "nope", params: {} },
    { type: "attestation", params: { attestation_id: "0x12" } },
    { type: "attestation", params: { attestation_id: `0x${"ab".repeat(32)}` } },
  ].map((q) => JSON.stringify(q));
  return { verdicts, queries: [...queries, "not json"] };
}

/** The kinds of the log's accepted inputs, batch and compact batch included, to check the log holds every one. */
export function kindsOf(log: EveryKindLog): string[] {
  const kinds = new Set<string>();
  for (const verdict of log.verdicts) {
    if (verdict.status === "ACCEPTED" && verdict.payload.toLowerCase().startsWith("0xc1")) kinds.add("compact_batch");
    try {
      const input = JSON.parse(Buffer.from(verdict.payload.slice(2), "hex").toString("utf8")) as { type?: unknown };
      if (verdict.status === "ACCEPTED" && typeof input.type === "string") kinds.add(input.type);
    } catch {
      // Not JSON: one of the payloads that are no input at all.
    }
  }
  return [...kinds].sort();
}
