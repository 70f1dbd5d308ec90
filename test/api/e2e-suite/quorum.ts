/**
 * The suite under a Quorum (`--quorum N`, docs/quorum.md): the proofs the api hands out verify on chain
 * through Application.validateOutput, whose consensus is Cartesi's Quorum, against a root a majority of
 * its members voted for; the api's status names the Quorum, its members and their votes.
 */
import type { Address, Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { isV2Proof } from "../../../client/index.ts";
import { v2Abi } from "../../../devnode/v2/contracts.ts";
import { tokenFor } from "../../support/api-fixtures.ts";
import type { SuiteContext } from "./context.ts";

export function quorumTests(ctx: SuiteContext): void {
  describe("a Quorum claims the epochs", () => {
    it("a proof the api serves verifies on chain against a root the Quorum accepted on a majority's votes; the status says so", async () => {
      ctx.provider.route("/balance", { kind: "json", value: { data: { balance: "5000", currency: "EUR" } } });
      const owner = privateKeyToAccount(generatePrivateKey()).address.toLowerCase() as Hex;
      const client = ctx.asClient(ctx.anon.withToken(await tokenFor("user", owner)));
      const claimed = await client.claim(ctx.claimFor("/balance"));
      expect((await fetch(`${ctx.stack.urls.node}/epoch/close`, { method: "POST" })).status).toBe(200);
      const found = await ctx.asClient(ctx.anon).attestationProof(claimed.claimId);
      if (!isV2Proof(found)) throw new Error(`a v2 proof expected, got ${JSON.stringify(found)}`);
      const chain = ctx.stack.client.publicClient;
      const proof = { outputIndex: BigInt(found.proof.outputIndex), outputHashesSiblings: found.proof.outputHashesSiblings };
      await expect(chain.readContract({ address: found.applicationAddress, abi: v2Abi("Application"), functionName: "validateOutput", args: [found.output, proof] })).resolves.toBeUndefined();
      const consensus = (await ctx.asClient(ctx.anon).status()).consensus;
      const validator = (await chain.readContract({ address: found.applicationAddress, abi: v2Abi("Application"), functionName: "getOutputsMerkleRootValidator" })) as Address;
      expect(consensus).toMatchObject({ kind: "quorum", address: validator.toLowerCase(), needed: Math.floor(ctx.quorum / 2) + 1, wrongVotes: [], waiting: [], reason: null });
      expect(consensus?.members).toHaveLength(ctx.quorum);
      // Each accepted epoch: a majority voted for the accepted root, and nobody for another.
      const accepted = consensus?.epochs.filter((e) => e.accepted !== null) ?? [];
      expect(accepted.length).toBeGreaterThan(0);
      for (const epoch of accepted) {
        const votes = Object.values(epoch.votes);
        expect(votes.length).toBeGreaterThanOrEqual(consensus?.needed ?? Infinity);
        expect(new Set(votes)).toEqual(new Set([epoch.accepted]));
        expect(epoch.computed).toBe(epoch.accepted);
      }
    });
  });
}
