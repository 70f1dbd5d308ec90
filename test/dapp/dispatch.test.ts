/**
 * The dispatcher's failure paths, driven directly (real code, real migrations, real SQLite) with
 * outputs that record or fail: faults that the HTTP loop cannot produce on demand.
 */
import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import { hexToUtf8, jsonToHex } from "../../common/hex.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { PAGE_BYTE_BUDGET } from "../../dapp/define.ts";
import { openDatabase } from "../../dapp/db/open.ts";
import { createDispatcher, type RollupOutputs } from "../../dapp/dispatch.ts";
import { SCHEMA } from "./fixtures.ts";
import { ADMIN, T0 } from "./harness.ts";

function setup(outputs: Partial<RollupOutputs> = {}) {
  const sent: { kind: "notice" | "report" | "exception"; payload: Hex }[] = [];
  const lines: string[] = [];
  const record = (kind: "notice" | "report" | "exception") => async (payload: Hex) => void sent.push({ kind, payload });
  const db = openDatabase({ path: ":memory:" });
  const dispatcher = createDispatcher({
    db,
    admins: [ADMIN],
    outputs: { notice: record("notice"), report: record("report"), exception: record("exception"), ...outputs },
    log: (line) => lines.push(line),
  });
  let index = 0;
  const advance = (type: string, params: unknown) =>
    dispatcher.advance({
      metadata: { msg_sender: ADMIN, input_index: index, block_number: index, timestamp: T0 + index++ },
      payload: jsonToHex({ type, params }),
    });
  return { db, dispatcher, sent, lines, advance };
}

describe("dispatcher faults", () => {
  it("keeps an accepted input accepted when its notice cannot be delivered", async () => {
    const { advance, lines, dispatcher } = setup({ notice: () => Promise.reject(new Error("connection reset")) });
    expect(await advance("register_schema", SCHEMA)).toBe("accept");
    expect(lines).toEqual(["could not send a notice: connection reset", "input 0 register_schema: accept"]);
    expect(dispatcher.store.meta()).toMatchObject({ lastInputIndex: 0, lastStatus: "accept", processedInputs: 1 });
  });

  it("reports a query that fails unexpectedly through /exception", async () => {
    const { db, dispatcher, sent } = setup();
    db.$client.exec("drop table attestations");
    await dispatcher.inspect({ payload: jsonToHex({ type: "attestation", params: { attestation_id: `0x${"11".repeat(32)}` } }) });
    expect(sent.map((s) => [s.kind, hexToUtf8(s.payload)])).toEqual([["exception", "internal error: no such table: attestations"]]);
  });

  it("answers health with database: error when SQLite cannot be read", async () => {
    const { db, dispatcher, sent } = setup();
    db.$client.close();
    await dispatcher.inspect({ payload: jsonToHex({ type: "health", params: {} }) });
    expect(sent).toEqual([{ kind: "report", payload: jsonToHex({ status: "degraded", database: "error", processed_inputs: 0 }) }]);
  });

  it("logs one line per input and never the sender's raw type", async () => {
    const { advance, lines } = setup();
    expect(await advance("x\ny".repeat(3), {})).toBe("reject");
    expect(lines).toEqual(["input 0 -: reject UNKNOWN_KIND"]);
  });
});

describe("page byte budget", () => {
  it("ends an owner's page early once its sealed data passes the budget, and the next offset continues it", async () => {
    const { advance, dispatcher, sent } = setup();
    const owner = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
    expect(await advance("register_schema", SCHEMA)).toBe("accept");
    const sealed = `0x${"ab".repeat(16 * 1024)}` as const; // the largest encrypted_data an input may carry
    const params = { schema_id: schemaIdOf(SCHEMA), owner, provider: SCHEMA.provider, encrypted_data: sealed, bucket_values: {} };
    for (let i = 0; i < 40; i++) expect(await advance("create_attestation", params)).toBe("accept");

    const page = async (offset: number): Promise<unknown[]> => {
      sent.length = 0;
      await dispatcher.inspect({ payload: jsonToHex({ type: "attestations_by_owner", params: { owner, offset } }) });
      expect(sent.map((s) => s.kind)).toEqual(["report"]);
      return JSON.parse(hexToUtf8((sent[0] as { payload: Hex }).payload)) as unknown[];
    };
    // 512 KiB holds 32 attestations of 16 KiB: the 33rd would pass it.
    const first = await page(0);
    expect(first).toHaveLength(PAGE_BYTE_BUDGET / (16 * 1024));
    expect(await page(first.length)).toHaveLength(40 - first.length);
    expect(await page(40)).toEqual([]);
  });
});

describe("a v2 node's advance metadata", () => {
  it("is read as the v1 one: the same sender, index and block, the time from block_timestamp", async () => {
    const v1 = setup();
    const v2 = setup();
    expect(await v1.dispatcher.advance({ metadata: { msg_sender: ADMIN, input_index: 0, block_number: 7, timestamp: T0 }, payload: jsonToHex({ type: "register_schema", params: SCHEMA }) })).toBe("accept");
    expect(
      await v2.dispatcher.advance({
        metadata: {
          chain_id: 31337,
          app_contract: "0xab7528bb862fB57E8A2BCd567a2e929a0Be56a5e",
          msg_sender: ADMIN,
          block_number: 7,
          block_timestamp: T0,
          prev_randao: `0x${"5a".repeat(32)}`,
          input_index: 0,
        },
        payload: jsonToHex({ type: "register_schema", params: SCHEMA }),
      }),
    ).toBe("accept");
    // The same input under either node leaves the same rows and sends the same notice.
    expect(v2.sent).toEqual(v1.sent);
    const schemaId = schemaIdOf(SCHEMA);
    await v1.dispatcher.inspect({ payload: jsonToHex({ type: "provider_schema", params: { schema_id: schemaId } }) });
    await v2.dispatcher.inspect({ payload: jsonToHex({ type: "provider_schema", params: { schema_id: schemaId } }) });
    expect(v2.sent.at(-1)).toEqual(v1.sent.at(-1));
    expect(v2.dispatcher.store.meta()).toEqual(v1.dispatcher.store.meta());
  });
});
