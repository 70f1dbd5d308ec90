/**
 * What the api must know that no query returns: the schemas' registration content (the `domain` a claim
 * is matched on is not in any query result) and the latest encryption public key (the dapp has no key
 * query). Both are learned from the payloads of the inputs behind `schema:registered` and
 * `key:registered` notices, and from the api's own accepted registrations.
 */
import type { Hex } from "viem";
import { hexToUtf8 } from "../../common/hex.ts";
import { keyIdOf, schemaIdOf, type SchemaContent } from "../../common/ids.ts";
import type { InputParams, NoticeEvent } from "../../common/wire.ts";

export interface KnownKey {
  keyId: Hex;
  publicKey: string;
  inputIndex: number;
}

export class RegistryCatalog {
  private readonly schemas = new Map<string, SchemaContent>();
  /** requester → the owners who granted it something (from `grant:created` notices): who to ask check_access. */
  private readonly grantors = new Map<string, Set<string>>();
  /** schema id → field → label → attestations, from every `attestation:created` notice read. */
  private readonly tally = new Map<string, Map<string, Map<string, number>>>();
  private key: KnownKey | undefined;

  get latestKey(): KnownKey | undefined {
    return this.key;
  }

  schemaContent(schemaId: string): SchemaContent | undefined {
    return this.schemas.get(schemaId.toLowerCase());
  }

  /** Schemas whose provider and domain match, in registration order. */
  schemasFor(provider: string, domain: string): { schemaId: Hex; content: SchemaContent }[] {
    const out: { schemaId: Hex; content: SchemaContent }[] = [];
    for (const [schemaId, content] of this.schemas) {
      if (content.provider === provider && content.domain.toLowerCase() === domain.toLowerCase()) {
        out.push({ schemaId: schemaId as Hex, content });
      }
    }
    return out;
  }

  learnSchema(content: SchemaContent): Hex {
    const schemaId = schemaIdOf(content);
    if (!this.schemas.has(schemaId)) this.schemas.set(schemaId, content);
    return schemaId;
  }

  /** Keys arrive in input order; a later input's key replaces an earlier one, never the reverse. */
  learnKey(publicKeyBase64: string, inputIndex: number): Hex {
    const keyId = keyIdOf(new Uint8Array(Buffer.from(publicKeyBase64, "base64")));
    if (this.key === undefined || inputIndex >= this.key.inputIndex) {
      this.key = { keyId, publicKey: publicKeyBase64, inputIndex };
    }
    return keyId;
  }

  /**
   * Whether a notice can only be learned from with its input's payload: registrations, whose content the
   * notice does not carry. Every other notice is learned from alone, so the follower reads an input's
   * payload only for these (a batch of 200 claims would otherwise bring its 200 KB once per notice).
   */
  static needsInput(event: NoticeEvent): boolean {
    return event.event === "schema:registered" || event.event === "key:registered";
  }

  /**
   * Applies one notice; the input payload is only trusted when it hashes to the id the dapp announced. A
   * `batch` input's items are searched for the one that does (DECISIONS.md section 2). `inputPayload` is
   * needed only where `needsInput` says so; without it such a notice teaches nothing.
   */
  learnFromNotice(event: NoticeEvent, inputIndex: number, inputPayload?: Hex): void {
    if (event.event === "attestation:created") {
      this.count(event.data.schema_id, event.data.bucket_values);
      return;
    }
    if (event.event === "grant:created") {
      const { owner, requester } = event.data as { owner?: unknown; requester?: unknown };
      if (typeof owner !== "string" || typeof requester !== "string") return;
      let owners = this.grantors.get(requester.toLowerCase());
      if (owners === undefined) {
        owners = new Set();
        this.grantors.set(requester.toLowerCase(), owners);
      }
      owners.add(owner.toLowerCase());
      return;
    }
    if (!RegistryCatalog.needsInput(event) || inputPayload === undefined) return;
    if (event.event === "schema:registered") {
      const registration = announcedSchema(inputPayload, event.data.schema_id);
      if (registration !== undefined) this.learnSchema(schemaContentOf(registration));
      return;
    }
    for (const candidate of registrationsIn(inputPayload)) {
      if (event.event === "key:registered" && candidate.type === "register_encryption_key") {
        if (this.learnAnnouncedKey(candidate.params as InputParams["register_encryption_key"], event.data.keyId, inputIndex)) return;
      }
    }
  }

