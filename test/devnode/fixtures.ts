/** Inputs the devnode suites send: any accepted input will do, so one schema per domain. */
export function schemaInput(domain: string): { type: string; params: Record<string, unknown> } {
  return {
    type: "register_schema",
    params: {
      provider: "http",
      flowType: "balance",
      domain,
      bucketDefinitions: { balance: { boundaries: [0, 100, 1000], labels: ["low", "mid", "high"] } },
      dataKeys: ["balance"],
      freshnessHalfLife: 3600,
    },
  };
}
