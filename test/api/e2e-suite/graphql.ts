/**
 * EAS's GraphQL on a real stack (docs/graphql.md): the example queries of EAS's documentation, verbatim
 * where their fields exist here, answer with the attestations the suite made, as REST answers them; EAS's
 * own SchemaEncoder decodes their `data`. Every exchange goes through the OpenAPI conformance recorder.
 */
import { getAddress } from "viem";
import { describe, expect, it } from "vitest";
import { DATA_SCHEMA } from "../../../common/receipt.ts";
import { USER_A } from "../../support/api-fixtures.ts";
import { EAS_LATEST_25, easAttestationByUid } from "../../support/eas-docs.ts";
import { sdk } from "../../support/eas-sdk.ts";
import { until } from "../../support/until.ts";
import type { SuiteContext } from "./context.ts";

interface Answer<T> {
  data: T;
  errors?: { message: string }[];
}

export function graphqlTests(ctx: SuiteContext): void {
  const post = async <T>(query: string): Promise<Answer<T>> => {
    const response = await ctx.conformance.fetch(new Request(`${ctx.stack.urls.api}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) }));
    expect(response.status).toBe(200);
    return (await response.json()) as Answer<T>;
  };

  describe("EAS's GraphQL", () => {
    it("EAS's documented queries for an attestation, a recipient's attestations and a schema answer with our attestations, as REST does", async () => {
      const rest = await ctx.asClient(ctx.anon).attestations(USER_A);
      expect(rest.length).toBeGreaterThan(0);
      // The index follows the node's notices: it holds what REST read once it has caught up (docs/index.md).
      await until(
        async () => (await post<{ aggregateAttestation: { _count: { _all: number } } }>(`{ aggregateAttestation(where: { recipient: { equals: "${getAddress(USER_A)}" } }) { _count { _all } } }`)).data.aggregateAttestation._count._all,
        (n) => n === rest.length,
        `the index to hold USER_A's ${rest.length} attestations`,
      );
      const first = await ctx.asClient(ctx.anon).attestation((rest[0] as { claimId: string }).claimId);

      // EAS's docs: "Query a single attestation".
      const one = await post<{ attestation: Record<string, unknown> }>(easAttestationByUid(first.claimId));
      expect(one.errors).toBeUndefined();
      expect(one.data.attestation).toMatchObject({ id: first.claimId, attester: getAddress(first.attester ?? ""), recipient: getAddress(first.owner), revocable: true, revocationTime: 0, expirationTime: 0 });
      const decoded = new sdk.SchemaEncoder(DATA_SCHEMA).decodeData(one.data.attestation.data as string);
      expect(Object.fromEntries(decoded.map((d) => [d.name, d.value.value]))).toMatchObject({ provider: "http", field: "data.balance", bucket: first.bucket });

      // EAS's docs' first example, verbatim: "Get the latest 25 attestations", of every owner.
      const latest = await post<{ attestations: { id: string; data: string }[] }>(EAS_LATEST_25);
      expect(latest.errors).toBeUndefined();
      expect(latest.data.attestations.length).toBeGreaterThanOrEqual(Math.min(25, rest.length));

      // EAS's docs: "Query attestations for a recipient" (newest first), with the transaction and decoded data.
      const many = await post<{ attestations: { id: string; recipient: string; time: number; txid: string; decodedDataJson: string; schemaId: string }[] }>(`query Attestations {
  attestations(
    where: { recipient: { equals: "${getAddress(USER_A)}" } }
    take: 25
    orderBy: [{ time: desc }]
  ) {
    id
    attester
    recipient
    time
    schemaId
    txid
    decodedDataJson
  }
}`);
      expect(many.errors).toBeUndefined();
      expect(new Set(many.data.attestations.map((a) => a.id))).toEqual(new Set(rest.slice(0, 25).map((a) => a.claimId)));
      const times = many.data.attestations.map((a) => a.time);
      expect(times).toEqual([...times].sort((a, b) => b - a));
      const mine = many.data.attestations.find((a) => a.id === first.claimId);
      expect(mine?.txid).toBe((await ctx.asClient(ctx.anon).attestationInput(first.claimId)).txHash);
      expect(JSON.parse(mine?.decodedDataJson ?? "[]")).toContainEqual({ name: "bucket", type: "string", signature: "string bucket", value: { name: "bucket", type: "string", value: first.bucket } });

      // EAS's docs: "Query a schema"; and a count.
      const schema = await post<{ schema: Record<string, unknown>; aggregateAttestation: { _count: { _all: number } } }>(`query Schema {
  schema(where: { id: "${first.schemaId}" }) {
    id
    schema
    revocable
    resolver
  }
  aggregateAttestation(where: { recipient: { equals: "${USER_A}" } }) {
    _count {
      _all
    }
  }
}`);
      expect(schema.data).toEqual({ schema: { id: first.schemaId, schema: DATA_SCHEMA, revocable: true, resolver: "0x0000000000000000000000000000000000000000" }, aggregateAttestation: { _count: { _all: rest.length } } });

      // GET, as GraphQL servers take it.
      const get = await ctx.conformance.fetch(new Request(`${ctx.stack.urls.api}/graphql?query=${encodeURIComponent(`{ attestation(where: { id: "${first.claimId}" }) { id revoked isOffchain } }`)}`));
      expect(await get.json()).toEqual({ data: { attestation: { id: first.claimId, revoked: false, isOffchain: false } } });
    });
  });
}
