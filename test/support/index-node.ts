/**
 * A node's record for the index's tests: inputs with the notices the dapp writes for them (registrations,
 * attestations, revocations, and the binary batch notice the index skips), served through the IndexSource
 * interface the indexer reads a real node by. Paging and cursors follow the v2 reader's (a count).
 */
import { getAddress, keccak256, stringToHex, type Address, type Hex } from "viem";
import type { IndexSource } from "../../api/index/source.ts";
import type { NoticeRecord } from "../../api/rollup/node-reader.ts";
import { jsonToHex } from "../../common/hex.ts";
import { schemaIdOf } from "../../common/ids.ts";
import type { InputParams, NoticeEvent } from "../../common/wire.ts";

export interface RecordedInput {
  index: number;
  sender: Address;
  timestamp: number;
  payload: Hex;
  notices: Hex[];
  proven: boolean;
}

export const BANK_SCHEMA: InputParams["register_schema"] = {
  provider: "http",
  flowType: "balance",
  domain: "bank.test",
  bucketDefinitions: { "data.balance": { boundaries: [0, 100, 1000, 10000], labels: ["low", "mid", "high"] } },
  dataKeys: ["data.currency"],
  freshnessHalfLife: 86_400,
  name: "Bank balance",
  description: "a balance's range",
};

export const ADMIN: Address = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

export function schemaIdOfParams(p: InputParams["register_schema"]): Hex {
  return schemaIdOf({ provider: p.provider, flowType: p.flowType, domain: p.domain, bucketDefinitions: p.bucketDefinitions, dataKeys: p.dataKeys, freshnessHalfLife: p.freshnessHalfLife });
}

export class RecordedNode implements IndexSource {
  readonly url = "memory://node";
  readonly inputs: RecordedInput[] = [];
  /** Requests that fail before they are answered (a node going away mid-read). */
  failNext = 0;

  private next(): number {
    return this.inputs.length;
  }

  add(sender: Address, timestamp: number, payload: Hex, notices: NoticeEvent[], extra: Hex[] = []): RecordedInput {
    const input = { index: this.next(), sender, timestamp, payload, notices: [...notices.map((n) => jsonToHex(n)), ...extra], proven: false };
    this.inputs.push(input);
    return input;
  }

  registerSchema(p: InputParams["register_schema"] = BANK_SCHEMA, timestamp = 1_700_000_000): Hex {
    const schemaId = schemaIdOfParams(p);
    this.add(ADMIN, timestamp, jsonToHex({ type: "register_schema", params: p }), [{ event: "schema:registered", data: { schema_id: schemaId } }]);
    return schemaId;
  }

  /** One input making `owners.length` attestations of the schema (a batch when more than one). */
  attest(schemaId: Hex, owners: Address[], bucket: string, timestamp: number, attester: Address = ADMIN): Hex[] {
    const ids = owners.map((owner, i) => keccak256(stringToHex(`${this.next()}:${i}:${owner}`)));
    const notices: NoticeEvent[] = owners.map((owner, i) => ({
      event: "attestation:created",
      data: {
        claimId: ids[i] as Hex,
        owner: getAddress(owner),
        provider: "http",
        schema_id: schemaId,
        bucket_values: { "data.balance": bucket },
        attester,
        timestamp,
        expires_at: null,
        freshness_half_life: 86_400,
      },
    }));
    // The binary batch notice follows the JSON ones: the index must step over it.
    this.add(attester, timestamp, jsonToHex({ type: "batch", params: { items: [] } }), notices, ["0xdeadbeef00"]);
    return ids;
  }

  revoke(id: Hex, owner: Address, schemaId: Hex, at: number): void {
    this.add(ADMIN, at, jsonToHex({ type: "revoke_attestation", params: { attestation_id: id } }), [
      { event: "attestation:revoked", data: { claimId: id, owner, schema_id: schemaId, revoker: ADMIN, revoked_at: at, reason: "test", superseded_by: null } },
    ]);
  }

  private all(): NoticeRecord[] {
    const out: NoticeRecord[] = [];
    for (const input of this.inputs) for (const [i, payload] of input.notices.entries()) out.push({ cursor: String(out.length + 1), index: out.length, inputIndex: input.index, payload });
    return out;
  }

  private maybeFail(): void {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error("the node went away");
    }
  }

  async noticesAfter(cursor: string | null, first: number) {
    this.maybeFail();
    const all = this.all();
    const offset = cursor === null ? 0 : Number(cursor);
    const notices = all.slice(offset, offset + first);
    const end = offset + notices.length;
    return { notices, endCursor: String(end), hasNextPage: end < all.length };
  }

  async inputOrigin(index: number) {
    this.maybeFail();
    const input = this.inputs[index];
    if (input === undefined) throw new Error(`no input ${index}`);
    return { sender: input.sender, blockNumber: 100 + index, timestamp: input.timestamp, txid: keccak256(stringToHex(`tx:${index}`)) };
  }

  async inputPayload(index: number) {
    this.maybeFail();
    const input = this.inputs[index];
    if (input === undefined) throw new Error(`no input ${index}`);
    return input.payload;
  }

  async inputNotices(index: number) {
    this.maybeFail();
    const input = this.inputs[index];
    return input === undefined ? null : { payloads: input.notices, proven: input.proven };
  }

  async transactionOf(): Promise<string> {
    return "";
  }
}
