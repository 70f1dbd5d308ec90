/**
 * The v2 JSON-RPC's application object, without a chain: its `consensus_type` names the consensus contract
 * the application is under, as the node's schema spells it (AUTHORITY, QUORUM).
 */
import { afterAll, describe, expect, it } from "vitest";
import { V2_DEFAULTS } from "../../devnode/config.ts";
import type { ConsensusKind, V2ApplicationState } from "../../devnode/v2/application.ts";
import { V2Store } from "../../devnode/v2/record.ts";
import { applicationObject } from "../../devnode/v2/rpc-objects.ts";

const store = new V2Store(":memory:");
afterAll(() => store.close());

function applicationUnder(consensus: ConsensusKind): Record<string, unknown> {
  const applicationState: V2ApplicationState = {
    application: V2_DEFAULTS.applicationAddress,
    authority: V2_DEFAULTS.authorityAddress,
    consensus,
    members: [],
    memberId: 0,
    inputBox: V2_DEFAULTS.inputBoxAddress,
    epochLength: 1,
    canClaim: false,
    deployed: false,
  };
  return applicationObject({ store, epochs: { applicationState }, model: { processedInputCount: 0 }, applicationName: "attestation" }) as Record<string, unknown>;
}

describe("the v2 JSON-RPC application object", () => {
  it.each([
    ["authority", "AUTHORITY"],
    ["quorum", "QUORUM"],
  ] as const)("under %s says consensus_type %s, at the consensus contract's address", (kind, type) => {
    expect(applicationUnder(kind)).toMatchObject({ consensus_type: type, iconsensus_address: V2_DEFAULTS.authorityAddress });
  });
});
