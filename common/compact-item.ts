/**
 * The attestation items of a compact batch (common/compact-batch.ts; docs/dapp.md gives the layout byte by
 * byte): what an item's body means as the `create_attestation` params it stands for, and the way back.
 * The schema comes by its short index (the schema's row id, `schema_index` in `provider_schema`), the
 * provider is the schema's, the owner is an index into the batch's address table, the bucket is one byte
 * per bucket field of the schema (0: not set, k: its k-th label), and the sealed data is the rest. A
 * proven item carries its attestors' signed claims without what the rollup rebuilds: the parameters but
 * the URL's path, the context but its nonce (and its provider hash, when it is attestor-core's, keccak256
 * of the parameters), the identifier, and the signature's `v`.
 */
import { keccak256, stringToBytes, type Address, type Hex } from "viem";
import { isAddress } from "./address.ts";
import type { BucketDefinition } from "./buckets.ts";
import { canonicalJson } from "./canonical.ts";
import { ByteProblem, ByteReader, ByteWriter } from "./compact-bytes.ts";
import { bytesToHex, bytesToUtf8, hexToBytes, isHex } from "./hex.ts";
import { binRange, type DecimalRange } from "./range-pattern.ts";
import { claimParameters, identifierOf, MAX_QUORUM, type TlsProof } from "./tls-claim.ts";
import type { DappErrorCode, InputParams, SchemaDetail } from "./wire.ts";

export type CompactProblemCode = Extract<DappErrorCode, "INVALID_PAYLOAD" | "INVALID_PARAMS" | "SCHEMA_NOT_FOUND" | "UNKNOWN_KIND">;

/** Why a compact batch (no `item`) or one of its items cannot be read: its code, and the byte it failed at. */
export class CompactProblem extends Error {
  override readonly name = "CompactProblem";
  constructor(
    readonly code: CompactProblemCode,
    readonly offset: number,
    readonly reason: string,
    readonly item?: number,
  ) {
    super(item === undefined ? `compact batch, byte ${offset}: ${reason}` : `compact batch item ${item}, byte ${offset}: ${reason}`);
  }
}

/** What an item needs to know of its schema. */
export interface CompactSchema {
  index: number;
  schemaId: Hex;
  providerType: string;
  domain: string;
  /** The bucket fields in code-unit order of their names: the order of the schema's canonical JSON. */
  fields: { name: string; definition: BucketDefinition }[];
}

/** The schema that holds a short index, if any. */
export type SchemaDirectory = (index: number) => CompactSchema | undefined;

export function compactSchemaOf(index: number, schemaId: Hex, providerType: string, domain: string, definitions: Record<string, BucketDefinition>): CompactSchema {
  const names = Object.keys(definitions).sort();
  return { index, schemaId: schemaId.toLowerCase() as Hex, providerType, domain, fields: names.map((name) => ({ name, definition: definitions[name] as BucketDefinition })) };
}

/** The same from the rollup's view of the schema (`provider_schema` asked with `include_index: true`). */
export function compactSchemaOfDetail(detail: Pick<SchemaDetail, "schema_index" | "schema_id" | "provider_type" | "domain" | "bucket_definitions">): CompactSchema {
  if (detail.schema_index === undefined) throw new TypeError(`schema ${detail.schema_id} came without its schema_index (ask with include_index: true)`);
  return compactSchemaOf(detail.schema_index, detail.schema_id, detail.provider_type, detail.domain, detail.bucket_definitions);
}

export type AttestationItem = { type: "create_attestation"; params: InputParams["create_attestation"] };

/** Bytes of an attestation item's body, by what they carry (the bench's split). */
export interface AttestationBytes {
  schemaIndex: number;
  owner: number;
  bucket: number;
  claims: number;
  sealedData: number;
}

