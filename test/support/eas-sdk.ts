/**
 * EAS's own SDK (@ethereum-attestation-service/eas-sdk) as the tests use it to judge ours: it loads as
 * CommonJS only (its ESM build imports lodash by name), with its own ethers 6. Typed here as far as the
 * tests call it.
 */
import { createRequire } from "node:module";

const sdkRequire = createRequire(createRequire(import.meta.url).resolve("@ethereum-attestation-service/eas-sdk"));

export interface SdkAttestation {
  uid: string;
  schema: string;
  recipient: string;
  attester: string;
  revocationTime: bigint;
  expirationTime: bigint;
  data: string;
}

/** An off-chain attestation as eas-sdk signs and verifies it (`SignedOffchainAttestation`). */
export interface SdkSignedOffchain {
  version: number;
  uid: string;
  domain: { name: string; version: string; chainId: bigint | number; verifyingContract: string };
  primaryType: string;
  types: unknown;
  message: Record<string, unknown>;
  signature: { v: number; r: string; s: string };
}

export interface Sdk {
  EAS: new (address: string) => { connect(provider: unknown): void; getAttestation(uid: string): Promise<SdkAttestation>; isAttestationValid(uid: string): Promise<boolean> };
  SchemaRegistry: (new (address: string) => { connect(provider: unknown): void; getSchema(args: { uid: string }): Promise<{ uid: string; schema: string; revocable: boolean }> }) & {
    getSchemaUID(schema: string, resolverAddress: string, revocable: boolean): string;
  };
  SchemaEncoder: new (schema: string) => { decodeData(data: string): { name: string; value: { value: unknown } }[] };
  Offchain: new (config: { address: string; version: string; chainId: bigint }, version: number) => { verifyOffchainAttestationSignature(attester: string, attestation: SdkSignedOffchain): boolean };
}

export const sdk = sdkRequire("@ethereum-attestation-service/eas-sdk") as Sdk;
export const { JsonRpcProvider } = sdkRequire("ethers") as { JsonRpcProvider: new (url: string) => unknown };
