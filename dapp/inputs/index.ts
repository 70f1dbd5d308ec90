import type { InputKind } from "../../common/wire.ts";
import type { InputModule } from "../define.ts";
import createAttestation from "./create_attestation.ts";
import grantAccess from "./grant_access.ts";
import registerEncryptionKey from "./register_encryption_key.ts";
import registerSchema from "./register_schema.ts";
import registerOwnerKey from "./register_owner_key.ts";
import revokeAttestation from "./revoke_attestation.ts";
import revokeGrant from "./revoke_grant.ts";
import setNullifierKeys from "./set_nullifier_keys.ts";
import setRole from "./set_role.ts";
import setTlsAttestor from "./set_tls_attestor.ts";
import shareKeys from "./share_keys.ts";

/** Every advance input kind; the record type makes a missing kind a compile error, and a test checks it too. */
export const INPUTS: Readonly<Record<InputKind, InputModule>> = {
  register_schema: registerSchema,
  register_encryption_key: registerEncryptionKey,
  create_attestation: createAttestation,
  grant_access: grantAccess,
  revoke_grant: revokeGrant,
  set_role: setRole,
  set_tls_attestor: setTlsAttestor,
  revoke_attestation: revokeAttestation,
  register_owner_key: registerOwnerKey,
  share_keys: shareKeys,
  set_nullifier_keys: setNullifierKeys,
};
