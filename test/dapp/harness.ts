/** Starts the real dapp (real migrations, real SQLite, real @deroll/app loop) against a RollupServer. */
import type { Address, Hex } from "viem";
import { hexToUtf8, jsonToHex } from "../../common/hex.ts";
import { createDapp, type Dapp } from "../../dapp/transports/http.ts";
import { databaseDigest } from "../../dapp/db/digest.ts";
import { openDatabase, type DappDatabase } from "../../dapp/db/open.ts";
import { RollupServer, type AdvanceOutcome, type InspectOutcome } from "./rollup-server.ts";

export const ADMIN: Address = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";
export const ATTESTOR: Address = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
export const OPERATOR: Address = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
export const ALICE: Address = "0x90f79bf6eb2c4f970365e785982e1f101e93b906";
export const BOB: Address = "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65";
export const T0 = 1_700_000_000;

export interface Harness {
  server: RollupServer;
  dapp: Dapp;
  db: DappDatabase;
  /** Sends `{type, params}` as an advance input. */
  input(type: string, params: unknown, options?: { sender?: string; timestamp?: number; index?: number }): Promise<AdvanceOutcome>;
  raw(payload: Hex, options?: { sender?: string; timestamp?: number; index?: number }): Promise<AdvanceOutcome>;
  query(type: string, params?: unknown): Promise<InspectOutcome>;
  /** Runs a query that must succeed and returns its decoded result. */
  read<T = unknown>(type: string, params?: unknown): Promise<T>;
  close(options?: { keepDb?: boolean }): Promise<void>;
}

export async function startHarness(options: { dbPath?: string; admins?: Address[]; db?: DappDatabase; application?: { chainId: number; address: Address } } = {}): Promise<Harness> {
  const db = options.db ?? openDatabase({ path: options.dbPath ?? ":memory:" });
  const server = new RollupServer(50);
  const url = await server.listen();
  const dapp = createDapp({ db, admins: options.admins ?? [ADMIN], rollupUrl: url, ...(options.application === undefined ? {} : { application: options.application }) });
  const stop = new AbortController();
  const running = dapp.run({ signal: stop.signal, retryDelayMs: 50 });
  let clock = T0;

  const raw: Harness["raw"] = (payload, o = {}) => {
    clock = o.timestamp ?? clock + 1;
    return server.advance({ payload, sender: o.sender ?? ADMIN, timestamp: clock, ...(o.index === undefined ? {} : { index: o.index }) });
  };
  const query: Harness["query"] = (type, params = {}) => server.inspect(jsonToHex({ type, params }));

  return {
    server,
    dapp,
    db,
    raw,
    input: (type, params, o) => raw(jsonToHex({ type, params }), o),
    query,
    async read<T>(type: string, params: unknown = {}) {
      const outcome = await query(type, params);
      if (outcome.status !== "Accepted" || outcome.reports.length !== 1) {
        throw new Error(`query ${type} failed: ${outcome.exception ? hexToUtf8(outcome.exception) : "no report"}`);
      }
      return JSON.parse(hexToUtf8(outcome.reports[0] as Hex)) as T;
    },
    async close(o = {}) {
      stop.abort();
      await server.close();
      await running;
      if (!o.keepDb) db.$client.close();
    },
  };
}

export function decode(payload: Hex): unknown {
  return JSON.parse(hexToUtf8(payload));
}

/** An advance's first report, decoded (undefined when it left none). */
export function firstReport(out: { reports: Hex[] }): unknown {
  return out.reports[0] === undefined ? undefined : decode(out.reports[0]);
}

/** The digest of every row of the dapp's database: equal before and after means nothing was written. */
export function stateDigest(h: Harness): string {
  return databaseDigest(h.db.$client, { includeMeta: false });
}

/** A harness whose dapp already holds `schema` and gave ATTESTOR and OPERATOR their roles. */
export async function startReadyHarness(schema: unknown): Promise<Harness> {
  const h = await startHarness();
  for (const [type, params] of [
    ["register_schema", schema],
    ["set_role", { address: ATTESTOR, role: "attestor", enabled: true }],
    ["set_role", { address: OPERATOR, role: "operator", enabled: true }],
  ] as const) {
    const outcome = await h.input(type, params);
    if (outcome.status !== "accept") throw new Error(`setup input ${type} was rejected`);
  }
  return h;
}
