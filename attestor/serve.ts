// SPDX-License-Identifier: AGPL-3.0-only
/**
 * The TLS attestor: Reclaim's attestor-core server, run as its own process (it is AGPL-3.0; nothing of
 * ours imports it in-process). It tunnels a client's TLS connection to the provider, checks the
 * transcript (and the zero-knowledge proofs of what was redacted), and signs a claim about what the
 * provider answered. Started by `npm start`; the address it signs with is printed on its ready line.
 *
 * It signs range statements only (common/tls-claim.ts): the one response match `fieldPattern` makes for
 * the field and range the claim's context names, and only after reading the proven field itself
 * from what it saw, with hidden bytes kept where they were (common/revealed-response.ts): attestor-core
 * alone deletes runs of hidden bytes before matching, which let a prover hide part of a number.
 */
import { createRequire } from "node:module";
import { Server, type IncomingMessage, type ServerResponse } from "node:http";
import type { Hex } from "viem";
import { privateKeyToAddress } from "viem/accounts";
import { readRevealedAccountId, type SeenRecord } from "../common/revealed-response.ts";
import { checkSeenStatement, contextNullifierBinding, NULLIFIER_CONTEXT_KEY } from "../common/tls-claim.ts";
import { loadAttestorConfig } from "./config.ts";
import { nullifierDesk, type NullifierDesk } from "./nullifier-desk.ts";
import { trustExtraRoots } from "./roots.ts";
import { stwoOperators, useStwoAsDefaultEngine } from "./zk-operators.ts";

const require = createRequire(import.meta.url);

interface DecryptedMessage {
  sender: "client" | "server";
  /** True when the prover revealed nothing of the record: `message` is then its ciphertext. */
  redacted: boolean;
  message: Uint8Array;
  recordHeader: Uint8Array;
  plaintextLength: number;
}
interface DecryptedTranscript {
  transcript: DecryptedMessage[];
  tlsVersion: "TLS1_2" | "TLS1_3";
}
interface ReceiptCheck {
  receipt: unknown;
  params: Record<string, unknown>;
}

const APPLICATION_DATA = 0x17;

/**
 * The server's records as the attestor decrypted them, each application data record kept, hidden bytes as
 * `*`, and the wholly hidden ones marked (attestor-core drops those, and a revealed record whose content
 * type byte was hidden, without a trace; a hidden one here is a `*` run the reader can account for).
 */
function serverRecords({ transcript, tlsVersion }: DecryptedTranscript): SeenRecord[] {
  const records: SeenRecord[] = [];
  for (const m of transcript) {
    if (m.sender !== "server") continue;
    const tls13 = tlsVersion === "TLS1_3";
    if (m.redacted) {
      records.push({ text: "*".repeat(tls13 ? m.plaintextLength - 1 : m.plaintextLength), whole: true });
      continue;
    }
    const type = tls13 ? m.message[m.message.length - 1] : m.recordHeader[0];
    const data = tls13 ? m.message.subarray(0, -1) : m.message;
    if (type === APPLICATION_DATA) records.push({ text: Buffer.from(data).toString("latin1"), whole: false });
    // A hidden content type could be hiding application data: it counts as a hidden record.
    else if (type === 0x2a) records.push({ text: "*".repeat(data.length), whole: true });
  }
  return records;
}

/**
 * Makes attestor-core's http provider check each claim's statement against the field as we read it. The
 * functions are looked up on module objects at call time, so replacing them here takes effect.
 */
