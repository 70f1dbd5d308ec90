/**
 * `npm run prove`: a claim proven on this machine (client/prove.ts). Reads the schema and the registered
 * encryption key from the rollup, proves through the schema's quorum of attestors that the provider's
 * value lies in its bucket (the request and its headers go only to the provider, inside TLS), seals the
 * data here, and records the attestation: through the api (`--token`, an extension endpoint that never
 * sees a credential or the value) or straight to the InputBox from the owner's wallet (`--key`/`--sender`).
 * Prints one JSON line. Exit 0: recorded; 1: refused (the specification's code and details on stderr).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { decodeJwt } from "jose";
import type { Address, Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { AttestationApiError, AttestationClient } from "../client/index.ts";
import { keysOfWire } from "../common/claim-nullifier.ts";
import { attestationInput, proveOnUserSide, UserProveError, type ProvingSchema, type SealingKeys } from "../client/prove.ts";
import { hexToUtf8 } from "../common/hex.ts";
import { writeIdOf } from "../common/ids.ts";
import { PROOF_MODES, type ProofMode } from "../common/tls-claim.ts";
import type { InspectEnvelope, QueryResults, Sealing } from "../common/wire.ts";
import { loadEndpoints, parseArgs, parseSender, runScript, UsageError } from "./lib/cli.ts";
import { RollupClient, type Sender } from "./lib/rollup-client.ts";
import { loadStartOptions, StartConfigError } from "./lib/stack-config.ts";
import { stackUrls } from "./lib/stack-pieces.ts";

const USAGE = [
  "npm run prove -- --url <https URL> --schema <schema id> [--field <path>] [--header 'Name: value']... [--method GET|POST]",
  "    [--mode zk|reveal] [--attestor ws://host:port/ws]... [--ca-files <pem,...>]",
  "    (--token <user JWT> [--api URL] | --key <owner's 0x private key> | --sender <hardhat account N>)",
  "  the rollup's node: ROLLUP_URL or NODE_PORT, ROLLUPS; the chain: RPC_URL or CHAIN_PORT (docs/provider.md)",
].join("\n");

/**
 * The local stack's first k attestors, where `npm start -- --attestors k` runs them with this environment:
 * 8003 upward past the ports other pieces' variables name (8003, 8004, 8006: 8005 is the publisher's).
 */
function localAttestorUrls(k: number): string[] {
  try {
    return stackUrls(loadStartOptions({ ...process.env, ATTESTORS: String(k), START_ATTESTOR: "on" }, [], process.cwd()).settings).attestors;
  } catch (error) {
    if (error instanceof StartConfigError) throw new UsageError(`where the local stack's attestors are: ${error.message} (or name them: --attestor, ATTESTOR_URL)`);
    throw error;
  }
}

const VALUED = ["--url", "--schema", "--field", "--method", "--mode", "--attestor", "--ca-files", "--token", "--api", "--key", "--sender", "--header"];

/** `--header` and `--attestor` may repeat; parseArgs keeps one value per option, so they are taken out first. */
function repeated(args: readonly string[], name: string): { values: string[]; rest: string[] } {
  const values: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== name) {
      rest.push(args[i] as string);
      continue;
    }
    const value = args[++i];
    if (value === undefined) throw new UsageError(`${name} needs a value`);
    values.push(value);
  }
  return { values, rest };
}

function headerOf(text: string): [string, string] {
  const colon = text.indexOf(":");
  if (colon <= 0) throw new UsageError(`--header expects 'Name: value', not ${JSON.stringify(text)}`);
  return [text.slice(0, colon).trim(), text.slice(colon + 1).trim()];
}

async function query<T extends keyof QueryResults>(client: RollupClient, type: T, params: Record<string, unknown>): Promise<QueryResults[T]> {
  const envelope: InspectEnvelope = await client.inspect({ type, params });
  const report = envelope.reports[0];
  if (envelope.status !== "Accepted" || report === undefined) {
    throw new Error(`the rollup refused ${type}: ${envelope.exception_payload === null ? "no report" : hexToUtf8(envelope.exception_payload)}`);
  }
  return JSON.parse(hexToUtf8(report.payload)) as QueryResults[T];
}

/** The keys the schema's data is sealed to, read from the rollup; undefined when the owner has registered none. */
async function sealingKeysOf(client: RollupClient, sealing: Sealing, owner: Address): Promise<SealingKeys | undefined> {
  const admin = async () => (await query(client, "encryption_key", {})).public_key;
  if (sealing === "admin") return { kind: "admin", publicKey: await admin() };
  const envelope = await client.inspect({ type: "owner_key", params: { owner } });
  const report = envelope.reports[0];
  if (envelope.status !== "Accepted" || report === undefined) return undefined;
  const own = (JSON.parse(hexToUtf8(report.payload)) as QueryResults["owner_key"]).public_key;
  return { kind: "owner", publicKeys: sealing === "owner+admin" ? [own, await admin()] : [own] };
}