/**
 * Claim flags: bit 0 POST (else GET); 1 the previous claim's URL; 2 a nonce; 3 a provider hash, sent; 4
 * (with 3) the previous claim's provider hash instead; 5 a provider hash that is keccak256 of the
 * parameters, as attestor-core computes it (`hashProviderParams`), rebuilt; 6 a range `statement` in the
 * context, `{field, range}` of the attestation's field and bucket, rebuilt.
 */
const POST = 0x01;
const SAME_URL = 0x02;
const NONCE = 0x04;
const PROVIDER_HASH = 0x08;
const SAME_PROVIDER_HASH = 0x10;
const PARAMETERS_HASH = 0x20;
const STATEMENT = 0x40;
const KNOWN_FLAGS = 0x7f;
const SIGNATURE_BYTES = 64;
const LOWER_HEX_RE = /^0x(?:[0-9a-f]{2})*$/;

function fail(code: CompactProblemCode, offset: number, reason: string, item: number): never {
  throw new CompactProblem(code, offset, reason, item);
}

/**
 * The params an attestation body stands for. Throws a CompactProblem naming the item and the byte: a
 * schema index never assigned, an address or bucket index out of range, a body that ends early.
 */
export function decodeAttestation(body: Uint8Array, bodyOffset: number, proven: boolean, addresses: readonly Address[], directory: SchemaDirectory, item: number): AttestationItem {
  const r = new ByteReader(body, bodyOffset);
  try {
    let at = r.offset;
    const index = r.varint("the schema index");
    const schema = directory(index);
    if (schema === undefined) fail("SCHEMA_NOT_FOUND", at, `schema index ${index} was never assigned`, item);
    const owner = addressAt(r, addresses, "the owner", item);
    const bucketValues: Record<string, string> = {};
    for (const field of schema.fields) {
      at = r.offset;
      const bucket = r.u8(`the bucket of ${field.name}`);
      if (bucket === 0) continue;
      const label = field.definition.labels[bucket - 1];
      if (label === undefined) fail("INVALID_PARAMS", at, `bucket index ${bucket} of field ${field.name} is out of range (${field.definition.labels.length} labels)`, item);
      bucketValues[field.name] = label;
    }
    const proofs = proven ? decodeClaims(r, schema, owner, bucketValues, addresses, item) : undefined;
    const params: InputParams["create_attestation"] = {
      schema_id: schema.schemaId,
      owner,
      provider: schema.providerType,
      encrypted_data: bytesToHex(r.rest()),
      bucket_values: bucketValues,
      ...(proofs === undefined ? {} : { proofs }),
    };
    return { type: "create_attestation", params };
  } catch (error) {
    if (error instanceof ByteProblem) fail("INVALID_PARAMS", error.offset, error.reason, item);
    throw error;
  }
}

function addressAt(r: ByteReader, addresses: readonly Address[], what: string, item: number): Address {
  const at = r.offset;
  const index = r.varint(`${what}'s address index`);
  const address = addresses[index];
  if (address === undefined) fail("INVALID_PARAMS", at, `address index ${index} of ${what} is out of range (${addresses.length} addresses)`, item);
  return address;
}

