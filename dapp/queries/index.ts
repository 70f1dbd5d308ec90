import type { QueryType } from "../../common/wire.ts";
import type { QueryModule } from "../define.ts";
import allProviderSchemas from "./all_provider_schemas.ts";
import attestation from "./attestation.ts";
import attestationsByOwner from "./attestations_by_owner.ts";
import checkAccess from "./check_access.ts";
import grantsByOwner from "./grants_by_owner.ts";
import health from "./health.ts";
import providerSchema from "./provider_schema.ts";
import encryptionKey from "./encryption_key.ts";
import tlsAttestors from "./tls_attestors.ts";
import verify from "./verify.ts";
import ownerKey from "./owner_key.ts";
import contentKey from "./content_key.ts";
import nullifierKeys from "./nullifier_keys.ts";

/** Every inspect query type; the record type makes a missing type a compile error, and a test checks it too. */
export const QUERIES: Readonly<Record<QueryType, QueryModule>> = {
  all_provider_schemas: allProviderSchemas,
  provider_schema: providerSchema,
  attestations_by_owner: attestationsByOwner,
  attestation,
  check_access: checkAccess,
  grants_by_owner: grantsByOwner,
  health,
  tls_attestors: tlsAttestors,
  encryption_key: encryptionKey,
  verify,
  owner_key: ownerKey,
  content_key: contentKey,
  nullifier_keys: nullifierKeys,
};
