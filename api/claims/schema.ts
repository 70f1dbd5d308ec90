/**
 * The schema a claim is recorded under (DECISIONS.md section 5): the one named, else the most recent one
 * for the provider and the URL's host that buckets the field; its definition must be the claim's.
 */
import type { Hex } from "viem";
import { sameBucketDefinition, type BucketDefinition } from "../../common/buckets.ts";
import type { ProofKind } from "../../common/tls-claim.ts";
import type { Sealing, SchemaDetail } from "../../common/wire.ts";
import { ApiError } from "../errors.ts";
import type { ClaimServices } from "./services.ts";

export interface ChosenSchema {
  schemaId: Hex;
  domain: string;
  definition: BucketDefinition;
  dataKeys: string[];
  /** Every bucket field of the schema: whether the sealed content names its values (common/sealed-content.ts). */
  bucketFields: string[];
  proof: ProofKind;
  /** How many distinct attestors must sign (1 unless the schema requires proof by a quorum). */
  quorum: number;
  /** Whose keys its data is sealed to (docs/consent.md). */
  sealing: Sealing;
  /** The field naming the provider account, for a schema unique per account (docs/nullifiers.md). */
  accountIdField: string | undefined;
}

/**
 * Reads the notices the follower has not read yet. The follower polls every NOTICE_POLL_MS, so a claim
 * uses what it knows and catches up only when that lacks something (a schema or key registered a moment
 * ago, through another replica or straight to the InputBox). A node that cannot be read leaves what we
 * already know.
 */
export function catchUp(services: ClaimServices): Promise<void> {
  return services.follower.sync().catch(() => undefined);
}

export async function chooseSchema(services: ClaimServices, provider: string, host: string, field: string, schemaId: Hex | undefined): Promise<ChosenSchema> {
  if (schemaId !== undefined) return namedSchema(services, provider, host, field, schemaId);
  let candidates = services.catalog.schemasFor(provider, host);
  if (!candidates.some((s) => s.content.bucketDefinitions[field] !== undefined)) {
    await catchUp(services);
    candidates = services.catalog.schemasFor(provider, host);
  }
  const latest = candidates[candidates.length - 1];
  if (latest === undefined) {
    throw new ApiError("SCHEMA_NOT_FOUND", `No ${provider} schema is registered for ${host}`, { schema_id: null, provider, domain: host });
  }
  const chosen = [...candidates].reverse().find((s) => s.content.bucketDefinitions[field] !== undefined);
  const definition = chosen?.content.bucketDefinitions[field];
  if (chosen === undefined || definition === undefined) throw noDefinition(latest.schemaId, field);
  return {
    schemaId: chosen.schemaId,
    domain: chosen.content.domain,
    definition,
    dataKeys: chosen.content.dataKeys,
    bucketFields: Object.keys(chosen.content.bucketDefinitions),
    proof: chosen.content.proof ?? "none",
    quorum: chosen.content.attestorQuorum ?? 1,
    sealing: chosen.content.sealing ?? "admin",
    accountIdField: chosen.content.accountIdField,
  };
}

/**
 * A schema named by id; `host`, when given, must be its domain. Schemas never change, so one the api has
 * learned from the rollup's notices is answered from what it knows; another is read from the rollup.
 */
export async function namedSchema(services: ClaimServices, provider: string, host: string | undefined, field: string, schemaId: Hex): Promise<ChosenSchema> {
  const known = services.catalog.schemaContent(schemaId);
  if (known !== undefined) {
    return checkedSchema(schemaId, provider, host, field, {
      provider_type: known.provider,
      domain: known.domain,
      bucket_definitions: known.bucketDefinitions,
      data_keys: known.dataKeys,
      proof: known.proof ?? "none",
      attestor_quorum: known.attestorQuorum ?? 1,
      sealing: known.sealing ?? "admin",
      account_id_field: known.accountIdField ?? null,
    });
  }
  return checkedSchema(schemaId, provider, host, field, await services.reader.query("provider_schema", { schema_id: schemaId }));
}

function checkedSchema(
  schemaId: Hex,
  provider: string,
  host: string | undefined,
  field: string,
  schema: Pick<SchemaDetail, "provider_type" | "domain" | "bucket_definitions" | "data_keys" | "proof" | "attestor_quorum" | "sealing" | "account_id_field">,
): ChosenSchema {
  if (schema.provider_type !== provider) {
    throw new ApiError("INVALID_REQUEST", `Schema ${schemaId} is for provider ${schema.provider_type}`, {
      field: "provider",
      issue: `schema ${schemaId} expects provider ${schema.provider_type}`,
    });
  }
  if (host !== undefined && schema.domain.toLowerCase() !== host) {
    throw new ApiError("INVALID_REQUEST", `The URL's host is not the schema's domain ${schema.domain}`, { field: "params.url", issue: `host must be ${schema.domain}` });
  }
  const definition = schema.bucket_definitions[field];
  if (definition === undefined) throw noDefinition(schemaId, field);
  return {
    schemaId,
    domain: schema.domain,
    definition,
    dataKeys: schema.data_keys,
    bucketFields: Object.keys(schema.bucket_definitions),
    proof: schema.proof,
    quorum: schema.attestor_quorum,
    sealing: schema.sealing,
    accountIdField: schema.account_id_field ?? undefined,
  };
}

/** The claim's definition must be the schema's for the field (DECISIONS.md section 4). */
export function assertSameDefinition(schema: ChosenSchema, field: string, claimed: BucketDefinition): void {
  if (!sameBucketDefinition(claimed, schema.definition)) {
    throw new ApiError("INVALID_REQUEST", `bucketDefinition differs from schema ${schema.schemaId}'s for ${field}`, {
      field: "bucketDefinition",
      issue: `must equal the schema's definition for ${field}`,
    });
  }
}

function noDefinition(schemaId: Hex, field: string): ApiError {
  return new ApiError("INVALID_REQUEST", `Schema ${schemaId} has no bucket definition for ${field}`, {
    field: "bucketDefinition.field",
    issue: `schema ${schemaId} defines no bucket for ${field}`,
  });
}
