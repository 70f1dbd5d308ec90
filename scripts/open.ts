/**
 * `npm run open -- <claimId> --token <user JWT> --secret-file <file>`: reads an attestation's data through
 * the api as its owner or as a grantee (the token's address) and opens it here with the caller's own
 * secret key: the api holds no key that opens owner-sealed data, and the plaintext never leaves this
 * process. The secret key file holds the base64 of the 32-byte NaCl secret key (`npm run consent -- key`).
 */
import { readFileSync } from "node:fs";
import type { Hex } from "viem";
import { AttestationApiError, AttestationClient } from "../client/index.ts";
import { contentSchemaOf } from "../common/sealed-content.ts";
import { boxKeyPairOf, openAttestedData } from "../client/keys.ts";
import { SealError } from "../common/seal.ts";
import { parseArgs, runScript, UsageError } from "./lib/cli.ts";

const USAGE = "npm run open -- <claimId> --token <user JWT> --secret-file <file holding the base64 NaCl secret key> [--api URL]";

runScript(async () => {
  const { positional, options } = parseArgs(process.argv.slice(2), ["--token", "--secret-file", "--api"]);
  const [claimId, ...rest] = positional;
  if (claimId === undefined || !/^0x[0-9a-fA-F]{64}$/.test(claimId) || rest.length > 0) throw new UsageError("expected one attestation id (0x and 64 hex digits)");
  const token = options.get("--token");
  const secretFile = options.get("--secret-file");
  if (token === undefined) throw new UsageError("--token: the user token of the owner or of a grantee");
  if (secretFile === undefined) throw new UsageError("--secret-file: the file holding your base64 NaCl secret key");
  let mine;
  try {
    mine = boxKeyPairOf(readFileSync(secretFile, "utf8"));
  } catch (error) {
    throw new UsageError(`--secret-file ${secretFile}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const api = new AttestationClient({ baseUrl: options.get("--api") ?? process.env.API_URL ?? "http://127.0.0.1:8001", token });
  try {
    const read = await api.attestationData(claimId);
    // The schema's public view names the values of data sealed as values alone (common/sealed-content.ts).
    const schema = await api.schema(read.schemaId);
    const data = openAttestedData(read.encrypted_data as Hex, mine, read.sealedKey as Hex | undefined, contentSchemaOf(schema));
    console.log(JSON.stringify({ claimId: read.claimId, owner: read.owner, schemaId: read.schemaId, data }, null, 2));
    return 0;
  } catch (error) {
    if (error instanceof AttestationApiError) {
      console.error(`${error.code}: ${error.message}${error.details === undefined ? "" : ` ${JSON.stringify(error.details)}`}`);
      return 1;
    }
    if (error instanceof SealError) {
      console.error(`${error.code}: ${error.message}`);
      return 1;
    }
    throw error;
  }
}, USAGE);
