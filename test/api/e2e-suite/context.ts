/**
 * What the parts of the api's end-to-end suite share (test/api/e2e-suite.ts): the stack, the provider,
 * the clients and the WebSocket, set in the suite's beforeAll and read by each part's tests when they run.
 */
import nacl from "tweetnacl";
import type { Hex } from "viem";
import type { RunningApi } from "../../../api/main.ts";
import type { AttestationClient, EventStream } from "../../../client/index.ts";
import { USER_A, USER_B } from "../../support/api-fixtures.ts";
import type { ConformanceRecorder } from "../../support/conformance.ts";
import type { ProviderServer } from "../../support/provider-server.ts";
import type { RecordingProxy } from "../../support/recording-proxy.ts";
import type { TestStack } from "../../support/stack.ts";

/** Hardhat's funded accounts the suite signs with (beyond USER_A's). */
export const HARDHAT_KEYS = {
  2: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  5: "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
  6: "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e",
  7: "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
  8: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
} as const;

export interface ApiEndToEndOptions {
  /** Api replicas behind the load balancer; 1 runs the api alone. */
  replicas: number;
  /** The node the stack runs and the api reads (ROLLUPS). Default v1. */
  rollups?: "v1" | "v2";
  /** Readers the api reads from instead of the node (`--readers N`); 0 reads the node. */
  readers?: number;
  /** v2: claims by a Quorum of this many members (`--quorum N`), who are readers too; 0 keeps the Authority. */
  quorum?: number;
}

export class SuiteContext {
  // Set by the suite's beforeAll, before any test runs.
  stack!: TestStack;
  provider!: ProviderServer;
  events!: EventStream;
  anon!: AttestationClient;
  admin!: AttestationClient;
  userA!: AttestationClient;
  userB!: AttestationClient;
  /** Every exchange of the suite's main api, checked against the document it serves. */
  conformance!: ConformanceRecorder;
  /** The schema the suite registers first (its tests of claims and grants use it). */
  schemaId!: Hex;
  /** Api instances a test starts beside the stack's, stopped after the suite. */
  readonly extraApis: RunningApi[] = [];
  /** The admin's encryption key pair (the api itself holds no secret key). */
  readonly recipient = nacl.box.keyPair();
  readonly a = USER_A.toLowerCase();
  readonly b = USER_B.toLowerCase();
  readonly replicas: number;
  readonly rollups: "v1" | "v2";
  readonly readers: number;
  readonly quorum: number;
  /** With readers, a recording proxy the api reaches the node through: the node must get no inspect from it. */
  nodeProxy: RecordingProxy | undefined;
  private clientNo = 0;

  constructor(options: ApiEndToEndOptions) {
    this.replicas = options.replicas;
    this.rollups = options.rollups ?? "v1";
    this.quorum = options.quorum ?? 0;
    // Members serve reads: a Quorum of N runs at least N readers.
    this.readers = Math.max(options.readers ?? 0, this.quorum);
  }

  /** A distinct client address per test (the api trusts X-Forwarded-For here), so rate limits stay per test. */
  asClient(client: AttestationClient): AttestationClient {
    this.clientNo += 1;
    return client.withHeaders({ "x-forwarded-for": `198.51.100.${this.clientNo}` });
  }

  schemaContent(domain: string) {
    return {
      provider: "http",
      flowType: "balance",
      domain,
      bucketDefinitions: { "data.balance": { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] } },
      dataKeys: ["data.currency"],
      freshnessHalfLife: 86400,
    };
  }

  claimFor(path: string, headers: Record<string, string> = {}) {
    return {
      provider: "http" as const,
      params: { url: this.provider.url(path, "127.0.0.1"), method: "GET", headers },
      bucketDefinition: { field: "data.balance", boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] },
    };
  }
}
