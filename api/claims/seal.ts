/**
 * Sealing a claim's data for whoever the schema says may open it (docs/consent.md): the registered admin
 * key (the specification's way), or the owner's own key under a fresh content key (and the admin's too for
 * "owner+admin"). The keys are public keys the rollup holds; the api never needs a secret one to seal.
 */
import type { Address, Hex } from "viem";
import { sealToOwner } from "../../common/content-seal.ts";
import { sealAnonymous } from "../../common/seal.ts";
import { ApiError } from "../errors.ts";
import type { ChosenSchema } from "./schema.ts";
import { catchUp } from "./schema.ts";
import type { ClaimServices } from "./services.ts";

/** The admin's registered key, learned from the rollup's notices (catching up once when none is known). */
async function adminKey(services: ClaimServices): Promise<string> {
  if (services.catalog.latestKey === undefined) await catchUp(services);
  const key = services.catalog.latestKey;
  if (key === undefined) throw new ApiError("ENCRYPTION_KEY_MISSING", "No encryption key is registered");
  return key.publicKey;
}

/** The owner's newest own key, read from the rollup (query owner_key). */
async function ownerKey(services: ClaimServices, owner: Address, schemaId: Hex): Promise<string> {
  try {
    return (await services.reader.query("owner_key", { owner })).public_key;
  } catch (error) {
    if (error instanceof ApiError && error.code === "NOT_FOUND") {
      throw new ApiError("OWNER_KEY_MISSING", `Schema ${schemaId} seals data to its owner's key, and ${owner} has registered none`, { owner, schema_id: schemaId });
    }
    throw error;
  }
}

/**
 * Checks that the keys the schema needs are there (before any provider is asked or attestor paid), and
 * returns the sealer for the plaintext.
 */
export async function sealerFor(services: ClaimServices, schema: ChosenSchema, owner: Address): Promise<(plaintext: Uint8Array) => Hex> {
  if (schema.sealing === "admin") {
    const admin = await adminKey(services);
    // The sealed box: its nonce is derived, not sent (24 bytes less on chain; common/seal.ts).
    return (plaintext) => sealAnonymous(plaintext, admin);
  }
  const recipients = [await ownerKey(services, owner, schema.schemaId)];
  if (schema.sealing === "owner+admin") recipients.push(await adminKey(services));
  return (plaintext) => sealToOwner(plaintext, recipients);
}