function decodeClaims(r: ByteReader, schema: CompactSchema, owner: Address, bucketValues: Record<string, string>, addresses: readonly Address[], item: number): TlsProof[] {
  let at = r.offset;
  const count = r.u8("the number of claims");
  if (count < 1 || count > MAX_QUORUM) fail("INVALID_PARAMS", at, `${count} claims (1 to ${MAX_QUORUM})`, item);
  const fields = Object.keys(bucketValues);
  const field = fields[0];
  // The claims' parameters are rebuilt from one field's bucket: an item without exactly one cannot say them.
  if (fields.length !== 1 || field === undefined) fail("INVALID_PARAMS", at, `a proven item sets exactly one bucket field, not ${fields.length}`, item);
  // decodeAttestation took the bucket from the field's labels, and every label of a definition has a range.
  const definition = (schema.fields.find((f) => f.name === field) as CompactSchema["fields"][number]).definition;
  const range = binRange(definition, bucketValues[field] as string) as DecimalRange;
  // A quorum's claims name one URL and method, mostly: their parameters are built once per pair.
  const parametersByRequest = new Map<string, { parameters: string; hash?: Hex }>();
  const parametersOf = (url: string, method: "GET" | "POST"): { parameters: string; hash?: Hex } => {
    const key = `${method} ${url}`;
    let entry = parametersByRequest.get(key);
    if (entry === undefined) {
      entry = { parameters: canonicalJson(claimParameters({ url, method, field, range })) };
      parametersByRequest.set(key, entry);
    }
    return entry;
  };
  const proofs: TlsProof[] = [];
  let url: string | undefined;
  let providerHash: Hex | undefined;
  let timestampS = 0;
  for (let k = 0; k < count; k++) {
    at = r.offset;
    const flags = r.u8(`the flags of claim ${k}`);
    const hashFlags = flags & (PROVIDER_HASH | SAME_PROVIDER_HASH | PARAMETERS_HASH);
    if ((flags & ~KNOWN_FLAGS) !== 0 || (hashFlags !== 0 && hashFlags !== PROVIDER_HASH && hashFlags !== (PROVIDER_HASH | SAME_PROVIDER_HASH) && hashFlags !== PARAMETERS_HASH)) {
      fail("INVALID_PARAMS", at, `claim ${k}: flags ${flags} are not a known combination`, item);
    }
    if ((flags & SAME_URL) !== 0) {
      if (url === undefined) fail("INVALID_PARAMS", at, `claim ${k}: the first claim has no previous URL`, item);
    } else {
      const tailAt = r.offset;
      const tail = r.sized(`the URL path of claim ${k}`);
      let text: string;
      try {
        text = bytesToUtf8(tail);
      } catch {
        fail("INVALID_PARAMS", tailAt, `claim ${k}: the URL path is not UTF-8`, item);
      }
      url = `https://${schema.domain}${text}`;
    }
    const claimOwner = addressAt(r, addresses, `claim ${k}`, item);
    const timeAt = r.offset;
    // The first claim's time in full; a later one's as a zigzag difference from the one before (a quorum signs within seconds).
    timestampS = k === 0 ? r.u32(`the time of claim ${k}`) : timestampS + unzigzag(r.varint(`the time of claim ${k}`));
    if (timestampS < 0 || timestampS > 0xffffffff) fail("INVALID_PARAMS", timeAt, `claim ${k}: a time outside 0 to 2^32 - 1`, item);
    const epoch = r.varint(`the epoch of claim ${k}`);
    const nonce = (flags & NONCE) !== 0 ? bytesToHex(r.sized(`the nonce of claim ${k}`)) : undefined;
    const built = parametersOf(url, (flags & POST) !== 0 ? "POST" : "GET");
    if (hashFlags === 0) providerHash = undefined;
    else if (hashFlags === PARAMETERS_HASH) providerHash = built.hash ??= keccak256(stringToBytes(built.parameters));
    else if (hashFlags === PROVIDER_HASH) providerHash = bytesToHex(r.sized(`the provider hash of claim ${k}`));
    else if (providerHash === undefined) fail("INVALID_PARAMS", at, `claim ${k}: the previous claim has no provider hash`, item);
    const rs = r.take(SIGNATURE_BYTES, `the signature of claim ${k}`);
    const signature = new Uint8Array(65);
    signature.set(rs, 0);
    // EIP-2098: the top bit of s (always 0 in a low-s signature) carries y parity, so v need not travel.
    const parity = (signature[32] as number) >> 7;
    signature[32] = (signature[32] as number) & 0x7f;
    signature[64] = 27 + parity;
    const statement = (flags & STATEMENT) !== 0 ? { field, range } : undefined;
    const context = canonicalJson({ contextAddress: owner, contextMessage: schema.schemaId, nonce, providerHash, statement });
    const identifier = identifierOf("http", built.parameters, context);
    const claim = { provider: "http", parameters: built.parameters, owner: claimOwner, timestampS, context, identifier, epoch };
    proofs.push({ claim, signature: bytesToHex(signature) });
  }
  return proofs;
}

