/**
 * The v1 validator's claims (devnode/validator.ts does the checking): the History's claim n of the
 * application names its inputs (first..last) and an epoch hash, which this node builds over its own
 * record of those inputs once its dapp has processed them. A claim over inputs the InputBox does not
 * hold is refused at once rather than waited on (devnode/validator.ts says why).
 */
import type { DevnodeStore } from "../store.ts";
import type { ClaimBook, ClaimOnChain } from "../validator.ts";
import type { ApplicationAddresses, V1Application } from "./application.ts";
import { buildEpochTree } from "./epochs.ts";

interface V1Claim extends ClaimOnChain {
  firstInput: number;
  lastInput: number;
}

/** v1: the History's claims, each naming its inputs; the epoch hash built over this node's record of them. */
export function historyClaims(
  store: DevnodeStore,
  chain: Pick<V1Application, "claim" | "inputsOnChain">,
  application: ApplicationAddresses,
  /** How many inputs the dapp has finished (in index order). */
  processedInputs: () => number,
): ClaimBook<V1Claim> {
  return {
    rollups: "v1",
    hashName: "epoch hash",
    async claim(index) {
      const claim = await chain.claim(application, index);
      return claim === undefined ? undefined : { hash: claim.epochHash, firstInput: claim.firstInput, lastInput: claim.lastInput, lastBlock: null };
    },
    async judge({ firstInput, lastInput }) {
      const processed = processedInputs();
      if (processed > lastInput) return { kind: "computed", firstInput, lastInput, computed: buildEpochTree(store, firstInput, lastInput).epochHash };
      // Inputs only ever get added, so a count read after the claim that falls short means they were not
      // there when it was made either.
      const inputsOnChain = await chain.inputsOnChain(application);
      if (inputsOnChain <= lastInput) return { kind: "inputs-not-on-chain", firstInput, lastInput, inputsOnChain };
      return { kind: "wait", waiting: { lastInput, processedInputs: processed } };
    },
    describe: (_claim, first, last) => `inputs ${first}..${last}`,
  };
}