function signRangeStatementsOnly(desk: NullifierDesk): void {
  const generics = require("@reclaimprotocol/attestor-core/lib/utils/generics") as {
    extractApplicationDataFromTranscript(receipt: DecryptedTranscript): object;
  };
  const serverGenerics = require("@reclaimprotocol/attestor-core/lib/server/utils/generics") as {
    niceParseJsonObject(data: string, key: string): Record<string, unknown>;
  };
  const http = (require("@reclaimprotocol/attestor-core/lib/providers") as { providers: { http: { assertValidProviderReceipt(opts: ReceiptCheck): unknown } } }).providers.http;
  const seen = new WeakMap<object, SeenRecord[]>();
  const extract = generics.extractApplicationDataFromTranscript.bind(generics);
  generics.extractApplicationDataFromTranscript = (receipt) => {
    const applicationData = extract(receipt);
    seen.set(applicationData, serverRecords(receipt));
    return applicationData;
  };
  // The provider check gets the parsed parameters but not the claim's context, where the statement is:
  // attestor-core parses the two one after the other, so each context is tied to the parameters object
  // parsed just before it, which is the very object the provider check then receives.
  const contexts = new WeakMap<object, Record<string, unknown>>();
  let lastParameters: object | undefined;
  const parse = serverGenerics.niceParseJsonObject.bind(serverGenerics);
  serverGenerics.niceParseJsonObject = (data, key) => {
    const parsed = parse(data, key);
    if (key === "params") lastParameters = parsed;
    else if (key === "context" && lastParameters !== undefined) {
      contexts.set(lastParameters, parsed);
      lastParameters = undefined;
    }
    return parsed;
  };
  const assertReceipt = http.assertValidProviderReceipt.bind(http);
  http.assertValidProviderReceipt = (opts) => {
    const records = typeof opts.receipt === "object" && opts.receipt !== null ? seen.get(opts.receipt) : undefined;
    if (records === undefined) throw new Error("range statement refused: the transcript behind this receipt was not seen");
    const context = contexts.get(opts.params);
    const checked = checkSeenStatement(opts.params, records, context);
    if (!checked.ok) throw new Error(`range statement refused: ${checked.reason}`);
    const result = assertReceipt(opts);
    // Evaluated once attestor-core has accepted the receipt, so no evaluation exists for a claim refused.
    if (context !== undefined && NULLIFIER_CONTEXT_KEY in context) evaluateNullifier(desk, context, records);
    return result;
  };
}

/**
 * A claim that binds a nullifier: the account read at the binding's field from what this attestor saw,
 * this attestor's share evaluated for it (attestor/nullifier-desk.ts), or the claim refused. The account
 * id is in no message: a refusal says what was wrong, never what was read.
 */
function evaluateNullifier(desk: NullifierDesk, context: Record<string, unknown>, records: readonly SeenRecord[]): void {
  const binding = contextNullifierBinding(JSON.stringify(context));
  if (!binding.ok) throw new Error(`nullifier refused: ${binding.reason}`);
  const account = readRevealedAccountId(records, binding.value.accountField);
  if (!account.ok) throw new Error(`nullifier refused: ${account.reason}`);
  const schemaId = context.contextMessage;
  if (typeof schemaId !== "string" || !/^0x[0-9a-f]{64}$/.test(schemaId)) throw new Error("nullifier refused: the context names no schema id (contextMessage)");
  const evaluated = desk.evaluate(binding.value, schemaId as Hex, account.value);
  if (!evaluated.ok) throw new Error(`nullifier refused: ${evaluated.reason}`);
}

/**
 * Starts attestor-core's server. `checkStatements: false` leaves out our check of what is signed, as
 * attestor-core alone would run: only a test uses it, to show the lies that check refuses would otherwise
 * be signed (test/support/stock-attestor.ts).
 */
export async function serveAttestor({ checkStatements }: { checkStatements: boolean }): Promise<void> {
  const config = loadAttestorConfig();
  // attestor-core reads these once, when its modules load.
  process.env.PRIVATE_KEY = config.privateKey;
  process.env.DISABLE_BGP_CHECKS = "1";
  process.env.LOG_LEVEL = config.logLevel;
  process.env.NODE_ENV ??= "production";
  const roots = trustExtraRoots(config.caFiles);
  useStwoAsDefaultEngine(stwoOperators());
  const desk = nullifierDesk(config.nullifierShare);
  if (checkStatements) signRangeStatementsOnly(desk);

  // attestor-core listens on every interface (`listen(port)`); the local attestor belongs on loopback. Its
  // server also answers the nullifier desk's two routes, before attestor-core's own listener sees them.
  const listen = Server.prototype.listen as (this: Server, ...args: unknown[]) => Server;
  Server.prototype.listen = function listenOnHost(this: Server, ...args: unknown[]): Server {
    Server.prototype.listen = listen as typeof Server.prototype.listen;
    const theirs = this.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
    this.removeAllListeners("request");
    this.on("request", (req: IncomingMessage, res: ServerResponse) => {
      if (!desk.serve(req, res)) for (const listener of theirs) listener.call(this, req, res);
    });
    return args.length === 1 && typeof args[0] === "number" ? listen.call(this, args[0], config.host) : listen.apply(this, args);
  } as typeof Server.prototype.listen;

  const { createServer } = require("@reclaimprotocol/attestor-core/lib/server/create-server") as {
    createServer(port: number): Promise<unknown>;
  };
  await createServer(config.port);
  const address = privateKeyToAddress(config.privateKey);
  const share = desk.index === undefined ? "no nullifier share" : `nullifier share ${desk.index}`;
  console.log(`[attestor] listening on ws://${config.host}:${config.port}/ws as ${address} (extra roots: ${roots}; ${share})`);
}