/**
 * The body of `params` as a compact item, or undefined when its layout cannot say it exactly (then it
 * travels as a JSON item). `addressIndex` puts an address in the batch's table and says where.
 */
export function encodeAttestation(params: InputParams["create_attestation"], schema: CompactSchema, addressIndex: (address: Address) => number): { kind: "attestation" | "proven"; body: Uint8Array } | undefined {
  if (params.provider !== schema.providerType || params.schema_id.toLowerCase() !== schema.schemaId) return undefined;
  if (!isHex(params.encrypted_data) || !isAddress(params.owner)) return undefined;
  // This layout has no room for a nullifier (issue 52): such an item travels as JSON until a version does.
  if (params.nullifier !== undefined) return undefined;
  const w = new ByteWriter().varint(schema.index).varint(addressIndex(params.owner));
  for (const field of schema.fields) {
    const label = Object.hasOwn(params.bucket_values, field.name) ? params.bucket_values[field.name] : undefined;
    const index = label === undefined ? 0 : field.definition.labels.indexOf(label) + 1;
    if (label !== undefined && index === 0) return undefined;
    w.u8(index);
  }
  if (params.proofs !== undefined) {
    const claims = encodeClaims(params.proofs, schema, params.bucket_values, addressIndex);
    if (claims === undefined) return undefined;
    w.bytes(claims);
  }
  w.bytes(hexToBytes(params.encrypted_data));
  return { kind: params.proofs === undefined ? "attestation" : "proven", body: w.toBytes() };
}

/**
 * Where an attestation body's bytes go (the bench's split, worked out on demand rather than on every
 * encoding): the schema index and the owner's address index as read, a byte per bucket field, the sealed
 * data as decoded, and the claims in between.
 */
export function attestationBytes(body: Uint8Array, proven: boolean, addresses: readonly Address[], directory: SchemaDirectory): AttestationBytes {
  const { params } = decodeAttestation(body, 0, proven, addresses, directory, 0);
  const r = new ByteReader(body);
  const schema = directory(r.varint("the schema index")) as CompactSchema;
  const schemaIndex = r.offset;
  r.varint("the owner's address index");
  const owner = r.offset - schemaIndex;
  const bucket = schema.fields.length;
  const sealedData = hexToBytes(params.encrypted_data).length;
  return { schemaIndex, owner, bucket, claims: body.length - schemaIndex - owner - bucket - sealedData, sealedData };
}

