/**
 * A schema unique per account through the api, on attestor.e2e's stack (docs/nullifiers.md): the rollup's
 * rule as the api's clients meet it. The attestors of that stack hold shares 1 and 2 of a key dealt here,
 * t = 2; claims are signed with their keys as the attestor processes would sign them, so that the api's
 * checks before sending are shown on claims no honest attestor would sign. The whole protocol through the
 * attestor processes and the demo provider is test/attestor/nullifier-stack.e2e.test.ts.
 */
import { stringToHex, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../../common/canonical.ts";
import { schemaIdOf } from "../../common/ids.ts";
import { dealKey } from "../../common/nullifier-dealer.ts";
import { blindNullifier, evaluateNullifierShare, finishNullifier } from "../../common/nullifier.ts";
import { binRange } from "../../common/range-pattern.ts";
import { claimContext, claimParameters } from "../../common/tls-claim.ts";
import { tokenFor, USER_A, USER_B } from "../support/api-fixtures.ts";
import type { TestStack } from "../support/stack.ts";
import { definition, field, quorumSchema, quorumSchemaId, signAs, USER_B_KEY, type ApiAnswer } from "./attestor-e2e-support.ts";

/** What the suite uses of attestor.e2e's stack, read when its tests run. */
export interface UniqueAccountContext {
  call(method: string, path: string, token?: string, body?: unknown): Promise<ApiAnswer>;
  claimBody(path?: string, extra?: Record<string, unknown>): Record<string, unknown>;
  attestorKey(k: number): Hex;
  attestorAddress(k: number): Address;
  ownerAttestationCount(owner: string): Promise<number>;
  providerUrl(path: string): string;
  stack(): TestStack;
  adminToken(): string;
  userToken(): string;
}

export function uniquePerAccountTests(ctx: UniqueAccountContext): void {
  describe("a schema unique per account, through the api (docs/nullifiers.md)", () => {
    // The attestors of this stack are registered with shares 1 and 2 of a key dealt here, t = 2; claims
    // are signed with their keys as the attestor processes would sign them, so the rollup's rule is what is shown.
    const dealt = dealKey({ threshold: 2, indices: [1, 2] });
    const unique = { ...quorumSchema, flowType: "balance-per-account", accountIdField: "data.accountId" };
    const uniqueId = schemaIdOf(unique);
    const ACCOUNTS = { a: "acct-3141-5926", b: "acct-2718-2818" };
    let nonce = 0;

    /** The proven claim's body for `owner` and `accountId`: two attestors' claims binding one nullifier's blind. */
    async function provenBody(owner: Address, accountId: string, o: { accountField?: string; nullifier?: boolean; schema?: Hex } = {}): Promise<Record<string, unknown>> {
      const schema = o.schema ?? uniqueId;
      const subject = { provider: "localhost", schemaId: schema, accountId };
      const blinding = blindNullifier(subject);
      const parts = finishNullifier(
        blinding,
        dealt.shares.map((share) => evaluateNullifierShare(share, subject, blinding)),
        dealt.keys,
      );
      const parameters = canonicalJson(claimParameters({ url: ctx.providerUrl("/balance"), method: "GET", field, range: binRange(definition, "high") as NonNullable<ReturnType<typeof binRange>> }));
      const proofs = await Promise.all(
        [1, 2].map((k) => {
          nonce += 1;
          const binding = { blinded: blinding.blinded, blindCommitment: blinding.blindCommitment, accountField: o.accountField ?? unique.accountIdField };
          const context = canonicalJson({ ...claimContext(owner, schema, `0x${nonce.toString(16).padStart(16, "0")}`, undefined, binding), providerHash: "0x00" });
          const claim = { provider: "http", parameters, owner: privateKeyToAccount(USER_B_KEY).address, timestampS: Math.floor(Date.now() / 1000), context, identifier: "0x" as Hex, epoch: 1 };
          return signAs(claim, ctx.attestorKey(k));
        }),
      );
      return { schemaId: schema, field, bucket: "high", encryptedData: "0x0102", proofs, ...(o.nullifier === false ? {} : { nullifier: parts }) };
    }

    beforeAll(async () => {
      // Registered by the first describe too; again here so that this one stands alone (a re-registration is a no-op).
      for (const k of [1, 2]) expect((await ctx.call("POST", "/api/core/attestors", ctx.adminToken(), { address: ctx.attestorAddress(k), name: `attestor ${k}` })).status).toBe(200);
      const holders = [1, 2].map((index) => ({ index, address: ctx.attestorAddress(index) }));
      const keys = await ctx.stack().send({ type: "set_nullifier_keys", params: { keySet: dealt.keySet, attestors: holders } }, 0);
      expect(keys.status).toBe("ACCEPTED");
      const registered = await ctx.call("POST", "/api/core/provider-schema", ctx.adminToken(), unique);
      expect(registered.body.data, JSON.stringify(registered.body)).toEqual({ schema_id: uniqueId });
    }, 60_000);

    it("one account backs owner A; for B it is 409 ACCOUNT_ALREADY_BOUND, another account for B is accepted, A again is a refresh", async () => {
      const tokenA = ctx.userToken();
      const tokenB = await tokenFor("user", USER_B);
      const first = await ctx.call("POST", "/api/core/claim/proven", tokenA, await provenBody(USER_A, ACCOUNTS.a));
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      // Its view says the schema is unique per account; one of another schema says it is not.
      expect((await ctx.call("GET", `/api/core/attestation/${first.body.data?.claimId as string}`)).body.data).toMatchObject({ schemaId: uniqueId, uniquePerAccount: true });
      const stolen = await ctx.call("POST", "/api/core/claim/proven", tokenB, await provenBody(USER_B, ACCOUNTS.a));
      expect([stolen.status, stolen.body.error?.code, stolen.body.error?.details]).toEqual([409, "ACCOUNT_ALREADY_BOUND", { schema_id: uniqueId }]);
      const own = await ctx.call("POST", "/api/core/claim/proven", tokenB, await provenBody(USER_B, ACCOUNTS.b));
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      const refresh = await ctx.call("POST", "/api/core/claim/proven", tokenA, await provenBody(USER_A, ACCOUNTS.a));
      expect(refresh.status, JSON.stringify(refresh.body)).toBe(200);
      // The account ids went nowhere: not in any input the chain holds, nor in the api's answers.
      const inputs = JSON.stringify(await ctx.stack().graphql<unknown>("{ inputs(first: 1000) { edges { node { payload notices { edges { node { payload } } } reports { edges { node { payload } } } } } } }"));
      for (const account of Object.values(ACCOUNTS)) {
        for (const text of [inputs, JSON.stringify([first.body, stolen.body, own.body, refresh.body])]) {
          expect(text).not.toContain(account);
          expect(text).not.toContain(stringToHex(account).slice(2));
        }
      }
    });

    it("is refused before anything is sent: no nullifier, a nullifier for a schema that takes none, claims that read the account elsewhere, a provider whose answer names no account", async () => {
      const tokenB = await tokenFor("user", USER_B);
      const before = await ctx.ownerAttestationCount(USER_B);
      const missing = await ctx.call("POST", "/api/core/claim/proven", tokenB, await provenBody(USER_B, "acct-0000-0001", { nullifier: false }));
      expect([missing.status, missing.body.error?.code, missing.body.error?.details?.field]).toEqual([400, "INVALID_REQUEST", "nullifier"]);
      const elsewhere = await ctx.call("POST", "/api/core/claim/proven", tokenB, await provenBody(USER_B, "acct-0000-0001", { accountField: "data.currency" }));
      expect([elsewhere.status, elsewhere.body.error?.code]).toEqual([400, "INVALID_REQUEST"]);
      expect(elsewhere.body.error?.message).toBe("The signed claims do not prove the attestation: claim 1: it read the account at data.currency; the schema names its accounts by data.accountId");
      const notUnique = await ctx.call("POST", "/api/core/claim/proven", tokenB, await provenBody(USER_B, "acct-0000-0001", { schema: quorumSchemaId }));
      expect([notUnique.status, notUnique.body.error?.code, notUnique.body.error?.details?.field]).toEqual([400, "INVALID_REQUEST", "nullifier"]);
      // The api's own prover reads the account where the schema says; this provider's answer has none there.
      const throughApi = await ctx.call("POST", "/api/core/claim", tokenB, ctx.claimBody("/balance", { schemaId: uniqueId, proofMode: "reveal" }));
      expect([throughApi.status, throughApi.body.error?.code]).toEqual([502, "ZKTLS_PROOF_FAILED"]);
      expect(String(throughApi.body.error?.details?.reason)).toMatch(/the account for the nullifier: /);
      expect(await ctx.ownerAttestationCount(USER_B)).toBe(before);
    });
  });
}
