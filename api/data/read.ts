/**
 * A requester reading an owner's attested data (`GET /attestation/:claimId/data`, docs/api.md): who may
 * (the owner always; anyone else with an unrevoked grant for the attestation's schema, unexpired at the
 * api's clock, the same "now" as the access check) and what the api can hand over: the sealed bytes;
 * the opened JSON where its admin key opens them; for owner-sealed data, the content key the owner shared
 * with the requester (docs/consent.md), which the requester opens on its side.
 */
import nacl from "tweetnacl";
import type { Address, Hex } from "viem";
import { openOwnerSealed } from "../../common/content-seal.ts";
import { hexToBytes } from "../../common/hex.ts";
import { keyIdOf } from "../../common/ids.ts";
import { isOwnerSealed, parseOwnerSealed } from "../../common/owner-sealed.ts";
import { openSealed } from "../../common/seal.ts";
import { contentSchemaOf, namedContent, type ContentSchema } from "../../common/sealed-content.ts";
import type { GrantView } from "../../common/wire.ts";
import { ApiError } from "../errors.ts";
import type { ApiServices } from "../services.ts";
import { attestationIdOf } from "../validation.ts";

export interface AttestationData {
  claimId: Hex;
  schemaId: Hex;
  owner: Address;
  encrypted_data: Hex;
  sealedKey?: Hex;
  data?: Record<string, unknown>;
}

export type GrantDecision =
  | { kind: "allowed"; grantId: Hex }
  | { kind: "expired"; grantId: Hex; expiredAt: number }
  | { kind: "none" };

/**
 * Which of an owner's unrevoked grants lets `requester` read data of `schemaId` at `now` (Unix seconds).
 * A grant is live while `expires_at > now`, as the rollup's check_access counts it. With only expired
 * ones, the one that expired last is named: it is the one the requester most plausibly means to renew.
 */
export function decideGrant(grants: readonly GrantView[], requester: string, schemaId: string, now: number): GrantDecision {
  const wanted = grants.filter(
    (g) => g.requester.toLowerCase() === requester.toLowerCase() && g.schema_id.toLowerCase() === schemaId.toLowerCase(),
  );
  const live = wanted.find((g) => g.expires_at > now);
  if (live !== undefined) return { kind: "allowed", grantId: live.grant_id };
  let latest: GrantView | undefined;
  for (const g of wanted) if (latest === undefined || g.expires_at > latest.expires_at) latest = g;
  return latest === undefined ? { kind: "none" } : { kind: "expired", grantId: latest.grant_id, expiredAt: latest.expires_at };
}

/**
 * The opened plaintext as a JSON object: the named form as it is, the values form named by `schema`
 * (common/sealed-content.ts). The reasons are fixed text: a parser's message would quote part of the
 * plaintext, which is exactly what must not leak from a failed open.
 */
export function openJsonObject(sealed: string, secretKey: Uint8Array, schema?: ContentSchema): Record<string, unknown> {
  return jsonObjectOf(openSealed(sealed, secretKey), schema);
}

function jsonObjectOf(bytes: Uint8Array, schema: ContentSchema | undefined): Record<string, unknown> {
  const named = namedContent(bytes, schema);
  if (!named.ok) throw new ApiError("DECRYPTION_FAILED", `sealed data cannot be opened: ${named.problem}`, { reason: named.problem });
  return named.value;
}

/**
 * Owner-sealed data the admin key opens too ("owner+admin"), as a JSON object; undefined when the data is
 * sealed to the owner alone (the api holds no key that opens it, by design).
 */
function openAsAdmin(sealed: Hex, secretKey: Uint8Array, schema: ContentSchema): Record<string, unknown> | undefined {
  const adminKeyId = keyIdOf(nacl.box.keyPair.fromSecretKey(secretKey).publicKey);
  const parsed = parseOwnerSealed(hexToBytes(sealed));
  if (typeof parsed === "string" || !parsed.recipients.some((r) => r.keyId === adminKeyId)) return undefined;
  return jsonObjectOf(openOwnerSealed(sealed, secretKey, { keyId: adminKeyId }), schema);
}

/** What names the values of the schema's sealed content: its data keys and bucket fields, read from the rollup. */
async function readContentSchema(services: ApiServices, schemaId: Hex): Promise<ContentSchema> {
  return contentSchemaOf(await services.schemaDetail(schemaId));
}

/** What `requester` may read of attestation `claimId`, or the ApiError that says why not. */
export async function readAttestationData(services: ApiServices, claimId: string, requester: Address): Promise<AttestationData> {
    const view = await services.reader.query("attestation", { attestation_id: attestationIdOf(claimId) });
    const owner = view.owner.toLowerCase() as Address;
    if (requester !== owner) {
      const decision = decideGrant(await services.reader.queryAll("grants_by_owner", { owner }), requester, view.schema_id, services.now());
      if (decision.kind === "none") {
        throw new ApiError("NO_GRANT_FOUND", "No grant from the owner lets this requester read this schema's data", {
          owner,
          requester,
        });
      }
      if (decision.kind === "expired") {
        throw new ApiError("GRANT_EXPIRED", "The requester's grant for this schema has expired", {
          grant_id: decision.grantId,
          expired_at: decision.expiredAt,
        });
      }
    }
    const secretKey = services.config.encryptionSecretKey;
    const ownerSealed = isOwnerSealed(hexToBytes(view.encrypted_data));
    // Owner-sealed data: the api opens nothing of its own; a grantee gets the content key its owner
    // sealed for it (only while the grant stands), and opens the data itself.
    let sealedKey: Hex | undefined;
    if (ownerSealed && requester !== owner) {
      try {
        sealedKey = (await services.reader.query("content_key", { attestation_id: view.attestation_id, requester, at: services.now() })).sealed_key;
      } catch (error) {
        if (!(error instanceof ApiError && error.code === "NO_GRANT_FOUND")) throw error;
        throw new ApiError("NO_GRANT_FOUND", "The owner has shared no key of this attestation's data with this requester (a grant with keys, or share_keys)", { owner, requester });
      }
    }
    let opened: Record<string, unknown> | undefined;
    if (secretKey !== undefined) {
      const schema = await readContentSchema(services, view.schema_id);
      opened = ownerSealed ? openAsAdmin(view.encrypted_data, secretKey, schema) : openJsonObject(view.encrypted_data, secretKey, schema);
    }
    const data: AttestationData = {
      claimId: view.attestation_id,
      schemaId: view.schema_id,
      owner,
      encrypted_data: view.encrypted_data,
      ...(sealedKey === undefined ? {} : { sealedKey }),
      ...(opened === undefined ? {} : { data: opened }),
    };
    return data;
}