function encodeClaims(proofs: readonly TlsProof[], schema: CompactSchema, bucketValues: Record<string, string>, addressIndex: (address: Address) => number): Uint8Array | undefined {
  if (proofs.length < 1 || proofs.length > MAX_QUORUM) return undefined;
  const [field, ...others] = Object.keys(bucketValues);
  const definition = schema.fields.find((f) => f.name === field)?.definition;
  const range = field === undefined || others.length > 0 || definition === undefined ? undefined : binRange(definition, bucketValues[field] as string);
  if (field === undefined || range === undefined) return undefined;
  const w = new ByteWriter().u8(proofs.length);
  const prefix = `https://${schema.domain}`;
  let previousUrl: string | undefined;
  let previousHash: string | undefined;
  let previousTime: number | undefined;
  for (const { claim, signature } of proofs) {
    let parameters: { url?: unknown; method?: unknown };
    let context: Record<string, unknown>;
    try {
      parameters = JSON.parse(claim.parameters) as typeof parameters;
      context = JSON.parse(claim.context) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    const { url, method } = parameters;
    if (typeof url !== "string" || !url.startsWith(prefix) || (method !== "GET" && method !== "POST")) return undefined;
    const { nonce, providerHash, statement, ...rest } = context;
    if (Object.keys(rest).some((key) => key !== "contextAddress" && key !== "contextMessage")) return undefined;
    if (statement !== undefined && canonicalJson(statement) !== canonicalJson({ field, range })) return undefined;
    if ((nonce !== undefined && !(typeof nonce === "string" && LOWER_HEX_RE.test(nonce))) || (providerHash !== undefined && !(typeof providerHash === "string" && LOWER_HEX_RE.test(providerHash)))) return undefined;
    const sig = isHex(signature) ? hexToBytes(signature) : new Uint8Array(0);
    if (sig.length !== 65 || (sig[64] !== 27 && sig[64] !== 28) || ((sig[32] as number) & 0x80) !== 0) return undefined;
    if (!Number.isInteger(claim.timestampS) || claim.timestampS < 0 || claim.timestampS > 0xffffffff || !Number.isInteger(claim.epoch) || claim.epoch < 0 || claim.epoch > 0xffffffff) return undefined;
    if (!isAddress(claim.owner)) return undefined;
    let flags = (method === "POST" ? POST : 0) | (nonce !== undefined ? NONCE : 0) | (statement !== undefined ? STATEMENT : 0);
    if (url === previousUrl) flags |= SAME_URL;
    if (providerHash !== undefined) {
      if (providerHash === keccak256(stringToBytes(claim.parameters))) flags |= PARAMETERS_HASH;
      else flags |= providerHash === previousHash ? PROVIDER_HASH | SAME_PROVIDER_HASH : PROVIDER_HASH;
    }
    w.u8(flags);
    if ((flags & SAME_URL) === 0) w.sized(new TextEncoder().encode(url.slice(prefix.length)));
    w.varint(addressIndex(claim.owner));
    if (previousTime === undefined) w.u32(claim.timestampS);
    else w.varint(zigzag(claim.timestampS - previousTime));
    w.varint(claim.epoch);
    if (typeof nonce === "string") w.sized(hexToBytes(nonce));
    if (typeof providerHash === "string" && (flags & (PARAMETERS_HASH | SAME_PROVIDER_HASH)) === 0) w.sized(hexToBytes(providerHash));
    const rs = sig.slice(0, SIGNATURE_BYTES);
    rs[32] = (rs[32] as number) | ((sig[64] as number) - 27) << 7;
    w.bytes(rs);
    previousUrl = url;
    previousHash = typeof providerHash === "string" ? providerHash : undefined;
    previousTime = claim.timestampS;
  }
  return w.toBytes();
}

/** Zigzag: a signed difference as an unsigned varint (0, -1, 1, -2, ... as 0, 1, 2, 3, ...). */
function zigzag(n: number): number {
  return n >= 0 ? 2 * n : -2 * n - 1;
}

function unzigzag(z: number): number {
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}

/**
 * Whether two `create_attestation` params make the same writes, verdicts and notices: equal content with
 * the hex the dapp reads case-blind lower-cased, and bucket fields in the same order (the notice keeps it).
 */
export function sameAttestation(a: InputParams["create_attestation"], b: InputParams["create_attestation"]): boolean {
  const lower = (p: InputParams["create_attestation"]) => ({
    ...p,
    schema_id: p.schema_id.toLowerCase(),
    owner: p.owner.toLowerCase(),
    encrypted_data: p.encrypted_data.toLowerCase(),
    proofs: p.proofs?.map(({ claim, signature }) => ({ claim: { ...claim, owner: claim.owner.toLowerCase(), identifier: claim.identifier.toLowerCase() }, signature: signature.toLowerCase() })),
  });
  try {
    return canonicalJson(lower(a)) === canonicalJson(lower(b)) && Object.keys(a.bucket_values).join("\n") === Object.keys(b.bucket_values).join("\n");
  } catch {
    return false;
  }
}