  /** The owners that ever granted `requester` something, in the order their first grant was read. */
  grantorsOf(requester: string): string[] {
    return [...(this.grantors.get(requester.toLowerCase()) ?? [])];
  }

  /** Attestations per bucket label of each field of a schema, as counted from the notices read so far. */
  bucketCounts(schemaId: string): Record<string, Record<string, number>> {
    const fields = this.tally.get(schemaId.toLowerCase());
    const out: Record<string, Record<string, number>> = {};
    for (const [field, labels] of fields ?? []) out[field] = Object.fromEntries(labels);
    return out;
  }

  private count(schemaId: unknown, bucketValues: unknown): void {
    // Notices come from the dapp, but a node is outside the api: count only well-formed ones.
    if (typeof schemaId !== "string" || typeof bucketValues !== "object" || bucketValues === null) return;
    let fields = this.tally.get(schemaId.toLowerCase());
    if (fields === undefined) {
      fields = new Map();
      this.tally.set(schemaId.toLowerCase(), fields);
    }
    for (const [field, label] of Object.entries(bucketValues)) {
      if (typeof label !== "string") continue;
      let labels = fields.get(field);
      if (labels === undefined) {
        labels = new Map();
        fields.set(field, labels);
      }
      labels.set(label, (labels.get(label) ?? 0) + 1);
    }
  }

  private learnAnnouncedKey(p: InputParams["register_encryption_key"], announced: string, inputIndex: number): boolean {
    if (typeof p.publicKey !== "string") return false;
    const bytes = Buffer.from(p.publicKey, "base64");
    if (bytes.length !== 32 || keyIdOf(new Uint8Array(bytes)) !== announced.toLowerCase()) return false;
    this.learnKey(p.publicKey, inputIndex);
    return true;
  }
}

/** A schema's registration content, as its id is computed from it. */
function schemaContentOf(p: InputParams["register_schema"]): SchemaContent {
  return {
    provider: p.provider,
    flowType: p.flowType,
    domain: p.domain,
    bucketDefinitions: p.bucketDefinitions,
    dataKeys: p.dataKeys,
    freshnessHalfLife: p.freshnessHalfLife,
    ...(p.proof === "attestor" ? { proof: "attestor" as const } : {}),
    ...(p.proof === "attestor" && p.attestorQuorum !== undefined && p.attestorQuorum > 1 ? { attestorQuorum: p.attestorQuorum } : {}),
    ...(p.validityPeriod !== undefined ? { validityPeriod: p.validityPeriod } : {}),
    ...(p.requireSignedConsent === true ? { requireSignedConsent: true } : {}),
    ...(p.sealing !== undefined ? { sealing: p.sealing } : {}),
    // Part of the id (common/ids.ts): without it a unique schema's registration would match no announced id.
    ...(p.accountIdField !== undefined ? { accountIdField: p.accountIdField } : {}),
  };
}

/** The `{type, params}` envelopes of an input: itself, or a `batch` input's items; none when it is not JSON. */
function registrationsIn(inputPayload: Hex): { type: unknown; params: Record<string, unknown> }[] {
  let envelope: unknown;
  try {
    envelope = JSON.parse(hexToUtf8(inputPayload));
  } catch {
    return [];
  }
  const candidates = isEnvelope(envelope) && envelope.type === "batch" ? batchItems(envelope.params) : [envelope];
  return candidates.filter(isEnvelope);
}

/**
 * The registration in an input (alone or a batch's item) whose content hashes to the id the dapp announced:
 * an input payload is trusted only that far (the node is outside the api).
 */
export function announcedSchema(inputPayload: Hex, announced: string): InputParams["register_schema"] | undefined {
  for (const candidate of registrationsIn(inputPayload)) {
    if (candidate.type !== "register_schema") continue;
    const p = candidate.params as InputParams["register_schema"];
    try {
      if (schemaIdOf(schemaContentOf(p)) === announced.toLowerCase()) return p;
    } catch {
      // Content that cannot be hashed canonically was not what the dapp registered.
    }
  }
  return undefined;
}

function isEnvelope(value: unknown): value is { type: unknown; params: Record<string, unknown> } {
  if (typeof value !== "object" || value === null) return false;
  const params = (value as { params?: unknown }).params;
  return typeof params === "object" && params !== null;
}

function batchItems(params: Record<string, unknown>): unknown[] {
  return Array.isArray(params.items) ? params.items : [];
}