runScript(async () => {
  const headers = repeated(process.argv.slice(2), "--header");
  const attestors = repeated(headers.rest, "--attestor");
  const { positional, options } = parseArgs(attestors.rest, VALUED);
  if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0] as string}`);
  const url = options.get("--url");
  const schemaId = options.get("--schema");
  if (url === undefined) throw new UsageError("--url is required");
  if (schemaId === undefined || !/^0x[0-9a-fA-F]{64}$/.test(schemaId)) throw new UsageError("--schema must be a schema id (0x and 64 hex digits)");
  const method = options.get("--method") ?? "GET";
  if (method !== "GET" && method !== "POST") throw new UsageError("--method must be GET or POST");
  const mode = (options.get("--mode") ?? "zk") as ProofMode;
  if (!PROOF_MODES.includes(mode)) throw new UsageError(`--mode must be ${PROOF_MODES.join(" or ")}`);
  // attestor/prover.ts compiled (toolkit/process-build.ts), as the test suites run it: no tsx in the provers.
  const proverModule = process.env.PROVER_MODULE === undefined || process.env.PROVER_MODULE === "" ? undefined : process.env.PROVER_MODULE;
  if (proverModule !== undefined && !existsSync(proverModule)) throw new UsageError(`PROVER_MODULE: no such file: ${proverModule}`);
  const token = options.get("--token") ?? process.env.TOKEN;
  const key = options.get("--key");
  const senderOption = options.get("--sender");
  const ways = [token, key, senderOption].filter((w) => w !== undefined).length;
  if (ways !== 1) throw new UsageError("give exactly one of --token (record through the api), --key or --sender (send it yourself)");

  let owner: Address;
  let sender: Sender | undefined;
  if (token !== undefined) {
    let sub: unknown;
    try {
      sub = decodeJwt(token).sub;
    } catch {
      throw new UsageError("--token is not a JWT");
    }
    if (typeof sub !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(sub)) throw new UsageError("--token names no address (its sub)");
    owner = sub.toLowerCase() as Address;
  } else if (key !== undefined) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new UsageError("--key must be a 0x-prefixed 32-byte hex private key");
    const account = privateKeyToAccount(key as Hex);
    sender = account;
    owner = account.address.toLowerCase() as Address;
  } else {
    const parsed = parseSender(senderOption, "--sender");
    if (typeof parsed !== "number") throw new UsageError("--sender must be a hardhat account number (or use --key)");
    const client = new RollupClient(loadEndpoints(process.env));
    sender = parsed;
    owner = client.account(parsed).address.toLowerCase() as Address;
  }

  const rollup = new RollupClient(loadEndpoints(process.env));
  const schema = await query(rollup, "provider_schema", { schema_id: schemaId.toLowerCase() });
  const fields = Object.keys(schema.bucket_definitions);
  const field = options.get("--field") ?? (fields.length === 1 ? fields[0] : undefined);
  if (field === undefined) throw new UsageError(`--field is required: schema ${schemaId} buckets ${fields.join(", ")}`);
  const definition = schema.bucket_definitions[field];
  if (definition === undefined) throw new UsageError(`schema ${schemaId} has no bucket definition for ${field}`);
  const sealTo = await sealingKeysOf(rollup, schema.sealing, owner);
  if (sealTo === undefined) {
    console.error(`OWNER_KEY_MISSING: schema ${schema.schema_id} seals data to its owner's key, and ${owner} has registered none (npm run consent -- key)`);
    return 1;
  }
  const provingSchema: ProvingSchema = {
    schemaId: schema.schema_id,
    domain: schema.domain,
    field,
    definition,
    quorum: schema.attestor_quorum,
    dataKeys: schema.data_keys,
    bucketFields: fields,
    // A schema unique per account: its claim carries a nullifier, finished against the rollup's key set.
    ...(schema.account_id_field === null ? {} : { nullifier: { accountField: schema.account_id_field, keys: keysOfWire(await query(rollup, "nullifier_keys", {})) } }),
  };
  const attestorUrls =
    attestors.values.length > 0 ? attestors.values : (process.env.ATTESTOR_URL?.split(",").filter((u) => u !== "") ?? localAttestorUrls(schema.attestor_quorum));
  const demoCa = resolve(process.env.DATA_DIR ?? ".data", "demo-provider", "ca.pem");
  const caFiles = options.get("--ca-files") ?? process.env.ATTESTOR_CA_FILES ?? (existsSync(demoCa) ? demoCa : "");

  let proven;
  try {
    proven = await proveOnUserSide({
      request: { url, method, headers: Object.fromEntries(headers.values.map(headerOf)) },
      schema: provingSchema,
      sealTo,
      owner,
      attestorUrls,
      mode,
      caFiles,
      ...(proverModule === undefined ? {} : { proverModule }),
    });
  } catch (error) {
    if (error instanceof UserProveError) {
      console.error(`${error.code}: ${error.message} ${JSON.stringify(error.details)}`);
      return 1;
    }
    throw error;
  }
  const stats = { mode, attestors: proven.attestors, ms: Math.round(proven.stats.ms), proverPeakRssMiB: Math.round(proven.stats.proverPeakRssBytes / 1048576) };

  if (token !== undefined) {
    const api = new AttestationClient({ baseUrl: options.get("--api") ?? process.env.API_URL ?? "http://127.0.0.1:8001", token });
    try {
      const recorded = await api.claimProven({ schemaId: proven.schemaId, field, bucket: proven.bucket, encryptedData: proven.encryptedData, proofs: proven.proofs, ...(proven.nullifier === undefined ? {} : { nullifier: proven.nullifier }) });
      console.log(JSON.stringify({ ...recorded, via: "api", ...stats }));
      return 0;
    } catch (error) {
      if (error instanceof AttestationApiError) {
        console.error(`${error.code}: ${error.message} ${JSON.stringify(error.details ?? {})}`);
        return 1;
      }
      throw error;
    }
  }
  const verdict = await rollup.send(attestationInput(proven, owner), sender);
  if (verdict.status !== "ACCEPTED") {
    const report = verdict.reports[0] === undefined ? "no report" : hexToUtf8(verdict.reports[0]);
    console.error(`ROLLUP_REJECTED: the rollup rejected the attestation ${JSON.stringify({ reason: report })}`);
    return 1;
  }
  const claimId = writeIdOf("create_attestation", verdict.index, null);
  console.log(JSON.stringify({ claimId, txHash: verdict.txHash, bucket: proven.bucket, via: "inputbox", ...stats }));
  return 0;
}, USAGE);
