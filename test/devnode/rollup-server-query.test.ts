/**
 * The devnode's query interface over inputs the test processes as the dapp on the rollup HTTP server, with
 * no chain and the record in an in-memory SQLite database: /graphql with the v1 field names and cursors
 * (input(index) with its outputs, missing inputs, repeated and bad query texts, paging with
 * first/after and last/before, single outputs), 404 on unknown paths and /healthz.
 */
import type { Hex } from "viem";
import { describe, expect, it } from "vitest";
import { jsonToHex } from "../../common/hex.ts";
import type { InputRecord } from "../../devnode/store.ts";
import { advanceOf, graphql, h, nextRequest, output, POLL, post, SENDER, useHarness } from "./rollup-server-support.ts";

useHarness();

describe("GraphQL", () => {
  async function processAll(count: number): Promise<void> {
    for (let i = 0; i < count; i++) h.addInput({ type: "k", params: { i } });
    for (let i = 0; i < count; i++) {
      const advance = advanceOf(await nextRequest());
      const index = advance.metadata.input_index;
      if (index % 2 === 0) await output("/notice", { payload: jsonToHex({ n: index }) });
      await output("/report", { payload: jsonToHex({ r: index }) });
    }
    const last = post("/finish", { status: "accept" });
    await expect.poll(() => h.model.processedInputCount, POLL).toBe(count);
    await (await last).text();
  }

  it("serves input(index) with the v1 field names and its notices and reports", async () => {
    await processAll(3);
    const { data } = await graphql<{ input: Record<string, unknown> }>(
      `query($i: Int!) { input(index: $i) {
          index status msgSender timestamp blockNumber payload
          notices { totalCount edges { cursor node { index payload input { index } } } }
          reports { totalCount edges { node { index payload } } }
          vouchers { totalCount }
      } }`,
      { i: 2 },
    );
    const input = h.store.getInput(2) as InputRecord;
    expect(data?.input).toEqual({
      index: 2,
      status: "ACCEPTED",
      // As the v1 graphql-server writes them: lower-case hex, BigInt values as strings, base64 cursors.
      msgSender: SENDER.toLowerCase(),
      timestamp: String(input.timestamp),
      blockNumber: String(input.blockNumber),
      payload: input.payload,
      notices: { totalCount: 1, edges: [{ cursor: "MA==", node: { index: 0, payload: jsonToHex({ n: 2 }), input: { index: 2 } } }] },
      reports: { totalCount: 1, edges: [{ node: { index: 0, payload: jsonToHex({ r: 2 }) } }] },
      vouchers: { totalCount: 0 },
    });
  });

  it("answers a missing input with a GraphQL error", async () => {
    const { data, errors } = await graphql(`{ input(index: 7) { status } }`);
    expect(data ?? null).toBeNull();
    expect(errors?.[0]?.message).toBe("input not found: 7");
  });

  it("answers a repeated query text the same way each time, a bad one too (documents are parsed and validated once)", async () => {
    const invalid = `{ input(index: 0) { nosuchfield } }`;
    const unparsable = `{ input(index: 0) { status }`;
    for (let i = 0; i < 3; i++) {
      expect((await graphql(invalid)).errors?.[0]?.message).toBe('Cannot query field "nosuchfield" on type "Input".');
      expect((await graphql(unparsable)).errors?.[0]?.message).toMatch(/^Syntax Error: Expected Name, found <EOF>/);
      expect((await graphql(`{ input(index: 7) { status } }`)).errors?.[0]?.message).toBe("input not found: 7");
    }
  });

  it("pages inputs and top-level notices and reports with first/after and last/before", async () => {
    await processAll(5);
    type Page = { totalCount: number; edges: { cursor: string; node: { index: number } }[]; pageInfo: Record<string, unknown> };
    const page = async (field: string, args: string): Promise<Page> => {
      const { data, errors } = await graphql<Record<string, Page>>(
        `{ ${field}${args === "" ? "" : `(${args})`} { totalCount edges { cursor node { index ${field === "inputs" ? "" : "input { index }"} } } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } } }`,
      );
      expect(errors).toBeUndefined();
      return (data as Record<string, Page>)[field] as Page;
    };
    const firstTwo = await page("inputs", "first: 2");
    expect(firstTwo.totalCount).toBe(5);
    expect(firstTwo.edges.map((e) => e.node.index)).toEqual([0, 1]);
    expect(firstTwo.pageInfo).toEqual({ startCursor: "MA==", endCursor: "MQ==", hasNextPage: true, hasPreviousPage: false });
    const nextTwo = await page("inputs", `first: 2, after: "MQ=="`);
    expect(nextTwo.edges.map((e) => e.node.index)).toEqual([2, 3]);
    const lastTwo = await page("inputs", `last: 2, before: "NA=="`);
    expect(lastTwo.edges.map((e) => e.node.index)).toEqual([2, 3]);
    expect(lastTwo.pageInfo).toEqual({ startCursor: "Mg==", endCursor: "Mw==", hasNextPage: true, hasPreviousPage: true });
    // A cursor the v1 node made works here too, and a decimal one (this devnode's old form) is refused.
    expect((await page("inputs", `first: 1, after: "Mg=="`)).edges.map((e) => e.node.index)).toEqual([3]);
    const decimal = await graphql(`{ inputs(after: "2") { totalCount } }`);
    expect(decimal.errors?.[0]?.message).toMatch(/invalid cursor in after: 2/);
    const filtered = await page("inputs", "where: { indexGreaterThan: 1, indexLowerThan: 4 }");
    expect(filtered.edges.map((e) => e.node.index)).toEqual([2, 3]);

    const notices = await page("notices", "");
    expect(notices.totalCount).toBe(3);
    const noticeInputs = notices.edges.map((e) => (e.node as unknown as { input: { index: number } }).input.index);
    expect(noticeInputs).toEqual([0, 2, 4]);
    const afterLast = await page("notices", `after: "${notices.pageInfo["endCursor"] as string}"`);
    expect(afterLast.edges).toEqual([]);
    expect(afterLast.pageInfo["hasNextPage"]).toBe(false);
    expect((await page("reports", "first: 1")).totalCount).toBe(5);

    const bad = await graphql(`{ inputs(after: "nope") { totalCount } }`);
    expect(bad.errors?.[0]?.message).toMatch(/invalid cursor/);
  });

  it("finds single outputs by input and index", async () => {
    await processAll(1);
    const { data } = await graphql<{ notice: { payload: Hex }; report: { payload: Hex } }>(
      `{ notice(inputIndex: 0, noticeIndex: 0) { payload } report(inputIndex: 0, reportIndex: 0) { payload } }`,
    );
    expect(data).toEqual({ notice: { payload: jsonToHex({ n: 0 }) }, report: { payload: jsonToHex({ r: 0 }) } });
    const missing = await graphql(`{ voucher(inputIndex: 0, voucherIndex: 0) { payload } }`);
    expect(missing.errors?.[0]?.message).toMatch(/voucher not found/);
  });
});

describe("query interface", () => {
  it("answers unknown paths with 404 and reports its state on /healthz", async () => {
    expect((await fetch(`${h.nodeUrl}/nowhere`)).status).toBe(404);
    const health = (await (await fetch(`${h.nodeUrl}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: "ok", state: "idle", processedInputCount: 0 });
  });
});
