/**
 * `npm run consent`: an owner signs a grant or a revoke of its data with its own key (EIP-712, in the
 * rollup's domain: GET /api/core/consent/domain), so the rollup, not the api, is the judge of its consent
 * (DECISIONS.md section 16). With `--token` the signed grant or revoke goes through the api; without, the
 * JSON body to send is printed. The key never leaves this process.
 */
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { isAddress } from "../common/address.ts";
import { AttestationApiError, AttestationClient } from "../client/index.ts";
import { signGrantConsent, signRevokeConsent } from "../client/consent.ts";
import { boxKeyPairOf, newBoxKeyPair, shareContentKeys, signOwnerKey, type BoxKeyPair } from "../client/keys.ts";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs, runScript, UsageError } from "./lib/cli.ts";

const USAGE = [
  "npm run consent -- grant --requester <address> --schema <schema id> --expires <unix seconds | +seconds> [options]",
  "npm run consent -- revoke <grant id> [options]",
  "npm run consent -- key [--secret-file <file>] [options]   (registers your own NaCl key; a new key pair is written to the file when it does not exist)",
  "  grant takes --share --secret-file <file>: the content keys of your attestations of the schema, sealed for the requester's key",
  "  options: --key <owner's 0x private key> (default OWNER_KEY) --token <user JWT> (send through the api; else print the body)",
  "           --api URL (default API_URL or http://127.0.0.1:8001) --ttl <seconds the signature stays good, default 3600>",
].join("\n");

const HEX32 = /^0x[0-9a-fA-F]{64}$/;
const KEY = /^0x[0-9a-fA-F]{64}$/;

/** The key pair whose secret key a file holds (base64). */
function secretPair(file: string | undefined): BoxKeyPair {
  if (file === undefined) throw new UsageError("--secret-file: the file holding your base64 NaCl secret key");
  try {
    return boxKeyPairOf(readFileSync(file, "utf8"));
  } catch (error) {
    throw new UsageError(`--secret-file ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Every attestation of the owner of the grant's schema, its content key sealed for the requester's key. */
async function contentKeysFor(api: AttestationClient, owner: Address, grant: { requester: Address; schemaId: Hex }, mine: BoxKeyPair) {
  const requesterKey = await api.ownerKey(grant.requester);
  const attestations = [];
  for (const item of await api.attestations(owner)) {
    const view = await api.attestation(item.claimId);
    if (view.schemaId.toLowerCase() !== grant.schemaId.toLowerCase()) continue;
    const sealed = await api.attestationData(item.claimId);
    attestations.push({ claimId: item.claimId as Hex, encryptedData: sealed.encrypted_data as Hex });
  }
  if (attestations.length === 0) throw new UsageError(`--share: ${owner} holds no attestation of schema ${grant.schemaId}`);
  return shareContentKeys(mine, requesterKey.publicKey, attestations);
}

/** `+N` is N seconds from now; a plain number is a Unix time. */
function expiryOf(text: string, now: number): number {
  const relative = /^\+(\d{1,10})$/.exec(text);
  const value = relative !== null ? now + Number(relative[1]) : /^\d{1,12}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(value) || value <= now) throw new UsageError(`--expires: expected a Unix time in the future or +seconds, not ${text}`);
  return value;
}

runScript(async () => {
  const { positional, options, flags } = parseArgs(process.argv.slice(2), ["--requester", "--schema", "--expires", "--key", "--token", "--api", "--ttl", "--secret-file"], ["--share"]);
  const [action, grantId, ...rest] = positional;
  if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest.join(" ")}`);
  const key = options.get("--key") ?? process.env.OWNER_KEY;
  if (key === undefined || !KEY.test(key)) throw new UsageError("--key (or OWNER_KEY): the owner's 0x-prefixed 32-byte private key");
  const ttlText = options.get("--ttl") ?? "3600";
  if (!/^\d{1,7}$/.test(ttlText) || Number(ttlText) === 0) throw new UsageError(`--ttl: expected a positive number of seconds, not ${ttlText}`);
  const owner = privateKeyToAccount(key as Hex);
  const token = options.get("--token");
  const api = new AttestationClient({ baseUrl: options.get("--api") ?? process.env.API_URL ?? "http://127.0.0.1:8001", ...(token === undefined ? {} : { token }) });
  const domain = await api.consentDomain();
  const signing = { ttlSeconds: Number(ttlText) };
  try {
    if (action === "grant") {
      const requester = options.get("--requester");
      const schemaId = options.get("--schema");
      const expires = options.get("--expires");
      if (requester === undefined || !isAddress(requester)) throw new UsageError("--requester: the address to grant access to");
      if (schemaId === undefined || !HEX32.test(schemaId)) throw new UsageError("--schema: a 0x-prefixed 32-byte schema id");
      if (expires === undefined) throw new UsageError("--expires: when the grant ends");
      const grant = { requester: requester as Address, schemaId: schemaId as Hex, expiresAt: expiryOf(expires, Math.floor(Date.now() / 1000)) };
      const consent = await signGrantConsent(owner, domain, grant, signing);
      const keys = flags.has("--share") ? await contentKeysFor(api, owner.address, grant, secretPair(options.get("--secret-file"))) : undefined;
      if (token === undefined) {
        console.log(JSON.stringify({ ...grant, consent, ...(keys === undefined ? {} : { keys }) }, null, 2));
        return 0;
      }
      const granted = await api.grant({ ...grant, consent, ...(keys === undefined ? {} : { keys }) });
      console.log(`grant ${granted.grantId} signed by ${owner.address} (transaction ${granted.txHash})`);
      return 0;
    }
    if (action === "key") {
      const file = options.get("--secret-file") ?? "owner-key.secret";
      let pair: BoxKeyPair;
      if (existsSync(file)) pair = secretPair(file);
      else {
        pair = newBoxKeyPair();
        writeFileSync(file, `${Buffer.from(pair.secretKey).toString("base64")}\n`, { mode: 0o600 });
        console.error(`a new key pair: its secret key is in ${file} (keep it; it alone opens your data)`);
      }
      const consent = await signOwnerKey(owner, domain, pair.keyId, signing.ttlSeconds);
      if (token === undefined) {
        console.log(JSON.stringify({ publicKey: pair.publicKey, consent }, null, 2));
        return 0;
      }
      const registered = await api.registerOwnerKey(pair.publicKey, consent);
      console.log(`key ${registered.keyId} registered for ${owner.address} (transaction ${registered.txHash})`);
      return 0;
    }
    if (action === "revoke") {
      if (grantId === undefined || !HEX32.test(grantId)) throw new UsageError("revoke needs the grant id");
      const consent = await signRevokeConsent(owner, domain, grantId as Hex, signing);
      if (token === undefined) {
        console.log(JSON.stringify({ consent }, null, 2));
        return 0;
      }
      await api.revokeGrant(grantId, consent);
      console.log(`grant ${grantId} revoked, signed by ${owner.address}`);
      return 0;
    }
  } catch (error) {
    if (!(error instanceof AttestationApiError)) throw error;
    console.error(`${error.code}: ${error.message}${error.details === undefined ? "" : ` ${JSON.stringify(error.details)}`}`);
    return 1;
  }
  throw new UsageError(action === undefined ? "expected grant, revoke or key" : `unknown action ${action}: grant, revoke or key`);
}, USAGE);
